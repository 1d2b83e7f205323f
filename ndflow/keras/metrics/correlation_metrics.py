"""`tf.keras.metrics.pearson_correlation` / `concordance_correlation` (per sample, along
`axis`) and the mean metrics around them (Keras 3)."""

from __future__ import annotations

from ndflow.core.doc_tables import attach
from ndflow.keras.loss_functions import squeeze_or_expand_to_same_rank
from ndflow.keras.metrics import correlation_docs
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
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = y_true - reduction.reduce_mean(y_true, axis=axis, keepdims=True)
    y_pred = y_pred - reduction.reduce_mean(y_pred, axis=axis, keepdims=True)
    y_true = y_true / norms.reduce_std(y_true, axis=axis, keepdims=True)
    y_pred = y_pred / norms.reduce_std(y_pred, axis=axis, keepdims=True)
    return reduction.reduce_mean(y_true * y_pred, axis=axis)


@export("concordance_correlation")
def concordance_correlation(y_true, y_pred, axis=-1):
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
    _fn_default = staticmethod(pearson_correlation)

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(name, dtype, axis)


@export("ConcordanceCorrelation")
class ConcordanceCorrelation(_Correlation):
    _fn_default = staticmethod(concordance_correlation)

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(name, dtype, axis)


attach(globals(), correlation_docs.DOCS)
