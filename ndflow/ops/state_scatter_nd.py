"""N-d scatter updates of resource variables (TF's ResourceScatterNd{Update,Add,Sub,Min,Max}:
`v.scatter_nd_update(indices, updates)`, `tf.compat.v1.scatter_nd_*`) and TF1's functional
`tf.compat.v1.scatter_{update,add,sub,mul,div,min,max}` on variables. Like the row scatters,
they write only the slices they name."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.ops import state_scatter_nd_docs, state_sparse
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def


def _scatter_nd(name: str):
    return op_def(name, inputs=["ref: resource", "indices: Tindices", "updates: T"],
                  attrs=["T: type", "Tindices: {int32, int64}", "use_locking: bool = true",
                         "bad_indices_policy: string = ''"],
                  shape=lambda ctx: [], stateful=True, gradient_undefined=True)


ResourceScatterNdUpdate = _scatter_nd("ResourceScatterNdUpdate")
ResourceScatterNdAdd = _scatter_nd("ResourceScatterNdAdd")
ResourceScatterNdSub = _scatter_nd("ResourceScatterNdSub")
ResourceScatterNdMin = _scatter_nd("ResourceScatterNdMin")
ResourceScatterNdMax = _scatter_nd("ResourceScatterNdMax")

SCATTERS_ND = {"update": ResourceScatterNdUpdate, "add": ResourceScatterNdAdd,
               "sub": ResourceScatterNdSub, "min": ResourceScatterNdMin,
               "max": ResourceScatterNdMax}


def resource_scatter_nd(kind: str, handle, indices, updates, dtype, use_locking: bool = True,
                        name: str | None = None):
    indices = convert_to_tensor(indices, dtype_hint=dtypes.int32, name="indices")
    updates = convert_to_tensor(updates, dtype, name="updates")
    return apply_op(SCATTERS_ND[kind], [handle, indices, updates],
                    {"use_locking": use_locking}, name=name)


def _variable_update(ref, name, make_op):
    """`make_op()` under the variable's graph, then the variable's updated value (eager: the
    variable itself), as TF's `ref._lazy_read(op)`."""
    with ref._home():
        return ref._after_update(make_op(), True)


def _nd(kind: str):
    def scatter_nd(ref, indices, updates, use_locking: bool = True, name: str | None = None):
        return _variable_update(ref, name, lambda: resource_scatter_nd(
            kind, ref.handle, indices, updates, ref.dtype, use_locking, name))
    scatter_nd.__name__ = f"scatter_nd_{kind}"
    scatter_nd.__doc__ = (f"`tf.compat.v1.scatter_nd_{kind}`: ResourceScatterNd"
                          f"{kind.capitalize()} on the variable `ref`; returns its new value.")
    return scatter_nd


def _rows(kind: str):
    def scatter(ref, indices, updates, use_locking: bool = True, name: str | None = None):
        return _variable_update(ref, name, lambda: state_sparse.resource_scatter(
            kind, ref.handle, indices, updates, ref.dtype, name=name))
    scatter.__name__ = f"scatter_{kind}"
    scatter.__doc__ = (f"`tf.compat.v1.scatter_{kind}`: ResourceScatter{kind.capitalize()} of "
                       "the rows `indices` of the variable `ref`; returns its new value.")
    return scatter


scatter_nd_update = tf_export(v1=["scatter_nd_update"])(_nd("update"))
scatter_nd_add = tf_export(v1=["scatter_nd_add"])(_nd("add"))
scatter_nd_sub = tf_export(v1=["scatter_nd_sub"])(_nd("sub"))
scatter_nd_min = _nd("min")
scatter_nd_max = _nd("max")

scatter_update = tf_export(v1=["scatter_update"])(_rows("update"))
scatter_add = tf_export(v1=["scatter_add"])(_rows("add"))
scatter_sub = tf_export(v1=["scatter_sub"])(_rows("sub"))
scatter_mul = tf_export(v1=["scatter_mul"])(_rows("mul"))
scatter_div = tf_export(v1=["scatter_div"])(_rows("div"))
scatter_min = tf_export(v1=["scatter_min"])(_rows("min"))
scatter_max = tf_export(v1=["scatter_max"])(_rows("max"))


attach(globals(), state_scatter_nd_docs.DOCS)
