"""`tf.bitwise`: and, or, xor, invert and the shifts of integer tensors, and the raw op
PopulationCount (TF's ops, not differentiable). Shift amounts are clamped to [0, bits - 1] as
TensorFlow's kernels do, and a left shift wraps in the type (two's complement for signed
types)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.comparison import broadcast_shape, unchanged_shape
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def

_INTS = "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}"


def _binary(name: str, commutative: bool):
    return op_def(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_INTS],
                  shape=broadcast_shape, not_differentiable=True, commutative=commutative,
                  tags=[BROADCASTING])


BitwiseAnd = _binary("BitwiseAnd", True)
BitwiseOr = _binary("BitwiseOr", True)
BitwiseXor = _binary("BitwiseXor", True)
LeftShift = _binary("LeftShift", False)
RightShift = _binary("RightShift", False)
Invert = op_def("Invert", inputs=["x: T"], outputs=["y: T"], attrs=[_INTS],
                shape=unchanged_shape, not_differentiable=True, tags=[POINTWISE])
PopulationCount = op_def("PopulationCount", inputs=["x: T"], outputs=["y: uint8"],
                         attrs=[_INTS], shape=unchanged_shape, not_differentiable=True,
                         tags=[POINTWISE],
                         doc="The number of bits set in each element (`tf.raw_ops` only).")


@tf_export("bitwise.bitwise_and")
def bitwise_and(x, y, name=None) -> Tensor:
    """Elementwise bitwise and of two integer tensors.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.bitwise_and(tf.constant([12, 10]), 6).numpy()
      array([4, 2], dtype=int32)
    """
    return apply_op(BitwiseAnd, [x, y], name=name).outputs[0]


@tf_export("bitwise.bitwise_or")
def bitwise_or(x, y, name=None) -> Tensor:
    """Elementwise bitwise or of two integer tensors.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.bitwise_or(tf.constant([12, 10]), 1).numpy()
      array([13, 11], dtype=int32)
    """
    return apply_op(BitwiseOr, [x, y], name=name).outputs[0]


@tf_export("bitwise.bitwise_xor")
def bitwise_xor(x, y, name=None) -> Tensor:
    """Elementwise bitwise exclusive or of two integer tensors.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.bitwise_xor(tf.constant([12, 10]), 6).numpy()
      array([10, 12], dtype=int32)
    """
    return apply_op(BitwiseXor, [x, y], name=name).outputs[0]


@tf_export("bitwise.invert")
def invert(x, name=None) -> Tensor:
    """Elementwise bitwise not (`~x`): every bit flipped.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.bitwise.invert(tf.constant([0, 5], tf.uint8)).numpy()
      array([255, 250], dtype=uint8)
    """
    return apply_op(Invert, [x], name=name).outputs[0]


@tf_export("bitwise.left_shift")
def left_shift(x, y, name=None) -> Tensor:
    """Elementwise `x << y`; the bits shifted out are lost (the value wraps in the type).

    Shift amounts outside [0, bits - 1] are clamped into that range.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.left_shift(tf.constant([1, 3]), 2).numpy()
      array([ 4, 12], dtype=int32)
    """
    return apply_op(LeftShift, [x, y], name=name).outputs[0]


@tf_export("bitwise.right_shift")
def right_shift(x, y, name=None) -> Tensor:
    """Elementwise `x >> y`: arithmetic for signed types (the sign is kept), logical for unsigned.

    Shift amounts outside [0, bits - 1] are clamped into that range.

    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.right_shift(tf.constant([-8, 12]), 2).numpy()
      array([-2,  3], dtype=int32)
    """
    return apply_op(RightShift, [x, y], name=name).outputs[0]
