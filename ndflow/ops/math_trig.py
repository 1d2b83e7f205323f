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
    """`tf.math.sin`."""
    return _run(Sin, x, name=name)


@tf_export("math.cos", "cos")
def cos(x, name=None) -> Tensor:
    """`tf.math.cos`."""
    return _run(Cos, x, name=name)


@tf_export("math.tan", "tan")
def tan(x, name=None) -> Tensor:
    """`tf.math.tan`."""
    return _run(Tan, x, name=name)


@tf_export("math.asin", "asin")
def asin(x, name=None) -> Tensor:
    """`tf.math.asin`: NaN outside [-1, 1]."""
    return _run(Asin, x, name=name)


@tf_export("math.acos", "acos")
def acos(x, name=None) -> Tensor:
    """`tf.math.acos`: NaN outside [-1, 1]."""
    return _run(Acos, x, name=name)


@tf_export("math.atan", "atan")
def atan(x, name=None) -> Tensor:
    """`tf.math.atan`."""
    return _run(Atan, x, name=name)


@tf_export("math.atan2", "atan2")
def atan2(y, x, name=None) -> Tensor:
    """`tf.math.atan2`: the angle of (x, y), in [-pi, pi], broadcasting."""
    return _run(Atan2, y, x, name=name)


@tf_export("math.sinh", "sinh")
def sinh(x, name=None) -> Tensor:
    """`tf.math.sinh`."""
    return _run(Sinh, x, name=name)


@tf_export("math.cosh", "cosh")
def cosh(x, name=None) -> Tensor:
    """`tf.math.cosh`."""
    return _run(Cosh, x, name=name)


@tf_export("math.asinh", "asinh")
def asinh(x, name=None) -> Tensor:
    """`tf.math.asinh`."""
    return _run(Asinh, x, name=name)


@tf_export("math.acosh", "acosh")
def acosh(x, name=None) -> Tensor:
    """`tf.math.acosh`: NaN below 1."""
    return _run(Acosh, x, name=name)


@tf_export("math.atanh", "atanh")
def atanh(x, name=None) -> Tensor:
    """`tf.math.atanh`: +-inf at +-1, NaN outside [-1, 1]."""
    return _run(Atanh, x, name=name)
