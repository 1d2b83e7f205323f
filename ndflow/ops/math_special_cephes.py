"""tf.math.special's Cephes integrals: Dawson's integral (Dawsn), the exponential integral Ei
(Expint), the Fresnel integrals (FresnelCos, FresnelSin) and Spence's integral (Spence).

TensorFlow's op names and attr (T in half, bfloat16, float, double, though TensorFlow has
kernels for float and double only); public names under tf.math.special, each op inside a name
scope of the function's name (`dawsn/Dawsn`), as TF's wrappers build it. Gradients are in
math_special_cephes_grad.py, kernels in kernels/math_special_cephes.py.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.arithmetic import FLOAT
from ndflow.ops.comparison import unchanged_shape
from ndflow.ops.op_def import op_def


def _unary(name):
    return op_def(name, inputs=["x: T"], outputs=["y: T"], attrs=[FLOAT], shape=unchanged_shape)


Dawsn, Expint = _unary("Dawsn"), _unary("Expint")
FresnelCos, FresnelSin = _unary("FresnelCos"), _unary("FresnelSin")
Spence = _unary("Spence")


def _special(op, fname: str, doc: str):
    def fn(x, name=None) -> Tensor:
        with name_scope(name, fname):
            return apply_op(op, [x]).outputs[0]
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"`tf.math.special.{fname}`: {doc}"
    return tf_export(f"math.special.{fname}")(fn)


dawsn = _special(Dawsn, "dawsn", "Dawson's integral, exp(-x**2) * integral from 0 to x of "
                 "exp(t**2) dt (odd in x).")
expint = _special(Expint, "expint", "the exponential integral Ei(x), the principal value of "
                  "the integral from -inf to x of exp(t) / t dt (-inf at 0, NaN for x < 0).")
fresnel_cos = _special(FresnelCos, "fresnel_cos", "the Fresnel cosine integral, the integral "
                       "from 0 to x of cos(pi/2 t**2) dt (odd in x).")
fresnel_sin = _special(FresnelSin, "fresnel_sin", "the Fresnel sine integral, the integral "
                       "from 0 to x of sin(pi/2 t**2) dt (odd in x).")
spence = _special(Spence, "spence", "Spence's integral, the integral from 1 to x of "
                  "log(t) / (1 - t) dt, which is the dilogarithm Li2(1 - x) (NaN for x < 0).")
