"""The docstrings of nn_loss.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "l2_loss": """Half the sum of squares of a tensor's elements: sum(t ** 2) / 2.

    Args:
      t: a float tensor.
      name: optional name for the operation.

    Returns:
      A scalar of t's dtype.

    Example:
      >>> float(tf.nn.l2_loss([1.0, 2.0]))
      2.5
    """,
    "sigmoid_cross_entropy_with_logits": """Binary cross entropy of labels and sigmoid(logits).

    Computed stably as max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z.

    Args:
      labels: a tensor of logits' shape and dtype, values in [0, 1].
      logits: a float tensor of unnormalized log-odds.
      name: optional name for the operation.

    Returns:
      A tensor of logits' shape: the per-element losses.

    Raises:
      ValueError: if labels and logits differ in shape.

    Example:
      >>> tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 0.0]).numpy()
      array([0.6931472, 0.6931472], dtype=float32)
    """,
    "softmax_cross_entropy_with_logits": """Cross entropy of labels and softmax(logits).

    Gradients flow into both logits and labels.

    Args:
      labels: a tensor of logits' shape: a probability distribution along `axis`.
      logits: a float tensor of unnormalized log-probabilities.
      axis: the class dimension.
      name: optional name for the operation.

    Returns:
      A tensor of logits' shape without `axis`: the per-example losses.

    Example:
      >>> tf.nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[0.0, 0.0]]).numpy()
      array([0.6931472], dtype=float32)
    """,
    "softmax_cross_entropy_with_logits_v2": """Cross entropy of labels and softmax(logits) (TF1).

    The same as TF2's `tf.nn.softmax_cross_entropy_with_logits`; `dim` is the deprecated
    alias of `axis`.

    Args:
      labels: a probability distribution along `axis`.
      logits: unnormalized log-probabilities.
      axis: the class dimension (-1 by default).
      name: optional name for the operation.
      dim: deprecated alias of `axis`.

    Returns:
      The per-example losses.

    Example:
      >>> tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2([[0.0, 1.0]], [[0.0, 0.0]]).numpy()
      array([0.6931472], dtype=float32)
    """,
    "softmax_cross_entropy_with_logits_v1": """Cross entropy of labels and softmax (deprecated).

    The TF1 form: unlike the v2 form, no gradient flows into `labels`. Arguments must be
    given by keyword.

    Args:
      _sentinel: guards against positional arguments.
      labels: a probability distribution along `dim`.
      logits: unnormalized log-probabilities.
      dim: the class dimension.
      name: optional name for the operation.
      axis: the same as `dim`.

    Returns:
      The per-example losses.

    Raises:
      ValueError: if arguments are passed positionally.

    Example:
      >>> y, z = [[0.0, 1.0]], [[0.0, 0.0]]
      >>> tf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=y, logits=z).numpy()
      array([0.6931472], dtype=float32)
    """,
    "sparse_softmax_cross_entropy_with_logits": """Cross entropy of class labels and softmax.

    Args:
      labels: an int32/int64 tensor of class indices in [0, classes), logits' shape without
        the last dimension.
      logits: a float tensor [..., classes].
      name: optional name for the operation.

    Returns:
      A tensor of labels' shape: the per-example losses.

    Raises:
      InvalidArgumentError: for a label outside [0, classes) (on CPU).

    Example:
      >>> tf.nn.sparse_softmax_cross_entropy_with_logits([1], [[0.0, 0.0]]).numpy()
      array([0.6931472], dtype=float32)
    """,
    "sparse_softmax_cross_entropy_with_logits_v1": """Cross entropy, class labels (TF1).

    Arguments must be given by keyword.

    Args:
      _sentinel: guards against positional arguments.
      labels: int class indices.
      logits: a float tensor [..., classes].
      name: optional name for the operation.

    Returns:
      The per-example losses.

    Raises:
      ValueError: if arguments are passed positionally.

    Example:
      >>> y, z = [1], [[0.0, 0.0]]
      >>> tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z).numpy()
      array([0.6931472], dtype=float32)
    """,
}
