"""Keras 3's confusion-matrix accumulation (`metrics_utils.update_confusion_matrix_variables`):
true/false positives/negatives of `y_pred > threshold` against `y_true` (cast to bool) for
each threshold, weighted by the sample (and label) weights, added to the metric's variables.

Two ways, as Keras: for evenly spaced thresholds each prediction falls in one bucket
(`ceil(p * (T - 1)) - 1`) and the counts are reverse cumulative sums of per-bucket sums (O(T +
N)); otherwise every prediction is compared with every threshold (O(T * N))."""

from __future__ import annotations

import enum

import numpy as np

from ndflow.core import dtypes
from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.metrics.base_metric import EPSILON
from ndflow.ops import arithmetic, array_range, comparison, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_fill import broadcast_to
from ndflow.ops.array_gather import one_hot, unsorted_segment_sum
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.sort import top_k as top_k_op

NEG_INF = -1e10


class ConfusionMatrix(enum.Enum):
    TRUE_POSITIVES = "tp"
    FALSE_POSITIVES = "fp"
    TRUE_NEGATIVES = "tn"
    FALSE_NEGATIVES = "fn"


def _member(enum_type, key, respelled, error):
    """The member of `enum_type` whose value (or its `respelled` form) is `key`."""
    for member in enum_type:
        if key in (member.value, respelled(member.value)):
            return member
    raise ValueError(error.format(key))


class AUCCurve(enum.Enum):
    ROC = "ROC"
    PR = "PR"
    PRGAIN = "PRGAIN"

    @staticmethod
    def from_str(key):
        return _member(AUCCurve, key, str.lower, 'Invalid AUC curve value: "{}". Expected '
                       'values are ["PR", "ROC", "PRGAIN"]')


class AUCSummationMethod(enum.Enum):
    INTERPOLATION = "interpolation"
    MAJORING = "majoring"
    MINORING = "minoring"

    @staticmethod
    def from_str(key):
        return _member(AUCSummationMethod, key, str.capitalize, 'Invalid AUC summation method '
                       'value: "{}". Expected values are ["interpolation", "majoring", "minoring"]')


def to_list(x) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def parse_init_thresholds(thresholds, default_threshold=0.5) -> list:
    """The thresholds as a list (each checked to lie in [0, 1]), else `[default_threshold]`."""
    if thresholds is not None:
        invalid = [t for t in to_list(thresholds) if t is None or t < 0 or t > 1]
        if invalid:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {invalid}")
    return to_list(default_threshold if thresholds is None else thresholds)


def is_evenly_distributed_thresholds(thresholds) -> bool:
    """Whether the (3 or more) thresholds are i / (n - 1), i = 0..n-1, within Keras' epsilon."""
    n = len(thresholds)
    if n < 3:
        return False
    even = np.arange(n, dtype=np.float32) / (n - 1)
    return bool(np.allclose(thresholds, even, atol=EPSILON))


def filter_top_k(x, k):
    """`x` with all but the `k` largest entries of its last axis set to NEG_INF."""
    _, indices = top_k_op(x, k)
    mask = reduction.reduce_sum(one_hot(indices, shape(x)[-1], axis=-1, dtype=x.dtype), axis=-2)
    return x * mask + NEG_INF * (1.0 - mask)


def _flat(x):
    return reshape(x, [-1])


def _check_segment_shapes(data, segment_ids) -> None:
    """Keras' segment_sum check (its error where labels and predictions differ in size)."""
    d, s = data.shape, segment_ids.shape
    if s.rank == 1 and d.rank is not None and d.rank >= 1 and s[0] is not None and \
            d[0] is not None and s[0] != d[0]:
        raise ValueError("Argument `segment_ids` and `data` should have same leading dimension. "
                         f"Got {tuple(s.as_list())} v.s. {tuple(d.as_list())}.")


def _bucket_counts(labels, buckets, num_thresholds: int, multi_label: bool):
    """Per threshold, the sum of `labels` whose prediction is above it: bucket sums, summed
    from the top bucket down. Shape (T,), or (T, labels) for multi-label inputs."""
    if not multi_label:
        _check_segment_shapes(labels, buckets)
        per_bucket = unsorted_segment_sum(labels, buckets, num_thresholds)
        return cumsum(per_bucket, reverse=True)
    # One segment sum for all labels: label l's buckets are offset by l * T.
    num_labels = shape(labels)[1]
    offsets = reshape(array_range.range(num_labels) * num_thresholds, [1, -1])
    ids = arithmetic.select_v2(comparison.less(buckets, 0), num_labels * num_thresholds,
                               buckets + offsets)
    total = num_labels * num_thresholds + 1
    sums = unsorted_segment_sum(_flat(labels), _flat(ids), total)[:-1]
    per_bucket = transpose(reshape(sums, [num_labels, num_thresholds]))
    return cumsum(per_bucket, axis=0, reverse=True)


def _update_evenly(variables, y_true, y_pred, thresholds, multi_label, sample_weight,
                   label_weights, thresholds_with_epsilon) -> None:
    num_thresholds = int(thresholds.shape[0])
    weights = None
    if sample_weight is not None:
        weights = broadcast_to(cast(sample_weight, y_pred.dtype), shape(y_pred))
        if not multi_label:
            weights = _flat(weights)
    if label_weights is not None:
        lw = broadcast_to(expand_dims(label_weights, 0), shape(y_pred))
        lw = lw if multi_label else _flat(lw)
        weights = lw if weights is None else weights * lw
    y_pred = math.clip_by_value(y_pred, 0.0, 1.0)
    y_true = cast(cast(y_true, dtypes.bool), y_true.dtype)
    if not multi_label:
        y_true, y_pred = _flat(y_true), _flat(y_pred)
    if weights is None:
        true_labels, false_labels = y_true * 1.0, (1.0 - y_true) * 1.0
    else:
        weights = cast(weights, y_true.dtype)
        true_labels, false_labels = y_true * weights, (1.0 - y_true) * weights
    # A prediction must be strictly above a threshold: p lies in bucket ceil(p * (T-1)) - 1.
    buckets = math.ceil(y_pred * float(num_thresholds - 1)) - 1.0
    if thresholds_with_epsilon:  # the first threshold is below 0: every prediction passes it
        buckets = arithmetic.maximum(buckets, 0.0)
    buckets = cast(buckets, dtypes.int32)
    tp = _bucket_counts(true_labels, buckets, num_thresholds, multi_label)
    fp = _bucket_counts(false_labels, buckets, num_thresholds, multi_label)
    axis = 0 if multi_label else None
    if ConfusionMatrix.TRUE_POSITIVES in variables:
        variables[ConfusionMatrix.TRUE_POSITIVES].assign_add(tp)
    if ConfusionMatrix.FALSE_POSITIVES in variables:
        variables[ConfusionMatrix.FALSE_POSITIVES].assign_add(fp)
    if ConfusionMatrix.TRUE_NEGATIVES in variables:
        total_false = reduction.reduce_sum(false_labels, axis=axis)
        variables[ConfusionMatrix.TRUE_NEGATIVES].assign_add(total_false - fp)
    if ConfusionMatrix.FALSE_NEGATIVES in variables:
        total_true = reduction.reduce_sum(true_labels, axis=axis)
        variables[ConfusionMatrix.FALSE_NEGATIVES].assign_add(total_true - tp)


def _update_by_comparison(variables, y_true, y_pred, thresholds, multi_label, sample_weight,
                          label_weights) -> None:
    # (T, N) or (T, N, labels): each prediction against each threshold.
    if multi_label:
        preds, labels = expand_dims(y_pred, 0), expand_dims(cast(y_true, dtypes.bool), 0)
        thresholds = reshape(thresholds, [-1, 1, 1])
    else:
        preds, labels = reshape(y_pred, [1, -1]), reshape(cast(y_true, dtypes.bool), [1, -1])
        thresholds = reshape(thresholds, [-1, 1])
    pred_is_pos = comparison.greater(preds, thresholds)
    weights = None
    if sample_weight is not None:
        weights = broadcast_to(cast(sample_weight, y_pred.dtype), shape(y_pred))
    if label_weights is not None and not multi_label:
        lw = broadcast_to(expand_dims(label_weights, 0), shape(y_pred))
        weights = lw if weights is None else weights * lw
    if weights is not None:
        weights = expand_dims(weights, 0) if multi_label else reshape(weights, [1, -1])

    def add(var, label, pred):
        hit = comparison.logical_and(label, pred)
        if weights is None:
            values = cast(hit, var.dtype)
        else:
            values = arithmetic.select_v2(hit, cast(weights, var.dtype),
                                          cast(0.0, var.dtype))
        var.assign_add(reduction.reduce_sum(values, axis=1))

    pred_is_neg = comparison.logical_not(pred_is_pos)
    label_is_neg = comparison.logical_not(labels)
    conditions = {ConfusionMatrix.TRUE_POSITIVES: (labels, pred_is_pos),
                  ConfusionMatrix.FALSE_NEGATIVES: (labels, pred_is_neg),
                  ConfusionMatrix.FALSE_POSITIVES: (label_is_neg, pred_is_pos),
                  ConfusionMatrix.TRUE_NEGATIVES: (label_is_neg, pred_is_neg)}
    for key, (label, pred) in conditions.items():
        if key in variables:
            add(variables[key], label, pred)


def update_confusion_matrix_variables(variables, y_true, y_pred, thresholds, top_k=None,
                                      class_id=None, sample_weight=None, multi_label=False,
                                      label_weights=None,
                                      thresholds_distributed_evenly=False) -> None:
    """Adds this batch's confusion counts to `variables` ({ConfusionMatrix: variable})."""
    if multi_label and label_weights is not None:
        raise ValueError("`label_weights` for multilabel data should be handled outside of "
                         "`update_confusion_matrix_variables` when `multi_label` is True.")
    if not variables:
        return
    invalid = [key for key in variables if key not in list(ConfusionMatrix)]
    if len(invalid) == len(variables):
        raise ValueError("Please provide at least one valid confusion matrix variable to "
                         f'update. Valid variable key options are: "{list(ConfusionMatrix)}". '
                         f'Received: "{variables.keys()}"')
    if invalid:
        raise ValueError(f'Invalid keys: "{invalid}". Valid variable key options are: '
                         f'"{list(ConfusionMatrix)}"')
    dtype = next(iter(variables.values())).dtype
    y_true = cast(convert_to_tensor(y_true), dtype)
    y_pred = cast(convert_to_tensor(y_pred), dtype)
    thresholds_with_epsilon = bool(thresholds[0] < 0.0 or thresholds[-1] > 1.0)
    thresholds = convert_to_tensor(np.asarray(thresholds, dtype=dtype.np_dtype))
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = expand_dims(cast(convert_to_tensor(sample_weight), dtype), -1)
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight,
                                                          expand_rank_1=False)
    if top_k is not None:
        y_pred = filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.shape.rank == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape "
                             f"(num_samples, num_classes), found shape: {y_pred.shape}")
        y_true = y_true[..., class_id, None]
        y_pred = y_pred[..., class_id, None]
    if label_weights is not None:
        label_weights = cast(convert_to_tensor(label_weights), dtype)
    if thresholds_distributed_evenly:
        _update_evenly(variables, y_true, y_pred, thresholds, multi_label, sample_weight,
                       label_weights, thresholds_with_epsilon)
    else:
        _update_by_comparison(variables, y_true, y_pred, thresholds, multi_label,
                              sample_weight, label_weights)
