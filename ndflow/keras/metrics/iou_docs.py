"""The docstrings of the IoU metrics (iou_metrics.py; attached at its end)."""

from __future__ import annotations

from ndflow.core.doc_tables import docs_with_args

_ARGS = {  # the descriptions of the arguments several functions share
    "num_classes": "the number of classes.",
    "target_class_ids": "the classes whose IoU is averaged.",
    "name": "the metric's name.",
    "dtype": "the dtype of the accumulated confusion matrix (default int).",
    "ignore_class": "optional class id whose targets are not counted (e.g. void pixels).",
    "sparse_y_true": "whether targets are class ids (else one-hot / scores, argmax'd).",
    "sparse_y_pred": "whether predictions are class ids (else scores, argmax'd).",
    "axis": "the classes axis (default the last).",
}

# How the per-class IoU is computed and averaged.
_PER_CLASS = """
    The IoU of a class is `tp / (tp + fp + fn)` from a confusion matrix accumulated over
    the batches; classes that never occur (in targets or predictions) are left out of the
    mean."""

DOCS = docs_with_args(_ARGS, {
    "IoU": (
        "Intersection-over-union, averaged over the classes `target_class_ids`.\n"
        + _PER_CLASS,
        ["num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_true",
         "sparse_y_pred", "axis: the classes axis for non-sparse inputs (default the last)."],
        """

    Raises:
      ValueError: a target class id of `num_classes` or more.""", """

    Example:

    >>> m = tf.keras.metrics.IoU(num_classes=2, target_class_ids=[0])
    >>> _ = m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    >>> round(float(m.result()), 4)
    0.3333"""),
    "BinaryIoU": (
        "Intersection-over-union of binary masks: predictions at or above `threshold` are\n"
        "    class 1, below class 0; the IoU is averaged over `target_class_ids`.",
        ["target_class_ids: the classes (0 and/or 1) whose IoU is averaged.",
         "threshold: the decision threshold on `y_pred`.", "name",
         "dtype: the dtype of the accumulated confusion matrix."],
        ""),
    "MeanIoU": (
        "Mean intersection-over-union over all classes (semantic segmentation's usual\n"
        "    score).\n"
        + _PER_CLASS,
        ["num_classes", "name", "dtype", "ignore_class", "sparse_y_true", "sparse_y_pred",
         "axis: the classes axis for non-sparse inputs (default the last)."],
        ""),
    "OneHotIoU": (
        "Intersection-over-union for one-hot targets (argmax'd), averaged over\n"
        "    `target_class_ids`.",
        ["num_classes", "target_class_ids", "name", "dtype", "ignore_class",
         "sparse_y_pred: whether predictions are class ids (default: scores, argmax'd).", "axis"],
        ""),
    "OneHotMeanIoU": (
        "Mean intersection-over-union over all classes, for one-hot targets (argmax'd).",
        ["num_classes", "name", "dtype", "ignore_class",
         "sparse_y_pred: whether predictions are class ids (default: scores, argmax'd).", "axis"],
        ""),
})
