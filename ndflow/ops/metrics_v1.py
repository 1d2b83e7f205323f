"""`tf.compat.v1.metrics`: TF1's streaming metrics (TensorFlow's metrics_impl.py) for graphs.

Each metric makes float32 local variables (collections LOCAL_VARIABLES and
METRIC_VARIABLES, so `tf.compat.v1.local_variables_initializer()` resets them) in a variable
scope named after it, and returns `(value, update_op)`: `update_op` adds the batch to the
variables and gives the metric so far, `value` reads it without updating. Both are added to
`metrics_collections` / `updates_collections` when given. Eagerly they raise RuntimeError,
as in TensorFlow (TF2 code uses the Keras metrics).

Here: mean, accuracy, mean_squared_error, mean_absolute_error, root_mean_squared_error,
true/false positives/negatives, precision and recall.
"""

from __future__ import annotations

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.ops import array_core, array_fill
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    div_no_nan,
    divide,
    maximum,
    multiply,
    squared_difference,
    subtract,
    where,
)
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, logical_and
from ndflow.ops.losses_impl import broadcast_weights
from ndflow.ops.math import abs as _abs
from ndflow.ops.math import sqrt
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.state_assign import assign_add
from ndflow.ops.variable_scope import variable_scope
from ndflow.ops.variables import Variable


def _graph_only(name: str) -> None:
    if context.executing_eagerly():
        raise RuntimeError(f"tf.metrics.{name} is not supported when eager execution is "
                           "enabled.")


def _metric_variable(name: str):
    """A float32 scalar local variable starting at zero."""
    return Variable(lambda: array_fill.zeros([], dtypes.float32), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=True, name=name)


def _add_to(collections, value) -> None:
    graph = context.get_default_graph()
    for key in collections or ():
        graph.add_to_collection(key, value)


def _squeeze_weights(predictions, labels, weights):
    """TF's metrics `_remove_squeezable_dimensions` (static ranks): a trailing 1 of
    predictions or labels against the other, and weights one rank off predictions."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        pr, lr = predictions.shape.rank, labels.shape.rank
        if pr is not None and lr is not None:
            if pr - lr == 1 and predictions.shape[-1] in (None, 1):
                predictions = array_core.squeeze(predictions, [-1])
            elif lr - pr == 1 and labels.shape[-1] in (None, 1):
                labels = array_core.squeeze(labels, [-1])
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    wr, pr = weights.shape.rank, predictions.shape.rank
    if wr and pr is not None:
        if wr - pr == 1:
            weights = array_core.squeeze(weights, [-1])
        elif pr - wr == 1:
            weights = array_core.expand_dims(weights, -1)
    return predictions, labels, weights


@tf_export(v1=["metrics.mean"])
def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The (weighted) mean of every `values` seen: `total / count`."""
    _graph_only("mean")
    with variable_scope(name, "mean", (values, weights)):
        values = cast(values, dtypes.float32)
        total, count = _metric_variable("total"), _metric_variable("count")
        if weights is None:
            num_values = cast(array_core.size(values), dtypes.float32)
        else:
            values, _, weights = _squeeze_weights(values, None, weights)
            weights = broadcast_weights(cast(weights, dtypes.float32), values)
            values = multiply(values, weights)
            num_values = reduce_sum(weights)
        update_total = assign_add(total, reduce_sum(values))
        with scopes.control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = div_no_nan(total.read_value(), maximum(count.read_value(), 0.0), name="value")
        update_op = div_no_nan(update_total, maximum(update_count, 0.0), name="update_op")
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


@tf_export(v1=["metrics.accuracy"])
def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The (weighted) fraction of `predictions` equal to `labels`."""
    _graph_only("accuracy")
    predictions, labels, weights = _squeeze_weights(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def _mean_of(kind: str, fn, labels, predictions, weights, metrics_collections,
             updates_collections, name):
    _graph_only(kind)
    predictions, labels, weights = _squeeze_weights(predictions, labels, weights)
    return mean(fn(labels, predictions), weights, metrics_collections, updates_collections,
                name or kind)


@tf_export(v1=["metrics.mean_squared_error"])
def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    return _mean_of("mean_squared_error", squared_difference, labels, predictions, weights,
                    metrics_collections, updates_collections, name)


@tf_export(v1=["metrics.mean_absolute_error"])
def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    return _mean_of("mean_absolute_error", lambda lab, p: _abs(subtract(p, lab)), labels,
                    predictions, weights, metrics_collections, updates_collections, name)


@tf_export(v1=["metrics.root_mean_squared_error"])
def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    _graph_only("root_mean_squared_error")
    predictions, labels, weights = _squeeze_weights(predictions, labels, weights)
    mse, update_mse = mean(squared_difference(labels, predictions), weights, None, None,
                           name or "root_mean_squared_error")
    value, update_op = sqrt(mse), sqrt(update_mse)
    _add_to(metrics_collections, value)
    _add_to(updates_collections, update_op)
    return value, update_op


def _count(kind: str, label_value: bool, prediction_value: bool):
    def count(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
        _graph_only(kind)
        with variable_scope(name, kind, (predictions, labels, weights)):
            predictions, labels, weights = _squeeze_weights(
                cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
            hits = cast(logical_and(equal(labels, label_value),
                                    equal(predictions, prediction_value)), dtypes.float32)
            total = _metric_variable("count")
            if weights is not None:
                hits = multiply(hits, cast(weights, dtypes.float32))
            value = array_core.identity(total)
            update_op = assign_add(total, reduce_sum(hits))
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op
    count.__name__ = kind
    count.__doc__ = (f"The (weighted) number of elements with label {label_value} and "
                     f"prediction {prediction_value}.")
    return tf_export(v1=[f"metrics.{kind}"])(count)


true_positives = _count("true_positives", True, True)
false_positives = _count("false_positives", False, True)
true_negatives = _count("true_negatives", False, False)
false_negatives = _count("false_negatives", True, False)


def _ratio(kind: str, other):
    """precision (tp / (tp + fp)) or recall (tp / (tp + fn)); 0 while nothing counted."""
    def ratio(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
        _graph_only(kind)
        with variable_scope(name, kind, (predictions, labels, weights)):
            predictions, labels, weights = _squeeze_weights(
                cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            rest, rest_update = other(labels, predictions, weights)

            def compute(t, r, op_name):
                return where(greater(t + r, 0.0), divide(t, t + r), 0.0, name=op_name)
            value = compute(tp, rest, "value")
            update_op = compute(tp_update, rest_update, "update_op")
        _add_to(metrics_collections, value)
        _add_to(updates_collections, update_op)
        return value, update_op
    ratio.__name__ = kind
    return tf_export(v1=[f"metrics.{kind}"])(ratio)


precision = _ratio("precision", false_positives)
recall = _ratio("recall", false_negatives)
