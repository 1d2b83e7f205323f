"""`tf.keras.metrics` from probabilistic and hinge losses (Keras 3): KLDivergence, Poisson,
BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy, Hinge,
SquaredHinge, CategoricalHinge — the mean of Keras' loss function over the samples seen."""

from __future__ import annotations

from ndflow.keras import loss_functions as losses
from ndflow.keras.metrics.base_metric import export
from ndflow.keras.metrics.reduction_metrics import MeanMetricWrapper, mean_wrapper_class

KLDivergence = mean_wrapper_class(
    "KLDivergence", losses.kl_divergence, "kl_divergence", None, __name__,
    "The mean Kullback-Leibler divergence sum(y_true * log(y_true / y_pred)).")
Poisson = mean_wrapper_class(
    "Poisson", losses.poisson, "poisson", None, __name__,
    "The mean Poisson loss y_pred - y_true * log(y_pred).")
Hinge = mean_wrapper_class(
    "Hinge", losses.hinge, "hinge", "down", __name__,
    "The mean hinge loss max(1 - y_true * y_pred, 0) ({0, 1} labels become {-1, 1}).")
SquaredHinge = mean_wrapper_class(
    "SquaredHinge", losses.squared_hinge, "squared_hinge", "down", __name__,
    "The mean squared hinge loss.")
CategoricalHinge = mean_wrapper_class(
    "CategoricalHinge", losses.categorical_hinge, "categorical_hinge", "down", __name__,
    "The mean categorical hinge loss.")


@export("BinaryCrossentropy")
class BinaryCrossentropy(MeanMetricWrapper):
    """The binary cross-entropy of the predictions, as a running (weighted) mean over the
    samples passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      from_logits: whether `y_pred` holds logits rather than probabilities.
      label_smoothing: in [0, 1]: targets move toward 0.5 by this share.
    """

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0):
        super().__init__(losses.binary_crossentropy, name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing)
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self._direction = "down"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing}


@export("CategoricalCrossentropy")
class CategoricalCrossentropy(MeanMetricWrapper):
    """The categorical cross-entropy of one-hot labels, as a running (weighted) mean over
    the samples passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      from_logits: whether `y_pred` holds logits rather than probabilities.
      label_smoothing: in [0, 1]: the share of each target moved to the uniform
        distribution.
      axis: the classes axis (default the last).
    """

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0, axis=-1):
        super().__init__(losses.categorical_crossentropy, name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis
        self._direction = "down"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


@export("SparseCategoricalCrossentropy")
class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The categorical cross-entropy of integer labels, as a running (weighted) mean over
    the samples passed to `update_state`.

    Args:
      name: the metric's name.
      dtype: the dtype of the state and result (default floatx).
      from_logits: whether `y_pred` holds logits rather than probabilities.
      ignore_class: optional class index whose samples get a loss of 0.
      axis: the classes axis (must be the last).
    """

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False,
                 ignore_class=None, axis=-1):
        super().__init__(losses.sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self.from_logits = from_logits
        self.ignore_class = ignore_class
        self.axis = axis
        self._direction = "down"

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "from_logits": self.from_logits,
                "ignore_class": self.ignore_class, "axis": self.axis}
