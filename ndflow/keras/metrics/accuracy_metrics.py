"""`tf.keras.metrics` accuracies (Keras 3): the per-sample functions (`binary_accuracy`,
`categorical_accuracy`, `sparse_categorical_accuracy`, `top_k_categorical_accuracy`,
`sparse_top_k_categorical_accuracy`; 1.0 for a hit, 0.0 for a miss, as float32) and the mean
metrics around them."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.metrics.base_metric import export, register_function
from ndflow.keras.metrics.reduction_metrics import MeanMetricWrapper, mean_wrapper_class
from ndflow.ops import comparison, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape, shape, squeeze
from ndflow.ops.cast import cast
from ndflow.ops.sort import in_top_k

_FLOATX = dtypes.float32


def _as(value, dtype):
    """`value` as a tensor of `dtype` (tensors and non-matching values are cast)."""
    value = convert_to_tensor(value)
    return value if value.dtype is dtype else cast(value, dtype)


def accuracy(y_true, y_pred):
    """1.0 where `y_true == y_pred` (Keras' `Accuracy` metric function)."""
    y_pred = convert_to_tensor(y_pred)
    y_true = _as(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return cast(comparison.equal(y_true, y_pred), _FLOATX)


@export("binary_accuracy")
def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Per element, whether the thresholded prediction equals the binary label.

    Args:
      y_true: 0/1 labels.
      y_pred: predictions, of `y_true`'s shape (a trailing axis of size 1 may differ);
        above `threshold` counts as 1.
      threshold: the decision threshold.

    Returns:
      A float tensor (floatx) of 1.0 (match) and 0.0, of the aligned shape.

    Example:

    >>> tf.keras.metrics.binary_accuracy([1.0, 0.0], [0.8, 0.6]).numpy()
    array([1., 0.], dtype=float32)
    """
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    threshold = _as(threshold, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_pred = cast(comparison.greater(y_pred, threshold), y_true.dtype)
    return cast(comparison.equal(y_true, y_pred), _FLOATX)


def _argmax(x):
    return reduction.argmax(x, axis=-1, output_type=dtypes.int32)


@export("categorical_accuracy")
def categorical_accuracy(y_true, y_pred):
    """Per sample, whether the predicted class (the argmax of `y_pred`) is the one-hot
    label's class.

    Args:
      y_true: one-hot labels, (batch, classes).
      y_pred: class scores or probabilities, (batch, classes).

    Returns:
      A float tensor (floatx) of shape (batch,), 1.0 for a match.

    Example:

    >>> tf.keras.metrics.categorical_accuracy([[0, 1], [1, 0]], [[0.3, 0.7], [0.2, 0.8]]).numpy()
    array([1., 0.], dtype=float32)
    """
    y_true = _argmax(convert_to_tensor(y_true))
    y_pred = convert_to_tensor(y_pred)
    y_true = _as(y_true, y_pred.dtype)
    original_shape = shape(y_true)
    reshape_matches = False
    if y_true.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank:
        y_true = squeeze(y_true, [-1])
        reshape_matches = True
    y_pred = _as(_argmax(y_pred), y_true.dtype)
    matches = cast(comparison.equal(y_true, y_pred), _FLOATX)
    return reshape(matches, original_shape) if reshape_matches else matches


@export("sparse_categorical_accuracy")
def sparse_categorical_accuracy(y_true, y_pred):
    """Per sample, whether the predicted class (the argmax of `y_pred`) equals the integer
    label.

    Args:
      y_true: class indices, (batch,) or (batch, 1).
      y_pred: class scores or probabilities, (batch, classes).

    Returns:
      A float tensor (floatx) of shape (batch,), 1.0 for a match.

    Example:

    >>> tf.keras.metrics.sparse_categorical_accuracy([1, 0], [[0.3, 0.7], [0.2, 0.8]]).numpy()
    array([1., 0.], dtype=float32)
    """
    y_pred = convert_to_tensor(y_pred)
    y_true = _as(y_true, y_pred.dtype)
    original_shape = shape(y_true)
    reshape_matches = False
    if (y_true.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank
            and y_true.shape[-1] == 1):
        y_true = squeeze(y_true, [-1])
        reshape_matches = True
    y_pred = _as(_argmax(y_pred), y_true.dtype)
    matches = cast(comparison.equal(y_true, y_pred), _FLOATX)
    if reshape_matches:
        matches = reshape(matches, original_shape)
    if matches.shape.rank is not None and matches.shape.rank > 1 and matches.shape[-1] == 1:
        matches = squeeze(matches, [-1])
    return matches


def _top_k_matches(y_true, y_pred, k):
    """in_top_k over rows: `y_pred` flattened to (rows, classes), `y_true` to (rows,); the
    matches get `y_true`'s shape back."""
    original_shape = shape(y_true)
    reshape_matches = False
    if y_true.shape.rank is not None and y_pred.shape.rank is not None:
        if y_pred.shape.rank > 2:
            y_pred = reshape(y_pred, [-1, shape(y_pred)[-1]])
        if y_true.shape.rank > 1:
            reshape_matches = True
            y_true = reshape(y_true, [-1])
    matches = cast(in_top_k(y_true, _as(y_pred, dtypes.float32), k), _FLOATX)
    return reshape(matches, original_shape) if reshape_matches else matches


@export("top_k_categorical_accuracy")
def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Per sample, whether the one-hot label's class is among the `k` highest predictions.

    Args:
      y_true: one-hot labels, (batch, classes).
      y_pred: class scores or probabilities, (batch, classes).
      k: how many of the top predictions count.

    Returns:
      A float tensor (floatx) of shape (batch,), 1.0 for a hit.
    """
    y_pred = convert_to_tensor(y_pred)
    y_true = _argmax(_as(y_true, y_pred.dtype))
    return _top_k_matches(y_true, y_pred, k)


@export("sparse_top_k_categorical_accuracy")
def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """Per sample, whether the integer label is among the `k` highest predictions.

    Args:
      y_true: class indices, (batch,).
      y_pred: class scores (batch, classes), or, with `from_sorted_ids`, the class ids
        already sorted by score (best first).
      k: how many of the top predictions count.
      from_sorted_ids: whether `y_pred` holds sorted class ids rather than scores.

    Returns:
      A float tensor (floatx) of shape (batch,), 1.0 for a hit.

    Example:

    >>> tf.keras.metrics.sparse_top_k_categorical_accuracy([2], [[0.5, 0.1, 0.4]], k=2).numpy()
    array([1.], dtype=float32)
    """
    y_pred = convert_to_tensor(y_pred)
    if not from_sorted_ids:
        return _top_k_matches(_as(y_true, dtypes.int32), y_pred, k)
    y_true = _as(y_true, y_pred.dtype)
    original_shape = shape(y_true)
    reshape_matches = y_true.shape.rank is not None and y_true.shape.rank > 1
    if y_pred.shape.rank is not None and y_pred.shape.rank > 2:
        y_pred = reshape(y_pred, [-1, shape(y_pred)[-1]])
    if reshape_matches:
        y_true = reshape(y_true, [-1])
    hits = reduction.reduce_any(comparison.equal(expand_dims(y_true, 1), y_pred[:, :k]), axis=1)
    matches = cast(hits, _FLOATX)
    return reshape(matches, original_shape) if reshape_matches else matches


for _fn in (accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
            top_k_categorical_accuracy, sparse_top_k_categorical_accuracy):
    register_function(_fn)


Accuracy = mean_wrapper_class("Accuracy", accuracy, "accuracy", "up", __name__,
                              "How often `y_pred` equals `y_true`.")
CategoricalAccuracy = mean_wrapper_class(
    "CategoricalAccuracy", categorical_accuracy, "categorical_accuracy", "up", __name__,
    "How often the argmax of `y_pred` is the argmax of the one-hot `y_true`.")
SparseCategoricalAccuracy = mean_wrapper_class(
    "SparseCategoricalAccuracy", sparse_categorical_accuracy, "sparse_categorical_accuracy",
    "up", __name__, "How often the argmax of `y_pred` is the integer label `y_true`.")


@export("BinaryAccuracy")
class BinaryAccuracy(MeanMetricWrapper):
    """How often the thresholded prediction (`y_pred > threshold`) matches the binary
    label, as a running (weighted) mean over the batches passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      threshold: the decision threshold on `y_pred`.

    Example:

    >>> m = tf.keras.metrics.BinaryAccuracy()
    >>> m.update_state([1, 0, 1, 0], [0.9, 0.2, 0.3, 0.1])
    >>> float(m.result())
    0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(fn=binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold
        self._direction = "up"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "threshold": self.threshold}


@export("TopKCategoricalAccuracy")
class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the `k` highest predictions, as a
    running (weighted) mean.

    Args:
      k: how many of the top predictions count.
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
    """

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(fn=top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k
        self._direction = "up"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "k": self.k}


@export("SparseTopKCategoricalAccuracy")
class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the `k` highest predictions, as a running
    (weighted) mean.

    Args:
      k: how many of the top predictions count.
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      from_sorted_ids: whether `y_pred` holds class ids already sorted by score (best
        first) rather than scores; then the label is looked for among the first `k`.
    """

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None,
                 from_sorted_ids=False):
        super().__init__(fn=sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
        self.k = k
        self.from_sorted_ids = from_sorted_ids
        self._direction = "up"

    def get_config(self):
        config = {"name": self.name, "dtype": self.dtype, "k": self.k}
        if self.from_sorted_ids:
            config["from_sorted_ids"] = True
        return config
