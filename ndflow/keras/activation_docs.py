"""Docstrings of `tf.keras.activations`' functions (activation_functions.py and
activation_functions_extra.py). Attached by `ndflow.keras.docstrings.attach`; the examples
run as doctests."""

from __future__ import annotations

from ndflow.keras.docstrings import activation as _act

_AXIS = """
      axis: the axis to normalize over (default the last)."""

DOCS = {
    "leaky_relu": _act("Leaky ReLU", "`x` for `x > 0`, `negative_slope * x` otherwise", """
      negative_slope: the slope below zero."""),
    "relu6": _act("ReLU capped at 6", "`min(max(x, 0), 6)`"),
    "elu": _act("Exponential linear unit", "`x` for `x > 0`, `alpha * (exp(x) - 1)` otherwise",
                """
      alpha: the scale of the negative part."""),
    "selu": _act("Scaled exponential linear unit",
                 "`scale * x` for `x > 0`, `scale * alpha * (exp(x) - 1)` otherwise, with "
                 "alpha ~ 1.67326 and scale ~ 1.05070 (use with the lecun_normal initializer "
                 "and AlphaDropout)"),
    "gelu": _act("Gaussian error linear unit", "`x * P(X <= x)` for a standard normal X", """
      approximate: whether to use the tanh approximation (default False: the exact erf
        form; note keras.ops.gelu defaults to True)."""),
    "silu": _act("Sigmoid linear unit (swish)", "`x * sigmoid(x)`",
                 example=">>> tf.keras.activations.silu([0.0]).numpy()\n"
                         "    array([0.], dtype=float32)"),
    "swish": _act("Swish, the same function as `silu`", "`x * sigmoid(x)`"),
    "sigmoid": _act("Logistic sigmoid", "`1 / (1 + exp(-x))`, within (0, 1)",
                    example=">>> tf.keras.activations.sigmoid([0.0]).numpy()\n"
                            "    array([0.5], dtype=float32)"),
    "hard_sigmoid": _act("Piecewise-linear sigmoid", "`clip(x / 6 + 0.5, 0, 1)`: 0 below -3, "
                         "1 above 3",
                         example=">>> tf.keras.activations.hard_sigmoid([-4.0, 0.0, 4.0])"
                                 ".numpy()\n    array([0. , 0.5, 1. ], dtype=float32)"),
    "tanh": _act("Hyperbolic tangent", "`(exp(x) - exp(-x)) / (exp(x) + exp(-x))`, within "
                 "(-1, 1)"),
    "softplus": _act("Softplus, a smooth ReLU", "`log(1 + exp(x))`"),
    "softsign": _act("Softsign", "`x / (1 + |x|)`, within (-1, 1)"),
    "exponential": _act("Exponential", "`exp(x)`"),
    "linear": """The identity activation: returns `x` unchanged (what `activations.get(None)`
    gives).

    Args:
      x: any value.

    Returns:
      `x` itself.
    """,
    "softmax": _act("Softmax", "`exp(x)` normalized so the values along `axis` sum to 1",
                    _AXIS, example=">>> tf.keras.activations.softmax([[1.0, 1.0]]).numpy()\n"
                                   "    array([[0.5, 0.5]], dtype=float32)"),
    "log_softmax": _act("Log-softmax", "`x - log(sum(exp(x)))` along `axis`, computed "
                        "stably", _AXIS),
    "deserialize": """The activation function a name or a saved config stands for.

    Args:
      config: an activation's name ("relu"), a registered custom object's name, or
        Keras' record of a function (`{"class_name": "function", "config": name, ...}`).
      custom_objects: optional dict of names to user functions, looked up first.

    Returns:
      The activation function.

    Raises:
      ValueError: the identifier names no known activation.

    Example:

    >>> tf.keras.activations.deserialize("relu") is tf.keras.activations.relu
    True
    """,
}

# activation_functions_extra.py's own (its other functions share keras.ops.nn's docstrings)
EXTRA_DOCS = {
    "mish": _act("Mish", "`x * tanh(softplus(x))`, a smooth, non-monotonic ReLU"),
}
