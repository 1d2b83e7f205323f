"""Sparse reads and writes of resource variables (TensorFlow's resource_variable_ops):
ResourceGather (a gather straight from the variable: no read of the whole table; its gradient
is IndexedSlices for the variable), VariableShape, and the ResourceScatter* updates, which
touch only the rows they name."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.ops import array_core, array_slicing
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.op_def import op_def


def handle_shape(t) -> TensorShape:
    """The static shape of the variable behind resource handle `t` (unknown if not known)."""
    op = getattr(t, "op", None)
    if op is None:  # eager: the handle's value is the runtime Resource
        shape = getattr(getattr(t, "value", None), "shape", None)
    elif op.type == "VarHandleOp":
        shape = op.attrs.get("shape")
    else:  # a captured handle (a Placeholder): see known_variable_shape
        shape = None
    try:
        return as_shape(shape) if shape is not None else TensorShape(None)
    except (TypeError, ValueError):
        return TensorShape(None)


def known_variable_shape(handle) -> TensorShape:
    """The shape of the variable behind `handle` as TF's handle data holds it: also for a
    function's captured handle (the captured variable's), which the update ops' shape
    functions do not read (TF checks those at run time)."""
    op = getattr(handle, "op", None)
    if op is not None and op.type == "Placeholder" and hasattr(op.graph, "external_of"):
        external = op.graph.external_of(handle)
        return TensorShape(None) if external is None else known_variable_shape(external)
    return handle_shape(handle)


def _gather_shape(ctx):
    """indices' shape + the variable's row shape (past `batch_dims`), where the handle's
    variable shape is known (TF's shape function reads it from the handle data)."""
    handle = ctx._inputs[0]
    params = known_variable_shape(handle) if hasattr(handle, "op") else TensorShape(None)
    indices, batch_dims = ctx.shapes[1], ctx.attrs.get("batch_dims", 0)
    if params.rank is None or indices.rank is None or batch_dims != 0:
        return [TensorShape(None)]
    return [TensorShape(list(indices.dims) + list(params.dims[1:]))]


ResourceGather = op_def(
    "ResourceGather", inputs=["resource: resource", "indices: Tindices"],
    outputs=["output: dtype"],
    attrs=["batch_dims: int = 0", "validate_indices: bool = true", "dtype: type",
           "Tindices: {int32, int64}"], shape=_gather_shape, stateful=True)

VariableShape = op_def(
    "VariableShape", inputs=["input: resource"], outputs=["output: out_type"],
    attrs=["out_type: {int32, int64} = DT_INT32"], shape=lambda ctx: [TensorShape([None])],
    stateful=True, not_differentiable=True)


def _scatter(name: str):
    return op_def(name, inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
                  attrs=["dtype: type", "Tindices: {int32, int64}"],
                  shape=lambda ctx: [], stateful=True, gradient_undefined=True)


ResourceScatterAdd = _scatter("ResourceScatterAdd")
ResourceScatterSub = _scatter("ResourceScatterSub")
ResourceScatterMul = _scatter("ResourceScatterMul")
ResourceScatterDiv = _scatter("ResourceScatterDiv")
ResourceScatterMin = _scatter("ResourceScatterMin")
ResourceScatterMax = _scatter("ResourceScatterMax")
ResourceScatterUpdate = _scatter("ResourceScatterUpdate")

SCATTERS = {"add": ResourceScatterAdd, "sub": ResourceScatterSub, "mul": ResourceScatterMul,
            "div": ResourceScatterDiv, "min": ResourceScatterMin, "max": ResourceScatterMax,
            "update": ResourceScatterUpdate}


def variable_shape(handle, out_type=dtypes.int32, name=None):
    """The variable's shape: a constant where a graph's handle says it fully (TF's
    `variable_shape` reads the handle data), else a VariableShape op."""
    if hasattr(handle, "op"):
        shape = known_variable_shape(handle)
        if shape.is_fully_defined():
            return array_core.constant(shape.as_list(), dtype=out_type, name=name or "Const")
    return apply_op(VariableShape, [handle], {"out_type": out_type}, name=name).outputs[0]


def resource_gather(handle, indices, dtype, name=None):
    indices = convert_to_tensor(indices, dtype_hint=dtypes.int32, name="indices")
    return apply_op(ResourceGather, [handle, indices], {"dtype": dtype}, name=name).outputs[0]


def resource_scatter(kind: str, handle, indices, updates, dtype, name=None):
    indices = convert_to_tensor(indices, dtype_hint=dtypes.int32, name="indices")
    updates = convert_to_tensor(updates, dtype, name="updates")
    return apply_op(SCATTERS[kind], [handle, indices, updates], name=name)


@ResourceGather.def_grad
def _resource_gather_grad(op, grad):
    """TF's _GatherGrad: IndexedSlices of the gathered rows for the variable."""
    handle, indices = op.inputs
    params_shape = variable_shape(handle, dtypes.int64)
    size = array_core.size(indices, out_type=dtypes.int64)
    values_shape = array_slicing.concat([array_core.reshape(size, [1]), params_shape[1:]], 0)
    values = array_core.reshape(grad, values_shape)
    return [IndexedSlices(values, array_core.reshape(indices, [-1]), params_shape), None]
