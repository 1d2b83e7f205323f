"""The docstrings of math.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations


def _unary(summary: str, call: str, result: str, x: str = "a float tensor.",
           ret: str = "A tensor of x's shape and dtype.", details: str = "",
           arg: str = "x") -> str:
    return f"""{summary}
{details}
    Args:
      {arg}: {x}
      name: optional name for the operation.

    Returns:
      {ret}

    Example:
      >>> {call}
      {result}
    """


_F = "a float tensor (bfloat16, half, float32 or float64)."
_FC = "a float or complex tensor."

DOCS = {
    "abs": _unary("Elementwise absolute value; |a + bj| for complex input.",
                  "tf.abs([-1.5, 2.0]).numpy()", "array([1.5, 2. ], dtype=float32)",
                  "a numeric or complex tensor (or SparseTensor).",
                  "A tensor of x's shape: x's dtype, or the real dtype for complex input."),
    "sign": _unary("Elementwise sign: -1, 0 or 1 (NaN stays NaN; x / |x| for complex x).",
                   "tf.math.sign([-2.0, 0.0, 3.0]).numpy()",
                   "array([-1.,  0.,  1.], dtype=float32)", "a numeric or complex tensor."),
    "square": _unary("Elementwise `x * x`.", "tf.math.square([2, -3]).numpy()",
                     "array([4, 9], dtype=int32)", "a numeric or complex tensor."),
    "sqrt": _unary("Elementwise square root (NaN for negative input).",
                   "tf.math.sqrt([4.0, 9.0]).numpy()", "array([2., 3.], dtype=float32)", _FC),
    "rsqrt": _unary("Elementwise reciprocal square root `1 / sqrt(x)`.",
                    "tf.math.rsqrt([4.0, 16.0]).numpy()", "array([0.5 , 0.25], dtype=float32)",
                    _FC),
    "exp": _unary("Elementwise exponential `e ** x`.", "tf.exp([0.0, 1.0]).numpy()",
                  "array([1.       , 2.7182817], dtype=float32)", _FC),
    "floor": _unary("Elementwise floor: the largest integer value not above x.",
                    "tf.floor([1.7, -1.5]).numpy()", "array([ 1., -2.], dtype=float32)", _F),
    "ceil": _unary("Elementwise ceiling: the smallest integer value not below x.",
                   "tf.math.ceil([1.2, -1.5]).numpy()", "array([ 2., -1.], dtype=float32)", _F),
    "round": _unary("Rounds to the nearest integer value, halves to even (banker's rounding).",
                    "tf.math.round([0.5, 1.5, 2.5]).numpy()",
                    "array([0., 2., 2.], dtype=float32)", "a numeric tensor (integers are "
                    "returned as they are)."),
    "rint": _unary("Rounds to the nearest integer value, halves to even.",
                   "tf.math.rint([0.5, 1.5, -1.7]).numpy()",
                   "array([ 0.,  2., -2.], dtype=float32)", _F),
    "expm1": _unary("Elementwise `exp(x) - 1`, accurate for small x.",
                    "tf.math.expm1([0.0, 1e-5]).numpy()",
                    "array([0.000000e+00, 1.000005e-05], dtype=float32)", _FC),
    "log1p": _unary("Elementwise `log(1 + x)`, accurate for small x.",
                    "tf.math.log1p([0.0, 1e-5]).numpy()",
                    "array([0.00000e+00, 9.99995e-06], dtype=float32)", _FC),
    "softsign": _unary("Elementwise softsign activation `x / (|x| + 1)`.",
                       "tf.math.softsign([1.0, -3.0]).numpy()",
                       "array([ 0.5 , -0.75], dtype=float32)", _F, arg="features"),
    "tanh": _unary("Elementwise hyperbolic tangent.", "tf.math.tanh([0.0]).numpy()",
                   "array([0.], dtype=float32)", _FC),
    "sigmoid": _unary("Elementwise logistic sigmoid `1 / (1 + exp(-x))`.",
                      "tf.math.sigmoid([0.0]).numpy()", "array([0.5], dtype=float32)", _FC),
    "erf": _unary("Elementwise Gauss error function.", "tf.math.erf([0.0, 1.0]).numpy()",
                  "array([0.       , 0.8427008], dtype=float32)", _F),
    "check_numerics": """Passes `tensor` through, failing if it holds a NaN or an infinity.

    Args:
      tensor: a float tensor.
      message: text that starts the error message.
      name: optional name for the operation.

    Returns:
      `tensor` (in a graph, through the CheckNumerics op that checks it when run).

    Raises:
      InvalidArgumentError: if some element is NaN or infinite.

    Example:
      >>> tf.debugging.check_numerics(tf.constant([1.0]), "bad value").numpy()
      array([1.], dtype=float32)
    """,
    "assert_all_finite": """Checks that `x` holds no NaN or infinity and returns it.

    Args:
      x: a float tensor.
      message: text that starts the error message.
      name: optional name scope.

    Returns:
      `x` (in a graph, an identity of it depending on the check).

    Raises:
      InvalidArgumentError: if some element is NaN or infinite.

    Example:
      >>> tf.debugging.assert_all_finite(tf.constant([1.0]), "bad value").numpy()
      array([1.], dtype=float32)
    """,
    "verify_tensor_all_finite": """Checks that a tensor holds no NaN or infinity (TF1 names).

    Args:
      t: the float tensor to check (TF1's name for `x`).
      msg: text that starts the error message (TF1's name for `message`).
      name: optional name scope.
      x: the same as `t`.
      message: the same as `msg`.

    Returns:
      The tensor (in a graph, an identity of it depending on the check).

    Raises:
      InvalidArgumentError: if some element is NaN or infinite.

    Example:
      >>> tf.compat.v1.verify_tensor_all_finite(tf.constant([1.0]), "bad").numpy()
      array([1.], dtype=float32)
    """,
    "clip_by_value": """Limits the values of `t` to [clip_value_min, clip_value_max].

    Args:
      t: a numeric tensor (or IndexedSlices).
      clip_value_min: the lower bound, a scalar or a tensor broadcastable to t's shape.
      clip_value_max: the upper bound, likewise.
      name: optional name for the operation.

    Returns:
      A tensor of t's shape and dtype.

    Raises:
      ValueError, InvalidArgumentError: if the bounds do not broadcast to t's shape.

    Example:
      >>> tf.clip_by_value([1, 5, 9], 2, 6).numpy()
      array([2, 5, 6], dtype=int32)
    """,
    "scalar_mul": """Multiplies a tensor by a scalar.

    Args:
      scalar: a Python number or scalar tensor.
      x: a tensor (or IndexedSlices).
      name: optional name for the operation.

    Returns:
      `scalar * x`, of x's shape and dtype.

    Example:
      >>> tf.math.scalar_mul(2, tf.constant([1.0, 2.0])).numpy()
      array([2., 4.], dtype=float32)
    """,
    "floordiv": """Elementwise floor division `x // y`, rounding toward minus infinity.

    Args:
      x: a numeric tensor.
      y: a tensor of x's dtype, broadcastable against `x`.
      name: optional name for the operation.

    Returns:
      A tensor of the broadcast shape and x's dtype.

    Example:
      >>> tf.math.floordiv([7, -7], 2).numpy()
      array([ 3, -4], dtype=int32)
    """,
    "polyval": """Evaluates the polynomial `coeffs[0] * x**(n-1) + ... + coeffs[n-1]` at `x`.

    Args:
      coeffs: a list of n tensors (or numbers), the coefficients, highest power first.
      x: a tensor of points.
      name: optional name for the operation.

    Returns:
      A tensor of x's shape (Horner's rule; 0 for an empty list).

    Example:
      >>> float(tf.math.polyval([1.0, 0.0, -1.0], 3.0))
      8.0
    """,
    "zero_fraction": """The fraction of the elements of `value` that are zero.

    Args:
      value: a numeric tensor.
      name: optional name for the operation.

    Returns:
      A float32 scalar.

    Example:
      >>> float(tf.math.zero_fraction([0, 1, 0, 3]))
      0.5
    """,
    "is_numeric_tensor": """Whether `tensor` is a Tensor of a numeric dtype (float, int or complex).

    Args:
      tensor: any object.

    Returns:
      A Python bool (False for non-tensors).

    Example:
      >>> tf.debugging.is_numeric_tensor(tf.constant([1.0]))
      True
    """,
    **{name: _unary(f"Whether every element is {op} the next one, in row-major order.",
                    f"bool(tf.math.{name}([1, 1, 2]))", result, x="a numeric tensor.",
                    ret="A scalar boolean tensor (True for fewer than two elements).")
       for name, op, result in (("is_non_decreasing", "<=", "True"),
                                ("is_strictly_increasing", "<", "False"))},
    "reduce_logsumexp": """`log(sum(exp(x)))` over the given axes, computed without overflow.

    Args:
      input_tensor: a float tensor.
      axis: an int or list of ints; None reduces every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      name: optional name for the operation.

    Returns:
      A tensor of input_tensor's dtype and the reduced shape.

    Example:
      >>> float(tf.math.reduce_logsumexp([0.0, 0.0]))
      0.6931471824645996
    """,
    "reduce_logsumexp_v1": """`log(sum(exp(x)))` over the given axes (TF1 signature).

    The arguments are those of `tf.math.reduce_logsumexp`, plus the deprecated aliases
    `reduction_indices` (for `axis`) and `keep_dims` (for `keepdims`).

    Example:
      >>> tf.compat.v1.reduce_logsumexp([[0.0, 0.0]], reduction_indices=1).shape
      TensorShape([1])
    """,
    "count_nonzero": """Counts the nonzero elements over the given axes.

    Args:
      input: a numeric, boolean or string tensor (a string counts when non-empty).
      axis: an int or list of ints; None counts over every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.
      dtype: the result dtype.
      name: optional name for the operation.

    Returns:
      A tensor of `dtype` and the reduced shape.

    Example:
      >>> tf.math.count_nonzero([[0, 1], [2, 3]], axis=1).numpy()
      array([1, 2])
    """,
    "count_nonzero_v1": """Counts the nonzero elements over the given axes (TF1 signature).

    The arguments are those of `tf.math.count_nonzero` (with `input_tensor` for `input`),
    plus the deprecated aliases `reduction_indices`, `keep_dims` and `input`.

    Example:
      >>> tf.compat.v1.count_nonzero([[0, 1], [2, 3]], reduction_indices=1).numpy()
      array([1, 2])
    """,
}
