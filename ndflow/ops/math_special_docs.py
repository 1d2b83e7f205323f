"""The docstrings of math_special.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "lgamma": """The log of the absolute value of the Gamma function, elementwise.

    inf at the non-positive integers.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.lgamma([1.0, 4.0]).numpy()
      array([0.       , 1.7917595], dtype=float32)
    """,
    "digamma": """The digamma function, the derivative of lgamma, elementwise.

    NaN at the non-positive integers.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.digamma([1.0]).numpy()
      array([-0.5772159], dtype=float32)
    """,
    "polygamma": """The a-th derivative of the digamma function, elementwise.

    NaN unless `a` is an integer >= 0.

    Args:
      a: a float tensor of orders (integer values).
      x: a tensor of a's dtype, broadcastable against `a`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape.

    Example:
      >>> float(tf.math.polygamma(0.0, 1.0))
      -0.5772159099578857
    """,
    "zeta": """The Hurwitz zeta function, the sum over n >= 0 of (q + n) ** -x, elementwise.

    Args:
      x: a float tensor of exponents (> 1 for convergence).
      q: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape.

    Example:
      >>> float(tf.math.zeta(2.0, 1.0))
      1.644934058189392
    """,
    "igamma": """The regularized lower incomplete gamma function P(a, x), elementwise.

    Args:
      a: a float tensor (> 0).
      x: a tensor of a's dtype (>= 0), broadcastable against `a`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape, in [0, 1].

    Example:
      >>> float(tf.math.igamma(1.0, 1.0))
      0.6321204304695129
    """,
    "igammac": """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Args:
      a: a float tensor (> 0).
      x: a tensor of a's dtype (>= 0), broadcastable against `a`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape, in [0, 1].

    Example:
      >>> float(tf.math.igammac(1.0, 1.0))
      0.36787939071655273
    """,
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
    "erfc": """The complementary error function 1 - erf(x), accurate for large x.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.erfc([0.0]).numpy()
      array([1.], dtype=float32)
    """,
    "erfinv": """The inverse of the error function, elementwise.

    +-inf at +-1, NaN outside [-1, 1].

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.erfinv([0.0, 0.5]).numpy()
      array([0.        , 0.47693628], dtype=float32)
    """,
    "ndtri": """The inverse of the standard normal CDF (the quantile function), elementwise.

    -inf at 0, inf at 1, NaN outside [0, 1].

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.ndtri([0.5, 0.975]).numpy()
      array([0.       , 1.9599644], dtype=float32)
    """,
    "erfcinv": """The inverse of the complementary error function, elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.erfcinv([1.0]).numpy()
      array([-0.], dtype=float32)
    """,
    "xlogy": """Elementwise x * log(y), with 0 wherever x is 0 (whatever y is).

    Args:
      x: a float tensor (half, float32, float64 or complex).
      y: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape.

    Example:
      >>> tf.math.xlogy([0.0, 2.0], [0.0, np.e]).numpy()
      array([0.       , 1.9999999], dtype=float32)
    """,
    "xdivy": """Elementwise x / y, with 0 wherever x is 0 (whatever y is).

    Args:
      x: a float tensor (half, float32, float64 or complex).
      y: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape.

    Example:
      >>> tf.math.xdivy([0.0, 1.0], [0.0, 2.0]).numpy()
      array([0. , 0.5], dtype=float32)
    """,
    "xlog1py": """Elementwise x * log1p(y), with 0 wherever x is 0 (whatever y is).

    Args:
      x: a float tensor (half, float32, float64 or complex).
      y: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape.

    Example:
      >>> tf.math.xlog1py([0.0, 1.0], [-1.0, 0.0]).numpy()
      array([0., 0.], dtype=float32)
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
    "bessel_i0": """The modified Bessel function of the first kind, order 0, elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> round(float(tf.math.bessel_i0(1.0)), 4)
      1.2661
    """,
    "bessel_i1": """The modified Bessel function of the first kind, order 1, elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.bessel_i1([0.0]).numpy()
      array([0.], dtype=float32)
    """,
    "bessel_i0e": """The exponentially scaled modified Bessel function exp(-|x|) * i0(x).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> round(float(tf.math.bessel_i0e(1.0)), 4)
      0.4658
    """,
    "bessel_i1e": """The exponentially scaled modified Bessel function exp(-|x|) * i1(x).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.bessel_i1e([0.0]).numpy()
      array([0.], dtype=float32)
    """,
    "bessel_j0": """The Bessel function of the first kind, order 0, elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_j0([0.0]).numpy()
      array([1.], dtype=float32)
    """,
    "bessel_j1": """The Bessel function of the first kind, order 1, elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_j1([0.0]).numpy()
      array([0.], dtype=float32)
    """,
    "bessel_y0": """The Bessel function of the second kind, order 0, elementwise (x > 0).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_y0([1.0]).numpy()
      array([0.08825695], dtype=float32)
    """,
    "bessel_y1": """The Bessel function of the second kind, order 1, elementwise (x > 0).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_y1([1.0]).numpy()
      array([-0.7812128], dtype=float32)
    """,
    "bessel_k0": """The modified Bessel function of the second kind, order 0, elementwise (x > 0).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_k0([1.0]).numpy()
      array([0.42102447], dtype=float32)
    """,
    "bessel_k1": """The modified Bessel function of the second kind, order 1, elementwise (x > 0).

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_k1([1.0]).numpy()
      array([0.6019073], dtype=float32)
    """,
    "bessel_k0e": """The exponentially scaled modified Bessel function exp(x) * k0(x), elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_k0e([1.0]).numpy()
      array([1.1444632], dtype=float32)
    """,
    "bessel_k1e": """The exponentially scaled modified Bessel function exp(x) * k1(x), elementwise.

    Args:
      x: a float tensor (half, float32 or float64).
      name: optional name for the operation.

    Returns:
      A tensor of x's shape and dtype.

    Example:
      >>> tf.math.special.bessel_k1e([1.0]).numpy()
      array([1.6361537], dtype=float32)
    """,
    "nextafter": """The next representable floating-point value after x1 toward x2, elementwise.

    Args:
      x1: a float32 or float64 tensor.
      x2: a tensor of x1's dtype, broadcastable against `x1`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x1's dtype.

    Example:
      >>> float(tf.math.nextafter(1.0, 2.0)) > 1.0
      True
    """,
}
