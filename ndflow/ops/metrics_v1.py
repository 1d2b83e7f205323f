"""`tf.compat.v1.metrics`: TF1's streaming metrics (TensorFlow's metrics_impl.py) for graphs.

Each metric makes float32 local variables (collections LOCAL_VARIABLES and
METRIC_VARIABLES, so `tf.compat.v1.local_variables_initializer()` resets them) in a variable
scope named after it, and returns `(value, update_op)`: `update_op` adds the batch to the
variables and gives the metric so far, `value` reads it without updating. Both are added to
`metrics_collections` / `updates_collections` when given. Eagerly they raise RuntimeError,
as in TensorFlow (TF2 code uses the Keras metrics).

Here: mean, accuracy, mean_squared_error, mean_absolute_error, root_mean_squared_error,
true/false positives/negatives, precision, recall and auc (ROC or PR, trapezoidal, careful
interpolation, minoring or majoring sums over TF's thresholds). The others are in
metrics_v1_thresholds.py, metrics_v1_classes.py and metrics_v1_top_k.py.
"""

from __future__ import annotations

from ndflow.core import context, dtypes, scopes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.ops import array_core, array_fill, check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
    div_no_nan,
    divide,
    log,
    maximum,
    minimum,
    multiply,
    squared_difference,
    subtract,
    where,
)
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, logical_and, logical_not
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


def _metric_variable(name: str, shape=(), dtype=dtypes.float32):
    """A local variable of `shape` (a scalar by default) and `dtype` starting at zero."""
    return Variable(lambda: array_fill.zeros(list(shape), dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=True, name=name)


def _collected(value, update_op, metrics_collections, updates_collections) -> tuple:
    """(value, update_op), each added to its collections."""
    graph = context.get_default_graph()
    for keys, t in ((metrics_collections, value), (updates_collections, update_op)):
        for key in keys or ():
            graph.add_to_collection(key, t)
    return value, update_op


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
    return _collected(value, update_op, metrics_collections, updates_collections)


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


def _streaming_doc(title: str, kind: str, args: str, out: str, details: str = "") -> str:
    """The docstring of the streaming metric tf.compat.v1.metrics.<kind> of labels and
    predictions, whose example prints the update on `args`."""
    details = f"\n    {details}\n" if details else ""
    return f"""{title}
{details}
    Args:
      labels: the ground truth, a tensor of predictions' shape.
      predictions: the predicted values.
      weights: optional weights, broadcastable to `labels` (0 leaves an element out).
      metrics_collections: optional collection names to add `value` to.
      updates_collections: optional collection names to add `update_op` to.
      name: optional variable scope name.

    Returns:
      `(value, update_op)`: float32 tensors; `update_op` adds the batch and gives the
      metric so far, `value` reads it without updating.

    Raises:
      RuntimeError: when executing eagerly.

    Example:
      >>> with tf.Graph().as_default():
      ...     value, update = tf.compat.v1.metrics.{kind}(
      ...         {args})
      ...     with tf.compat.v1.Session() as sess:
      ...         sess.run(tf.compat.v1.local_variables_initializer())
      ...         print(round(float(sess.run(update)), 4))
      {out}
    """


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
    return _collected(value, update_op, metrics_collections, updates_collections)


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
        return _collected(value, update_op, metrics_collections, updates_collections)
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
        return _collected(value, update_op, metrics_collections, updates_collections)
    ratio.__name__ = kind
    miss = "fp" if kind == "precision" else "fn"
    ratio.__doc__ = _streaming_doc(
        f"The streaming {kind} of boolean labels and predictions.", kind,
        "[True, True, False], [True, False, True]", "0.5",
        f"The value is `tp / (tp + {miss})` of everything seen so far (0 while nothing has "
        "been\n    counted).")
    return tf_export(v1=[f"metrics.{kind}"])(ratio)


precision = _ratio("precision", false_positives)
recall = _ratio("recall", false_negatives)


_CONFUSION = (("tp", "true_positives", True, True), ("fn", "false_negatives", True, False),
              ("tn", "true_negatives", False, False), ("fp", "false_positives", False, True))


def _confusion_at_thresholds(labels, predictions, thresholds: list, weights, includes=None):
    """TF's `_confusion_matrix_at_thresholds`: per threshold, the (weighted) counts of
    predictions above it (positive) against the labels, as values and update ops; only the
    counts named in `includes` ("tp", "fn", "tn", "fp"; all by default)."""
    for key in includes or ():
        if key not in ("tp", "fn", "tn", "fp"):
            raise ValueError(f"Invalid key: {key}")
    with scopes.control_dependencies([
            check_ops.assert_greater_equal(predictions, 0.0,
                                           message="predictions must be in [0, 1]"),
            check_ops.assert_less_equal(predictions, 1.0,
                                        message="predictions must be in [0, 1]")]):
        predictions, labels, weights = _squeeze_weights(
            cast(predictions, dtypes.float32), cast(labels, dtypes.bool), weights)
    n = len(thresholds)
    preds = array_core.reshape(predictions, [1, -1])
    labs = array_core.reshape(labels, [1, -1])
    limits = array_core.expand_dims(convert_to_tensor(thresholds, dtypes.float32), 1)
    pred_pos = greater(preds, limits)                                 # [thresholds, N]
    pred_neg = logical_not(pred_pos)
    label_pos = array_fill.tile(labs, [n, 1])
    label_neg = logical_not(label_pos)
    tiled = None
    if weights is not None:
        w = broadcast_weights(cast(weights, dtypes.float32), predictions)
        tiled = array_fill.tile(array_core.reshape(w, [1, -1]), [n, 1])
    sides = {True: (label_pos, pred_pos), False: (label_neg, pred_neg)}
    values, updates = {}, {}
    for key, var_name, label_side, pred_side in _CONFUSION:
        if includes is not None and key not in includes:
            continue
        count = _metric_variable(var_name, [n])
        hits = cast(logical_and(sides[label_side][0], sides[pred_side][1]), dtypes.float32)
        if tiled is not None:
            hits = multiply(hits, tiled)
        updates[key] = assign_add(count, reduce_sum(hits, 1))
        values[key] = count.read_value()
    return values, updates


def _interpolate_pr_auc(tp, fp, fn, n: int):
    """TF's careful interpolation of the PR curve (Davis & Goadrich 2006): between two
    thresholds precision is interpolated linearly in the number of true positives."""
    dtp = subtract(tp[:n - 1], tp[1:])
    p = tp + fp
    prec_slope = div_no_nan(dtp, maximum(subtract(p[:n - 1], p[1:]), 0.0), name="prec_slope")
    intercept = subtract(tp[1:], multiply(prec_slope, p[1:]))
    safe_p_ratio = where(logical_and(greater(p[:n - 1], 0.0), greater(p[1:], 0.0)),
                         div_no_nan(p[:n - 1], maximum(p[1:], 0.0),
                                    name="recall_relative_ratio"),
                         array_fill.ones_like(p[1:]))
    increments = div_no_nan(multiply(prec_slope, dtp + multiply(intercept, log(safe_p_ratio))),
                            maximum(tp[1:] + fn[1:], 0.0), name="pr_auc_increment")
    return reduce_sum(increments, name="interpolate_pr_auc")


@tf_export(v1=["metrics.auc"])
def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """The area under the ROC or PR curve of `predictions` (in [0, 1]) against boolean
    `labels`, from confusion counts at `num_thresholds` evenly spaced thresholds (or the
    given ones) between -1e-7 and 1 + 1e-7."""
    _graph_only("auc")
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if summation_method not in ("trapezoidal", "careful_interpolation", "minoring",
                                    "majoring"):
            raise ValueError(f"Invalid summation_method: {summation_method} summation_method "
                             "should be 'trapezoidal', 'careful_interpolation', 'minoring', "
                             "or 'majoring'.")
        if curve == "PR" and summation_method == "trapezoidal":
            tf_logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; "
                               'please switch to "careful_interpolation" instead.')
        eps_t = 1e-7
        if thresholds is not None:
            inner = sorted(thresholds)
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        limits = [0.0 - eps_t] + inner + [1.0 + eps_t]
        n = len(limits)
        values, updates = _confusion_at_thresholds(labels, predictions, limits, weights)
        eps = 1.0e-6

        def area(c, op_name):
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(c["tp"], c["fp"], c["fn"], n)
            rec = divide(c["tp"] + eps, c["tp"] + c["fn"] + eps)
            if curve == "ROC":
                x, y = divide(c["fp"], c["fp"] + c["tn"] + eps), rec
            else:
                x, y = rec, divide(c["tp"] + eps, c["tp"] + c["fp"] + eps)
            dx = subtract(x[:n - 1], x[1:])
            if summation_method == "minoring":
                heights = minimum(y[:n - 1], y[1:])
            elif summation_method == "majoring":
                heights = maximum(y[:n - 1], y[1:])
            else:
                heights = divide(y[:n - 1] + y[1:], 2.0)
            return reduce_sum(multiply(dx, heights), name=op_name)

        value = area(values, "value")
        update_op = area(updates, "update_op")
    return _collected(value, update_op, metrics_collections, updates_collections)


mean_squared_error.__doc__ = _streaming_doc(
    "The streaming mean of `(labels - predictions) ** 2`.", "mean_squared_error",
    "[1.0, 2.0], [2.0, 4.0]", "2.5")
mean_absolute_error.__doc__ = _streaming_doc(
    "The streaming mean of `|labels - predictions|`.", "mean_absolute_error",
    "[1.0, 2.0], [2.0, 4.0]", "1.5")
root_mean_squared_error.__doc__ = _streaming_doc(
    "The square root of the streaming mean squared error.", "root_mean_squared_error",
    "[0.0, 0.0], [3.0, 4.0]", "3.5355")
