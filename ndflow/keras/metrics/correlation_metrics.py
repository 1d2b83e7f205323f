"""`tf.keras.metrics.pearson_correlation` / `concordance_correlation` (per sample, along
`axis`) and the mean metrics around them (Keras 3)."""

from __future__ import annotations

from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.metrics.base_metric import EPSILON, export, register_function
from ndflow.keras.metrics.reduction_metrics import MeanMetricWrapper
from ndflow.ops import math, norms, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


def _pair(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = cast(y_true, y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


@export("pearson_correlation")
def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation coefficient of `y_true` and `y_pred` along `axis`, per
    sample: 1 for a perfect linear relation, -1 for a perfect inverse one.

    Args:
      y_true: the targets.
      y_pred: the predictions, of `y_true`'s shape.
      axis: the axis along which to correlate (default the last).

    Returns:
      A float tensor without `axis`.

    Example:

    >>> tf.keras.metrics.pearson_correlation([[1.0, 2.0, 3.0]], [[2.0, 4.0, 6.0]]).numpy().round(4)
    array([1.], dtype=float32)
    """
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = y_true - reduction.reduce_mean(y_true, axis=axis, keepdims=True)
    y_pred = y_pred - reduction.reduce_mean(y_pred, axis=axis, keepdims=True)
    y_true = y_true / norms.reduce_std(y_true, axis=axis, keepdims=True)
    y_pred = y_pred / norms.reduce_std(y_pred, axis=axis, keepdims=True)
    return reduction.reduce_mean(y_true * y_pred, axis=axis)


@export("concordance_correlation")
def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient along `axis`, per sample: agreement of
    predictions with targets (1 only when they are equal, not merely correlated).

    Computed as Keras does: `2 * mean((y_true - mean(y_pred)) * (y_pred - mean(y_pred)))
    / (var(y_true) + var(y_pred) + (mean(y_true) - mean(y_pred))**2)` (note Keras'
    covariance term centres `y_true` on the predictions' mean).

    Args:
      y_true: the targets.
      y_pred: the predictions, of `y_true`'s shape.
      axis: the axis along which to compute (default the last).

    Returns:
      A float tensor without `axis`.
    """
    y_true, y_pred = _pair(y_true, y_pred)
    true_mean = reduction.reduce_mean(y_true, axis=axis, keepdims=True)
    pred_mean = reduction.reduce_mean(y_pred, axis=axis, keepdims=True)
    true_var = norms.reduce_variance(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = norms.reduce_variance(y_pred - pred_mean, axis=axis, keepdims=True)
    covar = (y_true - pred_mean) * (y_pred - pred_mean)  # Keras' formula, as it is
    norm = true_var + pred_var + math.square(true_mean - pred_mean)
    return reduction.reduce_mean(2.0 * covar / (norm + EPSILON), axis=axis)


register_function(pearson_correlation)
register_function(concordance_correlation)


class _Correlation(MeanMetricWrapper):
    _fn_default = None

    def __init__(self, name, dtype, axis):
        super().__init__(fn=type(self)._fn_default, name=name, dtype=dtype, axis=axis)
        self.axis = axis
        self._direction = "up"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


@export("PearsonCorrelation")
class PearsonCorrelation(_Correlation):
    """The Pearson correlation of targets and predictions along `axis`, as a running
    (weighted) mean over the samples passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      axis: the axis along which to correlate (default the last).
    """

    _fn_default = staticmethod(pearson_correlation)

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(name, dtype, axis)


@export("ConcordanceCorrelation")
class ConcordanceCorrelation(_Correlation):
    """Lin's concordance correlation of targets and predictions along `axis` (see
    `keras.metrics.concordance_correlation`), as a running (weighted) mean over samples.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      axis: the axis along which to compute (default the last).
    """

    _fn_default = staticmethod(concordance_correlation)

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(name, dtype, axis)
