"""Keras metrics (`tf.keras.metrics`, also `tf.metrics`): the Metric base and the metrics
built on it. Only submodules are imported here: the package is the public namespace."""

from ndflow.keras.metrics import (  # noqa: F401 - their exports
    accuracy_metrics,
    auc_metric,
    base_metric,
    confusion_metrics,
    confusion_utils,
    correlation_metrics,
    f_score_metrics,
    iou_metrics,
    metric_lookup,
    probabilistic_metrics,
    reduction_metrics,
    regression_metrics,
)
