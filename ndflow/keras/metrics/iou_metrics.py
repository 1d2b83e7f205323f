"""`tf.keras.metrics` intersection-over-union (Keras 3): IoU, BinaryIoU, MeanIoU, OneHotIoU,
OneHotMeanIoU. A (num_classes, num_classes) confusion matrix of true against predicted
classes (int64 by default, as Keras: float weights are truncated) accumulates; the result is
the mean over the target classes of tp / (tp + fp + fn), classes never seen left out."""

from __future__ import annotations

import warnings

from ndflow.core import dtypes
from ndflow.core.doc_tables import attach
from ndflow.keras.metrics import iou_docs
from ndflow.keras.metrics.base_metric import EPSILON, Metric, export
from ndflow.ops import arithmetic, comparison, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import broadcast_to, ones_like, zeros
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.cast import cast
from ndflow.ops.linalg_diag import matrix_diag_part


def confusion_matrix(labels, predictions, num_classes: int, weights=None, dtype="int32"):
    """Keras' `metrics_utils.confusion_matrix`: rows are true classes, columns predicted ones;
    each pair adds its weight (1 without weights)."""
    num_classes = int(num_classes)
    labels = cast(reshape(convert_to_tensor(labels), [-1]), dtypes.int64)
    predictions = cast(reshape(convert_to_tensor(predictions), [-1]), dtypes.int64)
    values = ones_like(predictions, dtype=dtype) if weights is None else \
        cast(convert_to_tensor(weights), dtype)
    cells = unsorted_segment_sum(values, labels * num_classes + predictions,
                                 num_classes * num_classes)
    return reshape(cells, [num_classes, num_classes])


class _IoUBase(Metric):
    """The accumulated confusion matrix of IoU metrics."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype or "int")
        self._direction = "up"
        self.num_classes = num_classes
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_variable(name="total_confusion_matrix",
                                          shape=(num_classes, num_classes),
                                          initializer="zeros", dtype=self.dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.sparse_y_true:
            y_true = reduction.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = reduction.argmax(y_pred, axis=self.axis)
        y_true = reshape(cast(convert_to_tensor(y_true), self.dtype), [-1])
        y_pred = reshape(cast(convert_to_tensor(y_pred), self.dtype), [-1])
        if sample_weight is None:
            sample_weight = 1
        elif (getattr(sample_weight, "dtype", None) is not None and
              "float" in str(sample_weight.dtype) and "int" in self.dtype):
            warnings.warn("You are passing weight as `float`, but dtype is `int`. This may "
                          "result in an incorrect weight due to type casting Consider using "
                          "integer weights.", stacklevel=2)
        sample_weight = cast(convert_to_tensor(sample_weight), self.dtype)
        if sample_weight.shape.rank is not None and sample_weight.shape.rank > 1:
            sample_weight = reshape(sample_weight, [-1])
        sample_weight = broadcast_to(sample_weight, shape(y_true))
        in_bounds = comparison.logical_and(
            comparison.logical_and(comparison.greater_equal(y_true, 0),
                                   comparison.less(y_true, self.num_classes)),
            comparison.logical_and(comparison.greater_equal(y_pred, 0),
                                   comparison.less(y_pred, self.num_classes)))
        if self.ignore_class is not None:
            in_bounds = comparison.logical_and(
                in_bounds, comparison.not_equal(y_true, self.ignore_class))
        none = zeros((), self.dtype)
        y_true = arithmetic.select_v2(in_bounds, y_true, none)
        y_pred = arithmetic.select_v2(in_bounds, y_pred, none)
        sample_weight = arithmetic.select_v2(in_bounds, sample_weight, none)
        current = confusion_matrix(y_true, y_pred, self.num_classes, weights=sample_weight,
                                   dtype=self.dtype)
        return self.total_cm.assign_add(current)

    def reset_state(self):
        self.total_cm.assign(zeros(self.total_cm.shape, dtype=self.total_cm.dtype))


@export("IoU")
class IoU(_IoUBase):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, num_classes=num_classes, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis,
                         dtype=dtype)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which "
                             f"is [0, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self):
        cm = self.total_cm.value()
        true_positives = matrix_diag_part(cm)
        denominator = reduction.reduce_sum(cm, axis=0) + reduction.reduce_sum(cm, axis=1) - \
            true_positives
        ids = convert_to_tensor(self.target_class_ids, dtypes.int32)
        true_positives = cast(gather(true_positives, ids), dtypes.float32)
        denominator = cast(gather(denominator, ids), dtypes.float32)
        valid = comparison.greater(denominator, 1e-9)
        num_valid = reduction.reduce_sum(cast(valid, dtypes.float32))
        iou = arithmetic.select_v2(valid, true_positives / (denominator + EPSILON), 0.0)
        return reduction.reduce_sum(iou, axis=self.axis) / (num_valid + EPSILON)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


@export("BinaryIoU")
class BinaryIoU(IoU):
    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name,
                         dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = cast(convert_to_tensor(y_pred), dtypes.float32)
        y_pred = cast(comparison.greater_equal(y_pred, self.threshold), self.dtype)
        return super().update_state(cast(convert_to_tensor(y_true), self.dtype), y_pred,
                                    sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold,
                "name": self.name, "dtype": self.dtype}


@export("MeanIoU")
class MeanIoU(IoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, num_classes=num_classes,
                         target_class_ids=list(range(num_classes)), axis=axis, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@export("OneHotIoU")
class OneHotIoU(IoU):
    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes=num_classes, target_class_ids=target_class_ids,
                         name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "name": self.name, "dtype": self.dtype, "ignore_class": self.ignore_class,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@export("OneHotMeanIoU")
class OneHotMeanIoU(MeanIoU):
    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes=num_classes, axis=axis, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


attach(globals(), iou_docs.DOCS)
