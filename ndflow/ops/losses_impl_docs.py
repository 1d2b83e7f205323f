"""The docstrings of losses_impl.py's public functions (attached at its end; see
core/doc_tables.py). Generated from a spec with the example outputs computed."""

from __future__ import annotations

DOCS = {
    "absolute_difference": """The weighted absolute difference loss, |predictions - labels|.

    Args:
      labels: the ground truth, a tensor of predictions' shape.
      predictions: the predicted values, a float tensor.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.absolute_difference([0.0, 1.0], [0.5, 0.5]))
      0.5
    """,
    "mean_squared_error": """The weighted squared error loss, (predictions - labels) ** 2.

    Args:
      labels: the ground truth, a tensor of predictions' shape.
      predictions: the predicted values, a float tensor.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.mean_squared_error([0.0, 1.0], [0.5, 0.5]))
      0.25
    """,
    "huber_loss": """The weighted Huber loss: quadratic for small errors, linear for large ones.

    With x = predictions - labels: 0.5 * x**2 where |x| <= delta, else 0.5 * delta**2 +
    delta * (|x| - delta).

    Args:
      labels: the ground truth, a tensor of predictions' shape.
      predictions: the predicted values, a float tensor.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      delta: the point where the loss changes from quadratic to linear.
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.huber_loss([0.0, 0.0], [0.5, 3.0]))
      1.3125
    """,
    "log_loss": """The weighted logistic (binary cross entropy) loss of probabilities.

    -labels * log(predictions + epsilon) - (1 - labels) * log(1 - predictions + epsilon).

    Args:
      labels: 0/1 labels, a tensor of predictions' shape.
      predictions: probabilities in [0, 1].
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      epsilon: added inside the logs to avoid log(0).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.log_loss([1.0, 0.0], [0.9, 0.1]))
      0.10536041110754013
    """,
    "hinge_loss": """The weighted hinge loss max(0, 1 - y * logits) with y = 2 * labels - 1.

    Args:
      labels: 0/1 labels, a tensor of logits' shape.
      logits: the predicted scores (unbounded).
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.hinge_loss([1.0, 0.0], [2.0, -0.5]))
      0.25
    """,
    "cosine_distance": """The weighted cosine distance, 1 - sum(labels * predictions) along `axis`.

    Both inputs are assumed to be unit-normalized along `axis`.

    Args:
      labels: unit vectors, a tensor of predictions' shape.
      predictions: unit vectors.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      axis: the axis holding the vectors (required).
      dim: deprecated alias of `axis`.
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.cosine_distance([[1.0, 0.0]], [[0.0, 1.0]], axis=1))
      1.0
    """,
    "mean_pairwise_squared_error": """The weighted mean pairwise squared error.

    For each batch entry, the mean over all pairs (i, j) of its elements of ((p_i - p_j) -
    (l_i - l_j)) ** 2: it penalizes differences between pairs, not offsets.

    Args:
      labels: the ground truth, shape [batch, ...].
      predictions: a tensor of labels' shape.
      weights: a scalar or a vector of one weight per batch entry.
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).

    Returns:
      A float scalar.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.mean_pairwise_squared_error([[0.0, 1.0]], [[1.0, 2.0]]))
      0.0
    """,
    "sigmoid_cross_entropy": """The weighted sigmoid cross entropy of multi-label logits.

    With label_smoothing s, the labels become labels * (1 - s) + 0.5 * s.

    Args:
      multi_class_labels: 0/1 labels, a tensor of logits' shape.
      logits: the unnormalized log-odds.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      label_smoothing: the smoothing amount in [0, 1].
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.sigmoid_cross_entropy([[1.0, 0.0]], [[0.0, 0.0]]))
      0.6931471824645996
    """,
    "softmax_cross_entropy": """The weighted softmax cross entropy of one-hot labels.

    With label_smoothing s and C classes, the labels become onehot_labels * (1 - s) + s / C.

    Args:
      onehot_labels: one-hot (or probability) labels, shape [batch, C].
      logits: the unnormalized log-probabilities, shape [batch, C].
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      label_smoothing: the smoothing amount in [0, 1].
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.softmax_cross_entropy([[0.0, 1.0]], [[0.0, 0.0]]))
      0.6931471824645996
    """,
    "sparse_softmax_cross_entropy": """The weighted softmax cross entropy of integer class labels.

    Args:
      labels: int class indices in [0, C), shape [batch].
      logits: the unnormalized log-probabilities, shape [batch, C].
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the shapes of labels, predictions and weights are incompatible.

    Example:
      >>> float(tf.compat.v1.losses.sparse_softmax_cross_entropy([1], [[0.0, 0.0]]))
      0.6931471824645996
    """,
    "compute_weighted_loss": """Weights and reduces a tensor of per-element losses.

    The result has the dtype of `losses` (computed in float32 for half types).

    Args:
      losses: a float tensor of per-element losses.
      weights: a scalar, or a tensor broadcastable to the losses (0 leaves an element out).
      scope: optional name scope.
      loss_collection: the graph collection the loss is added to (in graph mode).
      reduction: a `tf.compat.v1.losses.Reduction`; by default the weighted sum divided by the
        number of non-zero weights.

    Returns:
      The loss: a float scalar, or a tensor of the losses' shape with Reduction.NONE.

    Raises:
      ValueError: if the weights are not broadcastable to the losses.

    Example:
      >>> float(tf.compat.v1.losses.compute_weighted_loss([1.0, 3.0], weights=[1.0, 0.0]))
      1.0
    """,
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
