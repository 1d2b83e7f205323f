"""Trigonometric and hyperbolic ops: Sin ... Atanh and the binary Atan2, with TensorFlow's op
names and public names. Gradients are in math_grad.py, kernels in kernels/math.py.

All but Atan2 also take complex64/complex128, as TensorFlow registers them.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import math_trig_docs
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import FLOAT, FLOAT_COMPLEX
from ndflow.ops.comparison import broadcast_shape, unchanged_shape
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def


def _unary(name, attrs=FLOAT):
    return op_def(name, inputs=["x: T"], outputs=["y: T"], attrs=[attrs], shape=unchanged_shape,
                  tags=[POINTWISE])


def _run(op, *inputs, name=None) -> Tensor:
    return apply_op(op, list(inputs), name=name).outputs[0]


Sin, Cos, Tan = (_unary(n, FLOAT_COMPLEX) for n in ("Sin", "Cos", "Tan"))
Asin, Acos, Atan = (_unary(n, FLOAT_COMPLEX) for n in ("Asin", "Acos", "Atan"))
Sinh, Cosh = _unary("Sinh", FLOAT_COMPLEX), _unary("Cosh", FLOAT_COMPLEX)
Asinh, Acosh, Atanh = (_unary(n, FLOAT_COMPLEX) for n in ("Asinh", "Acosh", "Atanh"))
Atan2 = op_def("Atan2", inputs=["y: T", "x: T"], outputs=["z: T"], attrs=[FLOAT],
               shape=broadcast_shape, tags=[BROADCASTING])


def _function(op):
    """tf.math.<name> (also tf.<name>) applying the unary `op` (math_trig_docs documents it)."""
    public = op.name.lower()

    def function(x, name=None) -> Tensor:
        return _run(op, x, name=name)
    function.__name__ = function.__qualname__ = public
    return tf_export(f"math.{public}", public)(function)


sin, cos, tan = _function(Sin), _function(Cos), _function(Tan)
asin, acos, atan = _function(Asin), _function(Acos), _function(Atan)
sinh, cosh = _function(Sinh), _function(Cosh)
asinh, acosh, atanh = _function(Asinh), _function(Acosh), _function(Atanh)


@tf_export("math.atan2", "atan2")
def atan2(y, x, name=None) -> Tensor:
    """The angle of the point (x, y) from the positive x axis, elementwise: atan(y / x) by quadrant.

    Args:
      y: a float tensor (bfloat16, half, float32 or float64).
      x: a tensor of y's dtype, broadcastable against `y`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and y's dtype, in radians in [-pi, pi].

    Example:
      >>> tf.math.atan2([1.0, 1.0], [1.0, -1.0]).numpy()
      array([0.7853982, 2.3561945], dtype=float32)
    """
    return _run(Atan2, y, x, name=name)


attach(globals(), math_trig_docs.DOCS)
