"""The docstrings of nn_activation.py's public functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations


def _act(summary: str, call: str, result: str, extra_arg: str = "") -> str:
    return f"""{summary}

    Args:
      features: a float tensor (integer types are accepted where TensorFlow accepts them).
{extra_arg}      name: optional name for the operation.

    Returns:
      A tensor of features' shape and dtype.

    Example:
      >>> {call}.numpy()
      {result}
    """


def _softmax(summary: str, call: str, result: str, v1: bool) -> str:
    dim = "      dim: deprecated alias of `axis`.\n" if v1 else ""
    return f"""{summary}

    Args:
      logits: a non-empty float tensor.
      axis: the dimension to normalize over; None means the last.
      name: optional name for the operation.
{dim}
    Returns:
      A tensor of logits' shape and dtype.

    Raises:
      InvalidArgumentError: if `logits` is empty or `axis` is out of range.

    Example:
      >>> {call}.numpy()
      {result}
    """


DOCS = {
    "relu": _act("Rectified linear unit: `max(features, 0)`.", "tf.nn.relu([-1.0, 2.0])",
                 "array([0., 2.], dtype=float32)"),
    "relu6": _act("Rectified linear unit capped at 6: `min(max(features, 0), 6)`.",
                  "tf.nn.relu6([-1.0, 3.0, 8.0])", "array([0., 3., 6.], dtype=float32)"),
    "elu": _act("Exponential linear unit: `exp(features) - 1` where negative, `features` "
                "elsewhere.", "tf.nn.elu([-1.0, 2.0])",
                "array([-0.63212055,  2.        ], dtype=float32)"),
    "selu": _act("Scaled exponential linear unit: `scale * elu(features)` with SELU's "
                 "alpha.\n\n    alpha = 1.6732632..., scale = 1.0507009...; negative values "
                 "are `scale * alpha * (exp(x) - 1)`.", "tf.nn.selu([-1.0, 1.0])",
                 "array([-1.1113307,  1.050701 ], dtype=float32)"),
    "leaky_relu": _act("Leaky rectified linear unit: `features` where positive, `alpha * "
                       "features` elsewhere.", "tf.nn.leaky_relu([-1.0, 2.0])",
                       "array([-0.2,  2. ], dtype=float32)",
                       "      alpha: the slope for negative values.\n"),
    "softplus": _act("Softplus: `log(exp(features) + 1)`, computed without overflow.",
                     "tf.math.softplus([0.0])", "array([0.6931472], dtype=float32)"),
    "softmax": _softmax("Softmax along an axis: `exp(logits) / sum(exp(logits))`.",
                        "tf.nn.softmax([1.0, 1.0])", "array([0.5, 0.5], dtype=float32)",
                        False),
    "log_softmax": _softmax("Log-softmax along an axis: `logits - log(sum(exp(logits)))`.",
                            "tf.nn.log_softmax([0.0, 0.0])",
                            "array([-0.6931472, -0.6931472], dtype=float32)", False),
    "softmax_v1": _softmax("Softmax along an axis (TF1 signature, with `dim`).",
                           "tf.compat.v1.nn.softmax([[1.0, 1.0]], dim=-1)",
                           "array([[0.5, 0.5]], dtype=float32)", True),
    "log_softmax_v1": _softmax("Log-softmax along an axis (TF1 signature, with `dim`).",
                               "tf.compat.v1.nn.log_softmax([0.0, 0.0])",
                               "array([-0.6931472, -0.6931472], dtype=float32)", True),
}
