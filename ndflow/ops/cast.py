"""Cast: converting a tensor to another dtype (`tf.cast`, `tf.compat.v1.to_float` & co).

Its own family at the bottom of the op families because every other family converts dtypes
(range's mixed-type arguments, int64 slice indices, float gradients of a cast).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes, narrow_dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import cast_docs
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.comparison import unchanged_shape
from ndflow.ops.op_def import POINTWISE, op_def

# TF's Cast takes any type; the pairs it has kernels for are narrow_dtypes.cast_supported's
# (others fail when the kernel is made: UnimplementedError "Cast string to float ...")
Cast = op_def("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
              attrs=["SrcT: type", "DstT: type", "Truncate: bool = false"],
              shape=unchanged_shape, tags=[POINTWISE])


@Cast.def_constant_value
def _cast_value(t):
    v = constant_value(t.op.inputs[0])
    dst = t.op.attrs["DstT"]
    if v is None or dst.np_dtype is None or narrow_dtypes.is_extra(dst) or \
            narrow_dtypes.is_extra(t.op.attrs["SrcT"]):
        return None   # the kernel's rules (wrapping, unsupported pairs), not NumPy's
    return np.asarray(v).astype(dst.np_dtype)


def cast(x, dtype, name=None) -> Tensor:
    """`x` converted to `dtype` (floats to ints truncate toward zero): ndflow's own, which
    makes a Python value a tensor of `dtype` directly (`cast(0.1, float64)` is exact)."""
    dtype = dtypes.as_dtype(dtype)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype_hint=dtype)
    if x.dtype is dtype:
        return x
    return apply_op(Cast, [x], {"DstT": dtype}, name=name or "Cast").outputs[0]


@tf_export("cast", "dtypes.cast")
def tf_cast(x, dtype, name=None) -> Tensor:
    """`tf.cast`: as TF, a Python value becomes a tensor of its own type first
    (`tf.cast(0.1, tf.float64)` is float32's 0.1), named `Cast/x` in a graph."""
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, Tensor) and x.dtype is dtype:
        return x
    if context.executing_eagerly():
        return cast(convert_to_tensor(x), dtype, name)
    with name_scope(name, "Cast") as scope:
        x = convert_to_tensor(x, name="x")
        return x if x.dtype is dtype else cast(x, dtype, scope)


def cast_to(dtype, public: str, default_name: str):
    """The TF1 function tf.compat.v1.<public>: `cast(x, dtype)`, named `default_name`."""
    def to(x, name=default_name) -> Tensor:
        return cast(x, dtype, name=name)
    to.__name__ = to.__qualname__ = public
    article = "An" if dtype.name[0] in "aeiou" else "A"
    to.__doc__ = cast_docs.CAST_TO.format(public=public, dtype=dtype.name, article=article)
    return tf_export(v1=[public])(to)


to_float = cast_to(dtypes.float32, "to_float", "ToFloat")
to_double = cast_to(dtypes.float64, "to_double", "ToDouble")
to_int32 = cast_to(dtypes.int32, "to_int32", "ToInt32")
to_int64 = cast_to(dtypes.int64, "to_int64", "ToInt64")

attach(globals(), cast_docs.DOCS)
