"""`tf.compat.v1.metrics` at thresholds (TensorFlow's metrics_impl.py): the confusion counts,
precision and recall at each of a list of thresholds, and sensitivity at a specificity (or
specificity at a sensitivity) over evenly spaced thresholds.

The counts are float32 local variables of one entry per threshold, made by metrics_v1's
`_confusion_at_thresholds` in the metric's variable scope (a prediction counts as positive
when it is above the threshold); each function returns `(value, update_op)` as metrics_v1's.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.arithmetic import divide, subtract
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.ops.math import abs as _abs
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.metrics_v1 import _collected, _confusion_at_thresholds, _graph_only
from ndflow.ops.reduction import argmax, argmin, reduce_min
from ndflow.ops.variable_scope import variable_scope

_EPSILON = 1e-7   # TF's kepsilon, against floating point imprecision


def _exported(metric, kind: str):
    """`tf.compat.v1.metrics.<kind>_at_thresholds`, named and documented."""
    metric.__name__ = f"{kind}_at_thresholds"
    metric.__doc__ = (f"The (weighted) {kind.replace('_', ' ')} of `predictions` (in [0, 1]) "
                      "against boolean `labels` at each of `thresholds`, a float32 vector.")
    return tf_export(v1=[f"metrics.{kind}_at_thresholds"])(metric)


def _count_at_thresholds(kind: str, key: str):
    def count(labels, predictions, thresholds, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
        _graph_only(f"{kind}_at_thresholds")
        with variable_scope(name, kind, (predictions, labels, weights)):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds,
                                                       weights, includes=(key,))
        return _collected(values[key], updates[key], metrics_collections, updates_collections)
    return _exported(count, kind)


true_positives_at_thresholds = _count_at_thresholds("true_positives", "tp")
false_positives_at_thresholds = _count_at_thresholds("false_positives", "fp")
true_negatives_at_thresholds = _count_at_thresholds("true_negatives", "tn")
false_negatives_at_thresholds = _count_at_thresholds("false_negatives", "fn")


def _ratio_at_thresholds(kind: str, other: str):
    """precision (tp / (tp + fp)) or recall (tp / (tp + fn)) per threshold, as TF: with
    1e-7 added to the denominator."""
    def ratio(labels, predictions, thresholds, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
        _graph_only(f"{kind}_at_thresholds")
        with variable_scope(name, f"{kind}_at_thresholds", (predictions, labels, weights)):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds,
                                                       weights, includes=("tp", other))

            def compute(c, op_name):
                return divide(c["tp"], _EPSILON + c["tp"] + c[other],
                              name=f"{kind}_{op_name}")
            value = compute(values, "value")
            update_op = compute(updates, "update_op")
        return _collected(value, update_op, metrics_collections, updates_collections)
    return _exported(ratio, kind)


precision_at_thresholds = _ratio_at_thresholds("precision", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall", "fn")


def _even_thresholds(num_thresholds: int, last: float) -> list:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _EPSILON] + inner + [last]


def _check_fraction(arg: str, value, verb: str) -> None:
    if value < 0 or value > 1:
        raise ValueError(f"`{arg}` must be in the range [0, 1]. Currently, `{arg}` {verb} "
                         f"{value}.")


@tf_export(v1=["metrics.sensitivity_at_specificity"])
def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity (recall) at the one of `num_thresholds` evenly spaced thresholds whose
    specificity is closest to `specificity` (the first such)."""
    _graph_only("sensitivity_at_specificity")
    _check_fraction("specificity", specificity, "got")
    with variable_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        limits = _even_thresholds(num_thresholds, 1.0 + _EPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, limits, weights)

        def compute(c, op_name):
            specificities = divide(c["tn"], c["tn"] + c["fp"] + _EPSILON)
            index = cast(argmin(_abs(subtract(specificities, specificity)), 0), dtypes.int32)
            tp = c["tp"][index]
            return divide(tp, tp + c["fn"][index] + _EPSILON, name=op_name)
        value = compute(values, "value")
        update_op = compute(updates, "update_op")
    return _collected(value, update_op, metrics_collections, updates_collections)


@tf_export(v1=["metrics.specificity_at_sensitivity"])
def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the one of `num_thresholds` evenly spaced thresholds whose
    sensitivity is closest to `sensitivity` (the last such, as TF)."""
    _graph_only("specificity_at_sensitivity")
    _check_fraction("sensitivity", sensitivity, "is")
    with variable_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        # (TF's last threshold is 1 - 1e-7 here, not 1 + 1e-7 as elsewhere)
        limits = _even_thresholds(num_thresholds, 1.0 - _EPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, limits, weights)

        def compute(c, op_name):
            sensitivities = divide(c["tp"], c["tp"] + c["fn"] + _EPSILON)
            distance = _abs(subtract(sensitivities, sensitivity))
            at_min = cast(equal(distance, reduce_min(distance)), dtypes.int64)
            index = cast(argmax(cumsum(at_min), 0), dtypes.int32)
            tn = c["tn"][index]
            return divide(tn, tn + c["fp"][index] + _EPSILON, name=op_name)
        value = compute(values, "value")
        update_op = compute(updates, "update_op")
    return _collected(value, update_op, metrics_collections, updates_collections)
