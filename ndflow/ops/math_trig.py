"""Trigonometric and hyperbolic ops: Sin ... Atanh and the binary Atan2, with TensorFlow's op
names and public names. Gradients are in math_grad.py, kernels in kernels/math.py.

All but Atan2 also take complex64/complex128, as TensorFlow registers them.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
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


@tf_export("math.sin", "sin")
def sin(x, name=None) -> Tensor:
    """Elementwise sine of `x` (radians).

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.sin(tf.constant([0.0, np.pi / 2])).numpy()
      array([0., 1.], dtype=float32)
    """
    return _run(Sin, x, name=name)


@tf_export("math.cos", "cos")
def cos(x, name=None) -> Tensor:
    """Elementwise cosine of `x` (radians).

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.cos(tf.constant([0.0, np.pi])).numpy()
      array([ 1., -1.], dtype=float32)
    """
    return _run(Cos, x, name=name)


@tf_export("math.tan", "tan")
def tan(x, name=None) -> Tensor:
    """Elementwise tangent of `x` (radians).

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.tan(tf.constant([0.0, np.pi / 4])).numpy()
      array([0., 1.], dtype=float32)
    """
    return _run(Tan, x, name=name)


@tf_export("math.asin", "asin")
def asin(x, name=None) -> Tensor:
    """Elementwise inverse sine, in radians in [-pi/2, pi/2].

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype. NaN outside [-1, 1].

    Example:
      >>> tf.math.asin(tf.constant([0.0, 1.0])).numpy()
      array([0.       , 1.5707964], dtype=float32)
    """
    return _run(Asin, x, name=name)


@tf_export("math.acos", "acos")
def acos(x, name=None) -> Tensor:
    """Elementwise inverse cosine, in radians in [0, pi].

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype. NaN outside [-1, 1].

    Example:
      >>> tf.math.acos(tf.constant([1.0, 0.0])).numpy()
      array([0.       , 1.5707964], dtype=float32)
    """
    return _run(Acos, x, name=name)


@tf_export("math.atan", "atan")
def atan(x, name=None) -> Tensor:
    """Elementwise inverse tangent, in radians in (-pi/2, pi/2).

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.atan(tf.constant([0.0, 1.0])).numpy()
      array([0.       , 0.7853982], dtype=float32)
    """
    return _run(Atan, x, name=name)


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


@tf_export("math.sinh", "sinh")
def sinh(x, name=None) -> Tensor:
    """Elementwise hyperbolic sine.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.sinh(tf.constant([0.0, 1.0])).numpy()
      array([0.       , 1.1752012], dtype=float32)
    """
    return _run(Sinh, x, name=name)


@tf_export("math.cosh", "cosh")
def cosh(x, name=None) -> Tensor:
    """Elementwise hyperbolic cosine.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.cosh(tf.constant([0.0, 1.0])).numpy()
      array([1.       , 1.5430806], dtype=float32)
    """
    return _run(Cosh, x, name=name)


@tf_export("math.asinh", "asinh")
def asinh(x, name=None) -> Tensor:
    """Elementwise inverse hyperbolic sine.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.asinh(tf.constant([0.0, 1.0])).numpy()
      array([0.       , 0.8813736], dtype=float32)
    """
    return _run(Asinh, x, name=name)


@tf_export("math.acosh", "acosh")
def acosh(x, name=None) -> Tensor:
    """Elementwise inverse hyperbolic cosine.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype. NaN below 1.

    Example:
      >>> tf.math.acosh(tf.constant([1.0, 2.0])).numpy()
      array([0.      , 1.316958], dtype=float32)
    """
    return _run(Acosh, x, name=name)


@tf_export("math.atanh", "atanh")
def atanh(x, name=None) -> Tensor:
    """Elementwise inverse hyperbolic tangent.

    Args:
      x: a tensor of bfloat16, half, float32, float64, complex64 or complex128.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype. +-inf at +-1, NaN outside [-1, 1].

    Example:
      >>> tf.math.atanh(tf.constant([0.0, 0.5])).numpy()
      array([0.        , 0.54930615], dtype=float32)
    """
    return _run(Atanh, x, name=name)
