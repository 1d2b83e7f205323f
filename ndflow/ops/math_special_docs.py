"""The docstrings of math_special.py's public functions (attached at its end; see
core/doc_tables.py): one template each for the unary functions of x, the x/y functions and
the incomplete gamma pair, with each function's words and example."""

from __future__ import annotations

from ndflow.core.doc_tables import EXAMPLE, family, note

_UNARY = """{title}
{note}
    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.
""" + EXAMPLE

_BINARY = """{title}
{note}
    Args:
      {a}: {a_is}.
      {b}: a tensor of {a}'s dtype{b_is}, broadcastable against `{a}`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape{result}.
""" + EXAMPLE

_XY = dict(a="x", b="y", a_is="a float tensor (half, float32, float64 or complex)")
_IGAMMA = dict(a="a", b="x", a_is="a float tensor (> 0)", b_is=" (>= 0)", result=", in [0, 1]")

_OTHERS = {
    "betainc": """The regularized incomplete beta function I_x(a, b), elementwise.

    A scalar operand is broadcast to the others' shape; non-scalar operands must have one
    shape.

    Args:
      a: a float tensor (> 0).
      b: a tensor of a's dtype (> 0).
      x: a tensor of a's dtype, in [0, 1].
      name: optional name for the operation.

    Returns:
      A tensor of the operands' shape.

    Raises:
      InvalidArgumentError: if non-scalar operands differ in shape.

    Example:
      >>> float(tf.math.betainc(1.0, 1.0, 0.25))
      0.25
    """,
    "lbeta": """The log of the absolute value of the multivariate Beta function along the last axis.

    Computed as sum(lgamma(x)) - lgamma(sum(x)) over the last axis.

    Args:
      x: a float tensor of rank >= 1.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape without the last axis.

    Example:
      >>> tf.math.lbeta([[1.0, 1.0]]).numpy()
      array([0.], dtype=float32)
    """,
}


def _bessel(name: str, example: str, out: str) -> dict[str, str]:
    """A Bessel function's words, its title read from its name: bessel_<letter><order>[e],
    i and k modified, i and j of the first kind, k and y of the second (x > 0), e scaled."""
    letter, order, scaled = name[7], name[8], name.endswith("e")
    first = letter in "ij"
    if scaled:
        factor = f"exp({'-|x|' if first else 'x'}) * {letter}{order}(x)"
        title = f"The exponentially scaled modified Bessel function {factor}"
        title += "." if first else ", elementwise."
    else:
        what = "modified Bessel function" if letter in "ik" else "Bessel function"
        kind = "first kind" if first else "second kind"
        where = "" if first else " (x > 0)"
        title = f"The {what} of the {kind}, order {order}, elementwise{where}."
    return dict(title=title, example=example, out=out)


def _special(name: str, x: str, out: str) -> dict[str, str]:
    """The words of a tf.math.special Bessel function whose example evaluates it at [x]."""
    return _bessel(name, f"tf.math.special.{name}([{x}]).numpy()", f"array([{out}], dtype=float32)")


_BESSEL = {
    "bessel_i0": _bessel("bessel_i0", "round(float(tf.math.bessel_i0(1.0)), 4)", "1.2661"),
    "bessel_i1": _bessel("bessel_i1", "tf.math.bessel_i1([0.0]).numpy()",
                         "array([0.], dtype=float32)"),
    "bessel_i0e": _bessel("bessel_i0e", "round(float(tf.math.bessel_i0e(1.0)), 4)", "0.4658"),
    "bessel_i1e": _bessel("bessel_i1e", "tf.math.bessel_i1e([0.0]).numpy()",
                          "array([0.], dtype=float32)"),
} | {name: _special(name, x, out) for name, x, out in [
    ("bessel_j0", "0.0", "1."), ("bessel_j1", "0.0", "0."),
    ("bessel_y0", "1.0", "0.08825695"), ("bessel_y1", "1.0", "-0.7812128"),
    ("bessel_k0", "1.0", "0.42102447"), ("bessel_k1", "1.0", "0.6019073"),
    ("bessel_k0e", "1.0", "1.1444632"), ("bessel_k1e", "1.0", "1.6361537"),
]}

DOCS = _OTHERS | family(_UNARY, {
    "lgamma": dict(title="The log of the absolute value of the Gamma function, elementwise.",
                   note=note("inf at the non-positive integers."),
                   example="tf.math.lgamma([1.0, 4.0]).numpy()",
                   out="array([0.       , 1.7917595], dtype=float32)"),
    "digamma": dict(title="The digamma function, the derivative of lgamma, elementwise.",
                    note=note("NaN at the non-positive integers."),
                    example="tf.math.digamma([1.0]).numpy()",
                    out="array([-0.5772159], dtype=float32)"),
    "erfc": dict(title="The complementary error function 1 - erf(x), accurate for large x.",
                 example="tf.math.erfc([0.0]).numpy()", out="array([1.], dtype=float32)"),
    "erfinv": dict(title="The inverse of the error function, elementwise.",
                   note=note("+-inf at +-1, NaN outside [-1, 1]."),
                   example="tf.math.erfinv([0.0, 0.5]).numpy()",
                   out="array([0.        , 0.47693628], dtype=float32)"),
    "ndtri": dict(
        title="The inverse of the standard normal CDF (the quantile function), elementwise.",
        note=note("-inf at 0, inf at 1, NaN outside [0, 1]."),
        example="tf.math.ndtri([0.5, 0.975]).numpy()",
        out="array([0.       , 1.9599644], dtype=float32)"),
    "erfcinv": dict(title="The inverse of the complementary error function, elementwise.",
                    example="tf.math.erfcinv([1.0]).numpy()", out="array([-0.], dtype=float32)"),
    **_BESSEL,
}) | family(_BINARY, {
    "xlogy": dict(_XY, title="Elementwise x * log(y), with 0 wherever x is 0 (whatever y is).",
                  example="tf.math.xlogy([0.0, 2.0], [0.0, np.e]).numpy()",
                  out="array([0.       , 1.9999999], dtype=float32)"),
    "xdivy": dict(_XY, title="Elementwise x / y, with 0 wherever x is 0 (whatever y is).",
                  example="tf.math.xdivy([0.0, 1.0], [0.0, 2.0]).numpy()",
                  out="array([0. , 0.5], dtype=float32)"),
    "xlog1py": dict(_XY, title="Elementwise x * log1p(y), with 0 wherever x is 0 (whatever y is).",
                    example="tf.math.xlog1py([0.0, 1.0], [-1.0, 0.0]).numpy()",
                    out="array([0., 0.], dtype=float32)"),
    "igamma": dict(_IGAMMA, example="float(tf.math.igamma(1.0, 1.0))", out="0.6321204304695129",
                   title="The regularized lower incomplete gamma function P(a, x), elementwise."),
    "igammac": dict(_IGAMMA, example="float(tf.math.igammac(1.0, 1.0))",
                    title="The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).",
                    out="0.36787939071655273"),
    "polygamma": dict(a="a", b="x", a_is="a float tensor of orders (integer values)",
                      title="The a-th derivative of the digamma function, elementwise.",
                      note=note("NaN unless `a` is an integer >= 0."),
                      example="float(tf.math.polygamma(0.0, 1.0))", out="-0.5772159099578857"),
    "zeta": dict(a="x", b="q", a_is="a float tensor of exponents (> 1 for convergence)",
                 title="The Hurwitz zeta function, the sum over n >= 0 of (q + n) ** -x, "
                       "elementwise.",
                 example="float(tf.math.zeta(2.0, 1.0))", out="1.644934058189392"),
    "nextafter": dict(a="x1", b="x2", a_is="a float32 or float64 tensor",
                      title="The next representable floating-point value after x1 toward x2, "
                            "elementwise.",
                      result=" and x1's dtype",
                      example="float(tf.math.nextafter(1.0, 2.0)) > 1.0", out="True"),
}, b_is="", result="")
