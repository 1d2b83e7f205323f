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


_BINARY_DOC = """{title}
{note}
    Args:
      x: an integer tensor (int8 ... int64, uint8 ... uint64).
      y: an integer tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.bitwise.{name}(tf.constant({x}), {y}).numpy()
      array({out}, dtype=int32)
    """
_CLAMPED = "\n    Shift amounts outside [0, bits - 1] are clamped into that range.\n"


def _binary_function(op, name: str, title: str, x: str, y: int, out: str, note: str = ""):
    """tf.bitwise.<name> applying the binary `op`, documented by `_BINARY_DOC`."""
    def function(x, y, name=None) -> Tensor:
        return apply_op(op, [x, y], name=name).outputs[0]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = _BINARY_DOC.format(title=title, note=note, name=name, x=x, y=y, out=out)
    return tf_export(f"bitwise.{name}")(function)


bitwise_and = _binary_function(BitwiseAnd, "bitwise_and",
                               "Elementwise bitwise and of two integer tensors.", "[12, 10]", 6,
                               "[4, 2]")
bitwise_or = _binary_function(BitwiseOr, "bitwise_or",
                              "Elementwise bitwise or of two integer tensors.", "[12, 10]", 1,
                              "[13, 11]")
bitwise_xor = _binary_function(BitwiseXor, "bitwise_xor",
                               "Elementwise bitwise exclusive or of two integer tensors.",
                               "[12, 10]", 6, "[10, 12]")
left_shift = _binary_function(
    LeftShift, "left_shift",
    "Elementwise `x << y`; the bits shifted out are lost (the value wraps in the type).",
    "[1, 3]", 2, "[ 4, 12]", _CLAMPED)
right_shift = _binary_function(
    RightShift, "right_shift", "Elementwise `x >> y`: arithmetic for signed types (the sign is "
    "kept), logical for unsigned.", "[-8, 12]", 2, "[-2,  3]", _CLAMPED)


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
