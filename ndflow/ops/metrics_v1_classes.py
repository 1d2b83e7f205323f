"""`tf.compat.v1.metrics` per class and other means (TensorFlow's metrics_impl.py): mean_iou
(over a float64 streaming confusion matrix), mean_per_class_accuracy, mean_cosine_distance,
mean_relative_error, mean_tensor (an elementwise mean) and percentage_below.

Each returns `(value, update_op)` over local variables, as metrics_v1's metrics.
"""

from __future__ import annotations

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    div_no_nan,
    divide,
    maximum,
    multiply,
    subtract,
    where_v1,
)
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, less, not_equal
from ndflow.ops.confusion_matrix import confusion_matrix
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.losses_impl import broadcast_weights
from ndflow.ops.math import abs as _abs
from ndflow.ops.metrics_v1 import _collected, _graph_only, _metric_variable, _squeeze_weights, mean
from ndflow.ops.reduction import reduce_mean, reduce_sum
from ndflow.ops.state_assign import assign_add
from ndflow.ops.state_scatter_nd import scatter_add
from ndflow.ops.variable_scope import variable_scope


def _flat(t):
    """`t` as a vector when its rank is above 1 (TF's reshape to [-1])."""
    return array_core.reshape(t, [-1]) if (t.shape.rank or 0) > 1 else t


@tf_export(v1=["metrics.mean_iou"])
def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection-over-union (true positives / (true positives +
    false positives + false negatives)), from a float64 `[num_classes, num_classes]`
    confusion matrix; classes never seen are left out of the mean."""
    _graph_only("mean_iou")
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
        total_cm = _metric_variable("total_confusion_matrix", [num_classes, num_classes],
                                    dtypes.float64)
        if weights is not None:
            weights = _flat(convert_to_tensor(weights))
        current_cm = confusion_matrix(_flat(cast(labels, dtypes.int64)),
                                      _flat(cast(predictions, dtypes.int64)),
                                      cast(num_classes, dtypes.int64), weights=weights,
                                      dtype=dtypes.float64)
        update_op = assign_add(total_cm, current_cm)

        cm = total_cm.read_value()
        sum_over_row = cast(reduce_sum(cm, 0), dtypes.float32)
        sum_over_col = cast(reduce_sum(cm, 1), dtypes.float32)
        cm_diag = cast(matrix_diag_part(cm), dtypes.float32)
        denominator = subtract(sum_over_row + sum_over_col, cm_diag)
        num_valid = reduce_sum(cast(not_equal(denominator, 0.0), dtypes.float32))
        denominator = where_v1(greater(denominator, 0.0), denominator,
                               array_fill.ones_like(denominator))
        iou = divide(cm_diag, denominator)
        value = where_v1(greater(num_valid, 0.0),
                         divide(reduce_sum(iou, name="mean_iou"), num_valid), 0.0)
    return _collected(value, update_op, metrics_collections, updates_collections)


@tf_export(v1=["metrics.mean_per_class_accuracy"])
def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """The mean over the `num_classes` classes of the (weighted) fraction of each class's
    `labels` predicted right (0 for a class not seen)."""
    _graph_only("mean_per_class_accuracy")
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(cast(labels, dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
        total = _metric_variable("total", [num_classes])
        count = _metric_variable("count", [num_classes])
        ones = array_fill.ones(array_core.reshape(array_core.size(labels), [1]),
                               dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        is_correct = cast(equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct = multiply(is_correct, weights)
            ones = multiply(ones, weights)
        update_total = scatter_add(total, labels, ones)
        update_count = scatter_add(count, labels, is_correct)
        per_class = div_no_nan(count.read_value(), maximum(total.read_value(), 0.0))
        value = reduce_mean(per_class, name="mean_accuracy")
        update_op = div_no_nan(update_count, maximum(update_total, 0.0), name="update_op")
    return _collected(value, update_op, metrics_collections, updates_collections)


@tf_export(v1=["metrics.mean_cosine_distance"])
def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the mean of the dot products of `labels` and `predictions` (unit vectors along
    `dim`)."""
    _graph_only("mean_cosine_distance")
    predictions, labels, weights = _squeeze_weights(predictions, labels, weights)
    radial = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    value, update_op = subtract(1.0, mean_distance), subtract(1.0, update)
    return _collected(value, update_op, metrics_collections, updates_collections)


@tf_export(v1=["metrics.mean_relative_error"])
def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """The mean of `|labels - predictions| / normalizer` (0 where `normalizer` is 0)."""
    _graph_only("mean_relative_error")
    predictions, labels, weights = _squeeze_weights(predictions, labels, weights)
    normalizer, predictions, _ = _squeeze_weights(normalizer, predictions, None)
    relative = where_v1(equal(normalizer, 0.0), array_fill.zeros_like(labels),
                        divide(_abs(subtract(labels, predictions)), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


@tf_export(v1=["metrics.mean_tensor"])
def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The elementwise (weighted) mean of every `values` seen, a tensor of their shape."""
    _graph_only("mean_tensor")
    with variable_scope(name, "mean", (values, weights)):
        values = cast(values, dtypes.float32)
        total = _metric_variable("total_tensor", values.shape.as_list())
        count = _metric_variable("count_tensor", values.shape.as_list())
        num_values = array_fill.ones_like(values)
        if weights is not None:
            values, _, weights = _squeeze_weights(values, None, weights)
            weights = broadcast_weights(cast(weights, dtypes.float32), values)
            values = multiply(values, weights)
            num_values = multiply(num_values, weights)
        update_total = assign_add(total, values)
        with scopes.control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = div_no_nan(total.read_value(), maximum(count.read_value(), 0.0), name="value")
        update_op = div_no_nan(update_total, maximum(update_count, 0.0), name="update_op")
    return _collected(value, update_op, metrics_collections, updates_collections)


@tf_export(v1=["metrics.percentage_below"])
def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """The (weighted) fraction of `values` below `threshold`."""
    _graph_only("percentage_below")
    is_below = cast(less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")
