"""Special functions: Lgamma, Digamma, Polygamma, Zeta, the regularized incomplete gamma
functions Igamma/Igammac (and IgammaGradA, their derivative in `a`), Erfc, Erfinv, Ndtri, the
modified Bessel functions BesselI0/I1 (and exponentially scaled I0e/I1e), NextAfter, the x * f(y)
ops Xlogy, Xdivy, Xlog1py (0 wherever x is 0, as TensorFlow defines them), and the composites
`erfcinv` and `lbeta`.

TensorFlow's op names, attrs and public names; real types only (TensorFlow also registers
complex types for Xlogy/Xdivy/Xlog1py). Gradients are in math_special_grad.py, kernels in
kernels/math_special.py.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import math_special_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import FLOAT, multiply, negative, subtract
from ndflow.ops.comparison import broadcast_shape, unchanged_shape
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def
from ndflow.ops.reduction import reduce_sum

_F32_64 = "T: {float, double}"


def _unary(name):
    return op_def(name, inputs=["x: T"], outputs=["y: T"], attrs=[FLOAT], shape=unchanged_shape,
                  tags=[POINTWISE])


def _binary(name, a, b, attrs=FLOAT, **flags):
    return op_def(name, inputs=[f"{a}: T", f"{b}: T"], outputs=["z: T"], attrs=[attrs],
                  shape=broadcast_shape, tags=[BROADCASTING], **flags)


def _run(op, *inputs, name=None) -> Tensor:
    return apply_op(op, list(inputs), name=name).outputs[0]


def _scoped(op, default, *inputs, name=None) -> Tensor:
    """The op inside a name scope (`erfinv/Erfinv`), as TF's Python wrappers build it."""
    with name_scope(name, default):
        return _run(op, *inputs)


Lgamma, Digamma = _unary("Lgamma"), _unary("Digamma")
Erfc, Erfinv, Ndtri = _unary("Erfc"), _unary("Erfinv"), _unary("Ndtri")
Polygamma = _binary("Polygamma", "a", "x", _F32_64)
Zeta = _binary("Zeta", "x", "q", _F32_64)
Igamma, Igammac = _binary("Igamma", "a", "x"), _binary("Igammac", "a", "x")
IgammaGradA = _binary("IgammaGradA", "a", "x", _F32_64, gradient_undefined=True)


def betainc_mismatch(shapes) -> str | None:
    """The Betainc kernel's complaint about its operands' shapes (a scalar goes with any)."""
    named = dict(zip("abx", shapes))
    for p, q in (("a", "b"), ("a", "x"), ("b", "x")):
        sp_, sq = named[p], named[q]
        if sp_.rank and sq.rank and sp_.is_fully_defined() and sq.is_fully_defined() \
                and sp_ != sq:
            return f"Shapes of {p} and {q} are inconsistent: {fmt(sp_)} vs. {fmt(sq)}"
    return None


def _betainc_shape(ctx):
    """TF's rule: a scalar operand goes with any shape; the others must be the same shape."""
    if context.executing_eagerly():
        message = betainc_mismatch(ctx.shapes)
        if message:
            raise ValueError(message)
    out = TensorShape(None)
    for shape in ctx.shapes:
        if shape.rank == 0:
            continue
        if out.rank is not None and shape.rank is not None and out.rank != shape.rank:
            raise ValueError(f"Shapes must be equal rank, but are {out.rank} and {shape.rank}")
        try:
            out = out.merge_with(shape)
        except ValueError:
            raise ValueError(f"Shapes {fmt(out)} and {fmt(shape)} are incompatible") from None
    if out.rank is None and all(shape.rank == 0 for shape in ctx.shapes):
        out = TensorShape([])
    return [out]


Betainc = op_def("Betainc", inputs=["a: T", "b: T", "x: T"], outputs=["z: T"],
                 attrs=[_F32_64], shape=_betainc_shape)
BesselI0, BesselI1 = _unary("BesselI0"), _unary("BesselI1")
BesselI0e, BesselI1e = _unary("BesselI0e"), _unary("BesselI1e")
# tf.math.special's Bessel functions of the first and second kinds and the modified ones of
# the second kind (K, and K scaled by exp(x))
BesselJ0, BesselJ1 = _unary("BesselJ0"), _unary("BesselJ1")
BesselY0, BesselY1 = _unary("BesselY0"), _unary("BesselY1")
BesselK0, BesselK1 = _unary("BesselK0"), _unary("BesselK1")
BesselK0e, BesselK1e = _unary("BesselK0e"), _unary("BesselK1e")
NextAfter = op_def("NextAfter", inputs=["x1: T", "x2: T"], outputs=["output: T"],
                   attrs=["T: {double, float} = DT_FLOAT"], shape=broadcast_shape)
Xlogy, Xdivy, Xlog1py = _binary("Xlogy", "x", "y"), _binary("Xdivy", "x", "y"), \
    _binary("Xlog1py", "x", "y")


@tf_export("math.lgamma", v1=["math.lgamma", "lgamma"])
def lgamma(x, name=None) -> Tensor:
    """`tf.math.lgamma`: log |Gamma(x)| (inf at the non-positive integers)."""
    return _run(Lgamma, x, name=name)


@tf_export("math.digamma", v1=["math.digamma", "digamma"])
def digamma(x, name=None) -> Tensor:
    """`tf.math.digamma`: d/dx lgamma(x) (NaN at the non-positive integers)."""
    return _run(Digamma, x, name=name)


@tf_export("math.polygamma", v1=["math.polygamma", "polygamma"])
def polygamma(a, x, name=None) -> Tensor:
    """`tf.math.polygamma`: the a-th derivative of digamma (NaN unless a is an integer >= 0)."""
    return _run(Polygamma, a, x, name=name)


@tf_export("math.zeta", v1=["math.zeta", "zeta"])
def zeta(x, q, name=None) -> Tensor:
    """`tf.math.zeta`: the Hurwitz zeta function, sum over n of (q + n)**-x."""
    return _run(Zeta, x, q, name=name)


@tf_export("math.igamma", v1=["math.igamma", "igamma"])
def igamma(a, x, name=None) -> Tensor:
    """`tf.math.igamma`: the regularized lower incomplete gamma function P(a, x)."""
    return _run(Igamma, a, x, name=name)


@tf_export("math.igammac", v1=["math.igammac", "igammac"])
def igammac(a, x, name=None) -> Tensor:
    """`tf.math.igammac`: the regularized upper incomplete gamma function 1 - P(a, x)."""
    return _run(Igammac, a, x, name=name)


def igamma_grad_a(a, x, name=None) -> Tensor:
    """`tf.raw_ops.IgammaGradA`: d igamma(a, x) / da."""
    return _run(IgammaGradA, a, x, name=name)


@tf_export("math.betainc", v1=["math.betainc", "betainc"])
def betainc(a, b, x, name=None) -> Tensor:
    """`tf.math.betainc`: the regularized incomplete beta function I_x(a, b). A scalar
    operand goes with tensors of any shape; tensor operands must have the same shape."""
    return _run(Betainc, a, b, x, name=name)


@tf_export("math.erfc", v1=["math.erfc", "erfc"])
def erfc(x, name=None) -> Tensor:
    """`tf.math.erfc`: 1 - erf(x), accurate for large x."""
    return _run(Erfc, x, name=name)


@tf_export("math.erfinv")
def erfinv(x, name=None) -> Tensor:
    """`tf.math.erfinv`: the inverse of erf (+-inf at +-1, NaN outside [-1, 1])."""
    return _scoped(Erfinv, "erfinv", x, name=name)


@tf_export("math.ndtri")
def ndtri(x, name=None) -> Tensor:
    """`tf.math.ndtri`: the inverse of the standard normal CDF."""
    return _scoped(Ndtri, "ndtri", x, name=name)


@tf_export("math.xlogy")
def xlogy(x, y, name=None) -> Tensor:
    """`tf.math.xlogy`: x * log(y), and 0 wherever x is 0 (whatever y is)."""
    return _run(Xlogy, x, y, name=name)


@tf_export("math.xdivy")
def xdivy(x, y, name=None) -> Tensor:
    """`tf.math.xdivy`: x / y, and 0 wherever x is 0 (whatever y is)."""
    return _scoped(Xdivy, "xdivy", x, y, name=name)


@tf_export("math.xlog1py")
def xlog1py(x, y, name=None) -> Tensor:
    """`tf.math.xlog1py`: x * log1p(y), and 0 wherever x is 0 (whatever y is)."""
    return _scoped(Xlog1py, "xlog1py", x, y, name=name)


@tf_export("math.erfcinv")
def erfcinv(x, name=None) -> Tensor:
    """`tf.math.erfcinv`: the inverse of erfc, as TF computes it: -ndtri(x / 2) / sqrt(2)."""
    with name_scope(name, "erfcinv"):  # every op inside the scope, as TF builds it
        x = convert_to_tensor(x, name="start")
        scaled = ndtri(multiply(0.5, x, name="mul"))
        return multiply(negative(scaled), 0.5 ** 0.5, name="mul")


@tf_export("math.lbeta", v1=["math.lbeta", "lbeta"])
def lbeta(x, name=None) -> Tensor:
    """`tf.math.lbeta`: log |Beta| of the last axis: sum(lgamma(x)) - lgamma(sum(x)) (-inf
    for an empty last axis)."""
    with name_scope(name, "lbeta"):  # every op inside the scope, as TF builds it
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = reduce_sum(lgamma(x), axis=[-1])
        log_gamma_sum_x = lgamma(reduce_sum(x, axis=[-1]))
        return subtract(log_prod_gamma_x, log_gamma_sum_x, name="sub")


@tf_export("math.bessel_i0", "math.special.bessel_i0")
def bessel_i0(x, name=None) -> Tensor:
    """`tf.math.bessel_i0`: the modified Bessel function of the first kind, order 0."""
    return _scoped(BesselI0, "bessel_i0", x, name=name)


@tf_export("math.bessel_i1", "math.special.bessel_i1")
def bessel_i1(x, name=None) -> Tensor:
    """`tf.math.bessel_i1`: the modified Bessel function of the first kind, order 1."""
    return _scoped(BesselI1, "bessel_i1", x, name=name)


@tf_export("math.bessel_i0e", "math.special.bessel_i0e")
def bessel_i0e(x, name=None) -> Tensor:
    """`tf.math.bessel_i0e`: exp(-|x|) * bessel_i0(x)."""
    return _scoped(BesselI0e, "bessel_i0e", x, name=name)


@tf_export("math.bessel_i1e", "math.special.bessel_i1e")
def bessel_i1e(x, name=None) -> Tensor:
    """`tf.math.bessel_i1e`: exp(-|x|) * bessel_i1(x)."""
    return _scoped(BesselI1e, "bessel_i1e", x, name=name)


def _special(op, fname: str, doc: str):
    def fn(x, name=None) -> Tensor:
        return _scoped(op, fname, x, name=name)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"`tf.math.special.{fname}`: {doc}"
    return tf_export(f"math.special.{fname}")(fn)


bessel_j0 = _special(BesselJ0, "bessel_j0", "the Bessel function of the first kind, order 0.")
bessel_j1 = _special(BesselJ1, "bessel_j1", "the Bessel function of the first kind, order 1.")
bessel_y0 = _special(BesselY0, "bessel_y0", "the Bessel function of the second kind, order 0.")
bessel_y1 = _special(BesselY1, "bessel_y1", "the Bessel function of the second kind, order 1.")
bessel_k0 = _special(BesselK0, "bessel_k0", "the modified Bessel function of the second kind, "
                     "order 0.")
bessel_k1 = _special(BesselK1, "bessel_k1", "the modified Bessel function of the second kind, "
                     "order 1.")
bessel_k0e = _special(BesselK0e, "bessel_k0e", "exp(x) * bessel_k0(x).")
bessel_k1e = _special(BesselK1e, "bessel_k1e", "exp(x) * bessel_k1(x).")


@tf_export("math.nextafter")
def nextafter(x1, x2, name=None) -> Tensor:
    """`tf.math.nextafter`: the next representable value after x1 towards x2."""
    return _run(NextAfter, x1, x2, name=name)


attach(globals(), math_special_docs.DOCS)
