"""Gradients of Complex, Real, Imag, Conj, ComplexAbs and Angle (TF's math_grad.py).

TensorFlow's convention for a complex input z = x + iy of a real loss L: the gradient is
dL/dx + i dL/dy (so Real's gradient is complex(g, 0) and Imag's complex(0, g)), and the ops
of math_grad multiply by the conjugate of the other operand.
"""

from __future__ import annotations

from ndflow.core.scopes import control_dependencies
from ndflow.ops import array_fill
from ndflow.ops import complex_ops as cx
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import div_no_nan, multiply, negative, reciprocal
from ndflow.ops.math_grad import reduce_gradient_args


@cx.Complex.def_grad
def _complex_grad(op, grad):
    x, y = op.inputs
    return list(reduce_gradient_args(x, y, cx.real(grad), cx.imag(grad)))


@cx.Real.def_grad
def _real_grad(op, grad):
    return [cx.complex(grad, convert_to_tensor(0, grad.dtype))]


@cx.Imag.def_grad
def _imag_grad(op, grad):
    return [cx.complex(convert_to_tensor(0, grad.dtype), grad)]


@cx.Conj.def_grad
def _conj_grad(op, grad):
    return [cx.conj(grad)]


@cx.ComplexAbs.def_grad
def _complex_abs_grad(op, grad):
    # grad * z / |z|, and 0 at z = 0
    z, r = op.inputs[0], op.outputs[0]
    return [div_no_nan(multiply(cx.complex(grad, array_fill.zeros_like(grad)), z),
                       cx.complex(r, array_fill.zeros_like(r)))]


@cx.Angle.def_grad
def _angle_grad(op, grad):
    # -grad / (imag + i real) = -grad / (i conj(z))
    x = op.inputs[0]
    with control_dependencies([grad]):
        z = reciprocal(cx.complex(cx.imag(x), cx.real(x)))
        complex_grad = cx.complex(grad, convert_to_tensor(0, grad.dtype))
        return [multiply(negative(complex_grad), z)]
