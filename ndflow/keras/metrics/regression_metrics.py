"""`tf.keras.metrics` for regression (Keras 3): the mean of Keras' loss functions as metrics
(MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
MeanSquaredLogarithmicError, LogCoshError), RootMeanSquaredError and CosineSimilarity."""

from __future__ import annotations

from ndflow.keras import loss_functions as losses
from ndflow.keras.metrics.base_metric import EPSILON, export, register_function
from ndflow.keras.metrics.reduction_metrics import Mean, MeanMetricWrapper, mean_wrapper_class
from ndflow.ops import arithmetic, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast

MeanSquaredError = mean_wrapper_class(
    "MeanSquaredError", losses.mean_squared_error, "mean_squared_error", "down", __name__,
    "The mean of the squared errors (y_true - y_pred) ** 2.")
MeanAbsoluteError = mean_wrapper_class(
    "MeanAbsoluteError", losses.mean_absolute_error, "mean_absolute_error", "down", __name__,
    "The mean of the absolute errors |y_true - y_pred|.")
MeanAbsolutePercentageError = mean_wrapper_class(
    "MeanAbsolutePercentageError", losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "down", __name__,
    "The mean of 100 * |y_true - y_pred| / |y_true|.")
MeanSquaredLogarithmicError = mean_wrapper_class(
    "MeanSquaredLogarithmicError", losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "down", __name__,
    "The mean of (log(y_true + 1) - log(y_pred + 1)) ** 2.")
LogCoshError = mean_wrapper_class(
    "LogCoshError", losses.log_cosh, "logcosh", "down", __name__,
    "The mean of log(cosh(y_pred - y_true)).")


@export("RootMeanSquaredError")
class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype=dtype)
        self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
        return super().update_state(math.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return math.sqrt(super().result())


def _l2_normalize(x, axis):
    """Keras' `normalize(x, order=2)`: x * min(rsqrt(sum(x ** 2)), 1 / epsilon)."""
    inv_norm = math.rsqrt(reduction.reduce_sum(math.square(x), axis=axis, keepdims=True))
    return x * arithmetic.minimum(inv_norm, 1.0 / EPSILON)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The cosine of the angle between `y_true` and `y_pred` along `axis`."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = cast(y_true, y_pred.dtype)
    y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    return reduction.reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis),
                                axis=axis)


register_function(cosine_similarity)


@export("CosineSimilarity")
class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity of `y_true` and `y_pred` along `axis`."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(cosine_similarity, name, dtype=dtype, axis=axis)
        self._direction = "up"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}  # Keras leaves `axis` out
