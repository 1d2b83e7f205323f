"""Docstrings of keras.ops.nn's activation functions (nn_functions.py; the losses,
normalizations and attention: nn_docs.py). Attached by `ndflow.keras.docstrings.attach`; the
examples run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import activation as _act

DOCS = {
    "relu": _act("Rectified linear unit", "`max(x, 0)`",
                 example=">>> tf.keras.ops.relu([-1.0, 0.0, 2.0]).numpy()\n"
                         "    array([0., 0., 2.], dtype=float32)"),
    "relu6": _act("ReLU capped at 6", "`min(max(x, 0), 6)`",
                  example=">>> tf.keras.ops.relu6([-1.0, 3.0, 8.0]).numpy()\n"
                          "    array([0., 3., 6.], dtype=float32)"),
    "sigmoid": _act("Logistic sigmoid", "`1 / (1 + exp(-x))`, within (0, 1)",
                    example=">>> tf.keras.ops.sigmoid([0.0]).numpy()\n"
                            "    array([0.5], dtype=float32)"),
    "softplus": _act("Softplus, a smooth ReLU", "`log(1 + exp(x))`"),
    "softsign": _act("Softsign", "`x / (1 + |x|)`, within (-1, 1)"),
    "selu": _act("Scaled exponential linear unit",
                 "`scale * x` for `x > 0`, `scale * alpha * (exp(x) - 1)` otherwise, with "
                 "alpha ~ 1.67326 and scale ~ 1.05070 (self-normalizing networks)"),
    "tanh_shrink": _act("Tanh shrink", "`x - tanh(x)`"),
    "silu": _act("Sigmoid linear unit (swish)", "`x * sigmoid(x)`",
                 example=">>> tf.keras.ops.silu([0.0]).numpy()\n"
                         "    array([0.], dtype=float32)"),
    "swish": _act("Swish, the same function as `silu`", "`x * sigmoid(x)`"),
    "log_sigmoid": _act("Logarithm of the sigmoid", "`-softplus(-x)`, computed stably"),
    "hard_sigmoid": _act("Piecewise-linear sigmoid", "`relu6(x + 3) / 6`: 0 below -3, 1 above "
                         "3", float_only=True,
                         example=">>> tf.keras.ops.hard_sigmoid([-4.0, 0.0, 4.0]).numpy()\n"
                                 "    array([0. , 0.5, 1. ], dtype=float32)"),
    "hard_silu": _act("Hard SiLU (hard swish)", "`x * relu6(x + 3) / 6`", float_only=True),
    "hard_swish": _act("Hard swish, the same function as `hard_silu`",
                       "`x * relu6(x + 3) / 6`", float_only=True),
    "hard_tanh": _act("Hard tanh", "`x` clipped to [-1, 1]", float_only=True),
    "sparse_sigmoid": _act("Sparse sigmoid", "`(x + 1) / 2` clipped to [0, 1]",
                           float_only=True),
    "sparse_plus": _act("SparsePlus", "0 for `x <= -1`, `x` for `x >= 1`, `(x + 1)**2 / 4` "
                        "between", float_only=True),
    "leaky_relu": _act("Leaky ReLU", "`x` for `x > 0`, `negative_slope * x` otherwise", """
      negative_slope: the slope below zero.""").replace(
        "a float tensor or array-like (a Python float list is float32)",
        "a tensor or array-like (ints are computed in floatx)").replace(
        "of `x`'s shape and dtype", "of `x`'s shape"),
    "elu": _act("Exponential linear unit", "`x` for `x > 0`, `alpha * (exp(x) - 1)` otherwise",
                """
      alpha: the scale of the negative part."""),
    "celu": _act("Continuously differentiable ELU",
                 "`max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)`", """
      alpha: the scale of the negative part (nonzero).""", float_only=True),
    "gelu": _act("Gaussian error linear unit", "`x * P(X <= x)` for a standard normal X",
                 """
      approximate: whether to use the tanh approximation
        `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))` (the default) rather
        than the exact erf form.""").replace(
        "Returns:", "Raises:\n      ValueError: `x` is not a float tensor.\n\n    Returns:"),
    "glu": """Gated linear unit: `x` split in two halves `a`, `b` along `axis`, then
    `a * sigmoid(b)`.

    Args:
      x: a float tensor whose size along `axis` is even.
      axis: the axis to split.

    Returns:
      A tensor with half of `x`'s size along `axis`.

    Raises:
      ValueError: the size along `axis` is odd.

    Example:

    >>> tf.keras.ops.glu([[1.0, 0.0]]).numpy()
    array([[0.5]], dtype=float32)
    """,
    "hard_shrink": _act("Hard shrink", "`x` where `|x| > threshold`, 0 elsewhere", """
      threshold: a non-negative float.""", float_only=True),
    "soft_shrink": _act("Soft shrink",
                        "`x - threshold` above `threshold`, `x + threshold` below `-threshold`,"
                        " 0 between", """
      threshold: a non-negative float.""", float_only=True,
                        example=">>> tf.keras.ops.soft_shrink([-2.0, 0.2, 2.0], 1.0).numpy()\n"
                                "    array([-1.,  0.,  1.], dtype=float32)"),
    "threshold": _act("Threshold", "`x` where `x > threshold`, `default_value` elsewhere", """
      threshold: the float threshold.
      default_value: the value for elements at or below it.""",
                      example=">>> tf.keras.ops.threshold([0.5, 2.0], 1.0, 0.0).numpy()\n"
                              "    array([0., 2.], dtype=float32)"),
    "squareplus": _act("Squareplus, a smooth ReLU", "`(x + sqrt(x**2 + b)) / 2`", """
      b: a non-negative smoothness parameter (0 gives ReLU).""", float_only=True),
    "softmax": """Softmax over `axis`: `exp(x)` normalized so each slice sums to 1.

    Args:
      x: a float tensor or array-like of logits.
      axis: an int, a tuple of ints (normalizing over their combined elements), or None
        for all axes.

    Returns:
      A tensor of `x`'s shape and dtype, of probabilities.

    Example:

    >>> tf.keras.ops.softmax([[1.0, 1.0]]).numpy()
    array([[0.5, 0.5]], dtype=float32)
    """,
    "log_softmax": """Log-softmax over `axis`: `x - log(sum(exp(x)))`, computed stably.

    Args:
      x: a float tensor or array-like of logits.
      axis: an int, a tuple of ints, or None for all axes.

    Returns:
      A tensor of `x`'s shape and dtype, of log-probabilities.
    """,
    "one_hot": """One-hot encoding of integer class indices.

    Args:
      x: an int tensor or array-like of class indices (negatives and indices >=
        `num_classes` give all-zero rows).
      num_classes: the number of classes.
      axis: where the new classes axis goes (default last).
      dtype: the result's dtype (default float32, `keras.config.floatx()`).
      sparse: must be False (ndflow returns dense tensors).

    Returns:
      A tensor of `x`'s shape with a `num_classes` axis inserted at `axis`.

    Raises:
      NotImplementedError: `sparse=True`.

    Example:

    >>> tf.keras.ops.one_hot([0, 2], 3).numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """,
    "multi_hot": """Multi-hot encoding: for each sample, 1 at every class index it lists.

    Args:
      inputs: an int tensor of class indices, (batch, indices) or one 1-D list of
        indices.
      num_classes: the number of classes.
      axis: where the classes axis goes in the per-index one-hot encoding.
      dtype: the result's dtype (default float32, `keras.config.floatx()`).
      sparse: must be False.

    Returns:
      A tensor of shape (batch, num_classes) (or (num_classes,) for 1-D `inputs`).

    Raises:
      NotImplementedError: `sparse=True`.

    Example:

    >>> tf.keras.ops.multi_hot([[0, 2], [1, 1]], 3).numpy()
    array([[1., 0., 1.],
           [0., 1., 0.]], dtype=float32)
    """,
    "sparsemax": """Sparsemax: the Euclidean projection of `x` onto the probability simplex
    along `axis`; like softmax it sums to 1, but small logits get exactly 0.

    Args:
      x: a float tensor of logits.
      axis: the axis to normalize over (default the last).

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      TypeError: `x` is not a float tensor.

    Example:

    >>> tf.keras.ops.sparsemax([[2.0, 0.0]]).numpy()
    array([[1., 0.]], dtype=float32)
    """,
}
