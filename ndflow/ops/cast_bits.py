"""Reinterpreting and saturating casts: Bitcast (`tf.bitcast`, TF's shape rule for element
size changes) and `tf.dtypes.saturate_cast` (TF's composition: clip to the target range,
nudged into the source type, then Cast)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import real
from ndflow.ops.math import clip_by_value
from ndflow.ops.op_def import op_def

_BITCAST_TYPES = ("{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, "
                  "int8, int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32}")


def _bitcast_shape(ctx):
    x = ctx.shapes[0]
    src, dst = ctx.attrs["T"], ctx.attrs["type"]
    if src.size == dst.size:
        return [x]
    if x.rank is None:
        return [TensorShape(None)]
    if src.size > dst.size:
        return [x.concatenate([src.size // dst.size])]
    if x.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {x.rank}")
    divisor = dst.size // src.size
    last = x[-1]
    if last is not None and last != divisor:
        raise ValueError(f"Cannot bitcast from {src.enum} to {dst.enum} due to shape. {last} "
                         f"does not match {divisor}")
    return [TensorShape(x.as_list()[:-1])]


Bitcast = op_def("Bitcast", inputs=["input: T"], outputs=["output: type"],
                 attrs=["T: " + _BITCAST_TYPES, "type: " + _BITCAST_TYPES],
                 shape=_bitcast_shape, gradient_undefined=True)


@tf_export("bitcast")
def bitcast(input, type, name: str | None = None) -> Tensor:  # noqa: A002
    """Reinterprets the bytes of a tensor as another dtype, without copying values.

    A smaller target type adds a last dimension of size(T) / size(type); a larger one consumes
    a last dimension of size(type) / size(T).

    Args:
      input: a numeric tensor.
      type: the target dtype.
      name: optional name for the operation.

    Returns:
      A tensor of `type`.

    Raises:
      InvalidArgumentError: if the last dimension does not fit the size ratio.

    Example:
      >>> int(tf.bitcast(tf.constant(1.0), tf.int32))
      1065353216
    """
    x = convert_to_tensor(input, name="input")
    return apply_op(Bitcast, [x], {"type": dtypes.as_dtype(type)}, name=name).outputs[0]


def _limits(in_dtype, out_dtype):
    """TF's clip limits: the output range, nudged towards 0 until representable in the
    input type (so the clipped value casts without overflow)."""
    np_dtype = in_dtype.as_numpy_dtype
    try:
        promoted = np.promote_types(np_dtype, out_dtype.as_numpy_dtype)
    except TypeError:
        promoted = float
    lo = np_dtype(np.maximum(in_dtype.min, out_dtype.min))
    if np.array([lo, out_dtype.min], dtype=promoted)[0] < out_dtype.min:
        lo = np.nextafter(lo, np_dtype(0), dtype=np_dtype)
    hi = np_dtype(np.minimum(float(in_dtype.max), float(out_dtype.max)))
    if np.array([hi, out_dtype.max], dtype=promoted)[0] > out_dtype.max:
        hi = np.nextafter(hi, np_dtype(0), dtype=np_dtype)
    return lo, hi


@tf_export("dtypes.saturate_cast", "saturate_cast")
def saturate_cast(value, dtype, name: str | None = None) -> Tensor:
    """`tf.dtypes.saturate_cast`: cast with values clipped to the target type's range."""
    with name_scope(name, "saturate_cast"):
        value = convert_to_tensor(value, name="value")
        dtype = dtypes.as_dtype(dtype)
        in_dtype = value.dtype
        if in_dtype.is_complex:
            if dtype.is_complex:
                rin, rout = in_dtype.real_dtype, dtype.real_dtype
                if rin.min < rout.min or rin.max > rout.max:
                    value = clip_by_value(
                        value, convert_to_tensor(complex(rout.min, rout.min), in_dtype),
                        convert_to_tensor(complex(rout.max, rout.max), in_dtype), name="clamp")
                return cast(value, dtype)
            value = real(value)
            in_dtype = in_dtype.real_dtype
        lo, hi = _limits(in_dtype, dtype.real_dtype)
        value = clip_by_value(value, convert_to_tensor(lo, in_dtype),
                              convert_to_tensor(hi, in_dtype), name="clamp")
        return cast(value, dtype)
