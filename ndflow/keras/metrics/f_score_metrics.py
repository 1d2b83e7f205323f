"""`tf.keras.metrics.FBetaScore` and `F1Score` (Keras 3): the F-beta score of multi-class or
multi-label predictions, per class (`average=None`) or averaged ("micro" over all entries,
"macro" over classes, "weighted" by the classes' true counts). Without a threshold, each
row's largest prediction is the positive one."""

from __future__ import annotations

from ndflow.core.doc_tables import attach
from ndflow.keras.metrics import f_score_docs
from ndflow.keras.metrics.base_metric import EPSILON, Metric, check_2d_inputs, export
from ndflow.ops import comparison, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.cast import cast

_AVERAGES = (None, "micro", "macro", "weighted")
_VARIABLES = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")


@export("FBetaScore")
class FBetaScore(Metric):
    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"
        if average not in _AVERAGES:
            raise ValueError("Invalid `average` argument value. Expected one of: {None, "
                             f"'micro', 'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError("Invalid `beta` argument value. It should be a Python float. "
                             f"Received: beta={beta} of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: "
                             f"beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python "
                                 f"float. Received: threshold={threshold} of type "
                                 f"'{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < "
                                 f"threshold <= 1. Received: threshold={threshold}")
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, y_true_shape, y_pred_shape) -> None:
        check_2d_inputs("FBetaScore", y_true_shape, y_pred_shape)
        if y_pred_shape[-1] is None or y_true_shape[-1] is None:
            raise ValueError("FBetaScore expects 2D inputs with shape (batch_size, output_dim), "
                             "with output_dim fully defined (not None). Received input shapes: "
                             f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")
        shape = () if self.average == "micro" else (y_pred_shape[-1],)
        for var_name in _VARIABLES:
            setattr(self, var_name, self.add_variable(shape=shape, initializer="zeros",
                                                      dtype=self.dtype, name=var_name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        if not self._built:
            self._build(tuple(y_true.shape.as_list()), tuple(y_pred.shape.as_list()))
        if self.threshold is None:
            row_max = reduction.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = comparison.logical_and(comparison.greater_equal(y_pred, row_max),
                                            comparison.greater(math.abs(y_pred), 1e-9))
        else:
            y_pred = comparison.greater(y_pred, self.threshold)
        y_pred = cast(y_pred, self.dtype)
        if sample_weight is not None:
            sample_weight = expand_dims(cast(convert_to_tensor(sample_weight), self.dtype), 1)

        def weighted_sum(value):
            if sample_weight is not None:
                value = value * sample_weight
            return reduction.reduce_sum(value, axis=self.axis)

        self.true_positives.assign_add(weighted_sum(y_pred * y_true))
        self.false_positives.assign_add(weighted_sum(y_pred * (1.0 - y_true)))
        self.false_negatives.assign_add(weighted_sum((1.0 - y_pred) * y_true))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    def result(self):
        tp = self.true_positives.value()
        precision = tp / (tp + self.false_positives.value() + EPSILON)
        recall = tp / (tp + self.false_negatives.value() + EPSILON)
        beta2 = self.beta ** 2
        score = precision * recall / (beta2 * precision + recall + EPSILON) * (1 + beta2)
        if self.average == "weighted":
            weights = self.intermediate_weights.value()
            return reduction.reduce_sum(score * (weights / (reduction.reduce_sum(weights) +
                                                            EPSILON)))
        if self.average is not None:
            return reduction.reduce_mean(score)
        return score

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta,
                "threshold": self.threshold}


@export("F1Score")
class F1Score(FBetaScore):
    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


attach(globals(), f_score_docs.DOCS)
