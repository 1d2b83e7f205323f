"""The docstrings of losses_impl.py's public functions (attached at its end; see
core/doc_tables.py): the weighted losses' from one template (`_loss`), with each loss's
title, inputs, extra arguments and example."""

from __future__ import annotations

from ndflow.core.doc_tables import note

_WEIGHTS = "weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out)."
_COLLECTED = """scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode)."""
_REDUCTION = """
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights."""
_SHAPES = "if the shapes of labels, predictions and weights are incompatible."
_SMOOTHING = "label_smoothing: the smoothing amount in [0, 1]."


def _loss(title: str, inputs: tuple[str, ...], call: str, out: str, details: str = "",
          extra: tuple[str, ...] = (), raises: str = _SHAPES, reduction: str = _REDUCTION,
          returns: str = "The loss: a float scalar, or a tensor of the losses' shape with "
                         "Reduction.NONE.") -> str:
    """The docstring of tf.compat.v1.losses.<loss>: `inputs` (the two inputs' Args lines),
    the weights, `extra` arguments, the scope and collection, and the example `call`."""
    args = "\n      ".join([*inputs, _WEIGHTS, *extra])
    return f"""{title}
{note(details) if details else ""}
    Args:
      {args}
      {_COLLECTED}{reduction}

    Returns:
      {returns}

    Raises:
      ValueError: {raises}

    Example:
      >>> float(tf.compat.v1.losses.{call})
      {out}
    """


_PREDICTIONS = ("labels: the ground truth, a tensor of predictions' shape.",
                "predictions: the predicted values, a float tensor.")
_LOGITS = "logits: the unnormalized log-probabilities, shape [batch, C]."

DOCS = {
    "absolute_difference": _loss(
        "The weighted absolute difference loss, |predictions - labels|.", _PREDICTIONS,
        "absolute_difference([0.0, 1.0], [0.5, 0.5])", "0.5"),
    "mean_squared_error": _loss(
        "The weighted squared error loss, (predictions - labels) ** 2.", _PREDICTIONS,
        "mean_squared_error([0.0, 1.0], [0.5, 0.5])", "0.25"),
    "huber_loss": _loss(
        "The weighted Huber loss: quadratic for small errors, linear for large ones.",
        _PREDICTIONS, "huber_loss([0.0, 0.0], [0.5, 3.0])", "1.3125",
        "With x = predictions - labels: 0.5 * x**2 where |x| <= delta, else 0.5 * delta**2 +\n"
        "    delta * (|x| - delta).",
        ("delta: the point where the loss changes from quadratic to linear.",)),
    "log_loss": _loss(
        "The weighted logistic (binary cross entropy) loss of probabilities.",
        ("labels: 0/1 labels, a tensor of predictions' shape.",
         "predictions: probabilities in [0, 1]."),
        "log_loss([1.0, 0.0], [0.9, 0.1])", "0.10536041110754013",
        "-labels * log(predictions + epsilon) - (1 - labels) * log(1 - predictions + epsilon).",
        ("epsilon: added inside the logs to avoid log(0).",)),
    "hinge_loss": _loss(
        "The weighted hinge loss max(0, 1 - y * logits) with y = 2 * labels - 1.",
        ("labels: 0/1 labels, a tensor of logits' shape.",
         "logits: the predicted scores (unbounded)."),
        "hinge_loss([1.0, 0.0], [2.0, -0.5])", "0.25"),
    "cosine_distance": _loss(
        "The weighted cosine distance, 1 - sum(labels * predictions) along `axis`.",
        ("labels: unit vectors, a tensor of predictions' shape.", "predictions: unit vectors."),
        "cosine_distance([[1.0, 0.0]], [[0.0, 1.0]], axis=1)", "1.0",
        "Both inputs are assumed to be unit-normalized along `axis`.",
        ("axis: the axis holding the vectors (required).", "dim: deprecated alias of `axis`.")),
    "mean_pairwise_squared_error": _loss(
        "The weighted mean pairwise squared error.",
        ("labels: the ground truth, shape [batch, ...].",
         "predictions: a tensor of labels' shape."),
        "mean_pairwise_squared_error([[0.0, 1.0]], [[1.0, 2.0]])", "0.0",
        "For each batch entry, the mean over all pairs (i, j) of its elements of ((p_i - p_j) -\n"
        "    (l_i - l_j)) ** 2: it penalizes differences between pairs, not offsets.",
        reduction="", returns="A float scalar.").replace(
            _WEIGHTS, "weights: a scalar or a vector of one weight per batch entry."),
    "sigmoid_cross_entropy": _loss(
        "The weighted sigmoid cross entropy of multi-label logits.",
        ("multi_class_labels: 0/1 labels, a tensor of logits' shape.",
         "logits: the unnormalized log-odds."),
        "sigmoid_cross_entropy([[1.0, 0.0]], [[0.0, 0.0]])", "0.6931471824645996",
        "With label_smoothing s, the labels become labels * (1 - s) + 0.5 * s.", (_SMOOTHING,)),
    "softmax_cross_entropy": _loss(
        "The weighted softmax cross entropy of one-hot labels.",
        ("onehot_labels: one-hot (or probability) labels, shape [batch, C].", _LOGITS),
        "softmax_cross_entropy([[0.0, 1.0]], [[0.0, 0.0]])", "0.6931471824645996",
        "With label_smoothing s and C classes, the labels become onehot_labels * (1 - s) + s / C.",
        (_SMOOTHING,)),
    "sparse_softmax_cross_entropy": _loss(
        "The weighted softmax cross entropy of integer class labels.",
        ("labels: int class indices in [0, C), shape [batch].", _LOGITS),
        "sparse_softmax_cross_entropy([1], [[0.0, 0.0]])", "0.6931471824645996"),
    "compute_weighted_loss": _loss(
        "Weights and reduces a tensor of per-element losses.",
        ("losses: a float tensor of per-element losses.",),
        "compute_weighted_loss([1.0, 3.0], weights=[1.0, 0.0])", "1.0",
        "The result has the dtype of `losses` (computed in float32 for half types).",
        raises="if the weights are not broadcastable to the losses."),
    "add_loss": """Adds a loss tensor to a collection of the default graph.

    Executing eagerly there are no collections and this does nothing.

    Args:
      loss: the loss tensor.
      loss_collection: the collection to add it to (None: do not add).

    Returns:
      None.

    Example:
      >>> tf.compat.v1.losses.add_loss(tf.constant(1.0))
    """,
    "get_losses": """The losses collected in the default graph.

    Args:
      scope: optional regex; only losses whose name matches it from the start are kept.
      loss_collection: the collection to read.

    Returns:
      A list of loss tensors (empty when executing eagerly).

    Example:
      >>> tf.compat.v1.losses.get_losses()
      []
    """,
    "get_regularization_losses": """The regularization losses collected in the default graph.

    Args:
      scope: optional regex filtering the losses by name.

    Returns:
      A list of tensors from GraphKeys.REGULARIZATION_LOSSES (empty when executing eagerly).

    Example:
      >>> tf.compat.v1.losses.get_regularization_losses()
      []
    """,
    "get_regularization_loss": """The sum of the regularization losses of the default graph.

    Args:
      scope: optional regex filtering the losses by name.
      name: the name of the sum.

    Returns:
      A float scalar (0.0 when there are none).

    Example:
      >>> float(tf.compat.v1.losses.get_regularization_loss())
      0.0
    """,
    "get_total_loss": """The sum of the collected losses and, by default, the regularization losses.

    Args:
      add_regularization_losses: whether to add the regularization losses.
      name: the name of the sum.
      scope: optional regex filtering the losses by name.

    Returns:
      A float scalar.

    Raises:
      ValueError: if there are no losses to sum.

    Example:
      >>> with tf.Graph().as_default():
      ...     tf.compat.v1.losses.add_loss(tf.constant(2.0))
      ...     total = tf.compat.v1.losses.get_total_loss()
      ...     with tf.compat.v1.Session() as sess:
      ...         print(sess.run(total))
      2.0
    """,
}
