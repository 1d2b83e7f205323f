"""`tf.keras.metrics` for regression (Keras 3): the mean of Keras' loss functions as metrics
(MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
MeanSquaredLogarithmicError, LogCoshError), RootMeanSquaredError, CosineSimilarity and
R2Score."""

from __future__ import annotations

import warnings

from ndflow.core import context, dtypes
from ndflow.keras import loss_functions as losses
from ndflow.keras.metrics.base_metric import (
    EPSILON,
    Metric,
    check_2d_inputs,
    export,
    register_function,
)
from ndflow.keras.metrics.reduction_metrics import Mean, MeanMetricWrapper, mean_wrapper_class
from ndflow.ops import arithmetic, comparison, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, shape, size
from ndflow.ops.array_fill import broadcast_to, zeros
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
    """The root mean squared error: the square root of the running (weighted) mean of
    `(y_true - y_pred)**2` over the samples passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Example:

    >>> m = tf.keras.metrics.RootMeanSquaredError()
    >>> m.update_state([[0.0, 0.0]], [[3.0, 4.0]])
    >>> round(float(m.result()), 4)
    3.5355
    """

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
    """The cosine similarity of `y_true` and `y_pred` along `axis` (1 for vectors pointing
    the same way), as a running (weighted) mean over the samples passed to
    `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      axis: the vectors' axis (default the last).
    """

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(cosine_similarity, name, dtype=dtype, axis=axis)
        self._direction = "up"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}  # Keras leaves `axis` out


_CLASS_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")


@export("R2Score")
class R2Score(Metric):
    """The coefficient of determination R^2 = 1 - SS_res / SS_tot of 2-D regression
    outputs, accumulated over the batches (1 is a perfect fit, 0 predicting the mean).

    Args:
      class_aggregation: how the per-column scores combine: "uniform_average" (the
        default), "variance_weighted_average", or None (one score per column).
      num_regressors: the number of independent variables, for the adjusted R^2 (0: the
        plain score).
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).

    Raises:
      ValueError: an unknown `class_aggregation` or a negative `num_regressors`; in
        `update_state`, inputs that are not 2-D with a known last dimension.

    Example:

    >>> m = tf.keras.metrics.R2Score()
    >>> m.update_state([[1.0], [2.0], [3.0]], [[1.0], [2.0], [3.0]])
    >>> float(m.result())
    1.0
    """

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"
        if class_aggregation not in _CLASS_AGGREGATIONS:
            raise ValueError("Invalid value for argument `class_aggregation`. Expected one of "
                             f"{_CLASS_AGGREGATIONS}. Received: "
                             f"class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value "
                             f">= 0. Received: num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable(shape=(), initializer="zeros",
                                             name="num_samples")
        self._built = False

    def _build(self, y_true_shape, y_pred_shape) -> None:
        check_2d_inputs("R2Score", y_true_shape, y_pred_shape)
        if y_pred_shape[-1] is None or y_true_shape[-1] is None:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim), "
                             "with output_dim fully defined (not None). Received input shapes: "
                             f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")
        n = y_pred_shape[-1]
        for attr, var_name in (("squared_sum", "squared_sum"), ("sum", "sum"),
                               ("total_mse", "residual"), ("count", "count")):
            setattr(self, attr, self.add_variable(shape=[n], initializer="zeros",
                                                  name=var_name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
        if not self._built:
            self._build(tuple(y_true.shape.as_list()), tuple(y_pred.shape.as_list()))
        sample_weight = cast(convert_to_tensor(1 if sample_weight is None else sample_weight),
                             self.dtype)
        if sample_weight.shape.rank == 1:
            sample_weight = expand_dims(sample_weight, 1)
        sample_weight = broadcast_to(sample_weight, shape(y_true))
        weighted_y_true = y_true * sample_weight
        self.sum.assign_add(reduction.reduce_sum(weighted_y_true, axis=0))
        self.squared_sum.assign_add(reduction.reduce_sum(y_true * weighted_y_true, axis=0))
        self.total_mse.assign_add(reduction.reduce_sum(
            math.square(y_true - y_pred) * sample_weight, axis=0))
        self.count.assign_add(reduction.reduce_sum(sample_weight, axis=0))
        self.num_samples.assign_add(cast(size(y_true), self.num_samples.dtype))

    def result(self):
        total_sum, count = self.sum.value(), self.count.value()
        mean = total_sum / count
        total = self.squared_sum.value() - total_sum * mean
        raw_scores = 1.0 - self.total_mse.value() / total
        raw_scores = arithmetic.select_v2(comparison.is_inf(raw_scores), 0.0, raw_scores)
        if self.class_aggregation == "uniform_average":
            score = reduction.reduce_mean(raw_scores)
        elif self.class_aggregation == "variance_weighted_average":
            score = reduction.reduce_sum(total * raw_scores) / reduction.reduce_sum(total)
        else:
            score = raw_scores
        if self.num_regressors == 0:
            return score
        # The adjusted score, unless there are too few samples for it (Keras warns then).
        n = cast(self.num_samples.value(), dtypes.float32)
        p = float(self.num_regressors)
        usable = comparison.less(p, n - 1.0)
        if context.executing_eagerly() and not bool(usable):
            warnings.warn("More independent predictors than datapoints in adjusted R2 score. "
                          "Falling back to standard R2 score." if p > float(n) - 1 else
                          "Division by zero in Adjusted R2 score. Falling back to standard R2 "
                          "score.", stacklevel=2)
        adjusted = 1.0 - (1.0 - score) * (n - 1.0) / arithmetic.maximum(n - p - 1.0, 1.0)
        return arithmetic.select_v2(usable, adjusted, score)

    def reset_state(self):
        for v in self.variables:
            v.assign(zeros(v.shape, dtype=v.dtype))

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
