"""`tf.keras.callbacks.Callback`: the base class, with every hook Keras 3's `fit`, `evaluate`
and `predict` call (all no-ops here)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export


def default(method):
    """Marks a base hook, so that `is_default(obj.hook)` tells whether a subclass overrode it
    (Keras' `utils.default`)."""
    method._is_default = True
    return method


def is_default(method) -> bool:
    return getattr(method, "_is_default", False)


@keras_export("keras.callbacks.Callback")
class Callback:
    """Base class of callbacks: override the `on_*` hooks of interest.

    `params` (set by `set_params`) holds the run's parameters (`verbose`, `epochs`, `steps`);
    `model` (set by `set_model`) is the model being trained, evaluated or used to predict.
    `logs` dicts hold the metric results (`val_` prefixed for validation).
    """

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    @default
    def on_batch_begin(self, batch, logs=None):
        """A backwards compatibility alias for `on_train_batch_begin`."""

    @default
    def on_batch_end(self, batch, logs=None):
        """A backwards compatibility alias for `on_train_batch_end`."""

    @default
    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of an epoch (training only)."""

    @default
    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of an epoch (training only) with the epoch's metric results,
        validation ones prefixed with `val_`."""

    @default
    def on_train_batch_begin(self, batch, logs=None):
        """Called at the beginning of a training batch; calls `on_batch_begin`."""
        self.on_batch_begin(batch, logs=logs)

    @default
    def on_train_batch_end(self, batch, logs=None):
        """Called at the end of a training batch with the metrics so far; calls
        `on_batch_end`."""
        self.on_batch_end(batch, logs=logs)

    @default
    def on_test_batch_begin(self, batch, logs=None):
        """Called at the beginning of a batch in `evaluate` (and validation in `fit`)."""

    @default
    def on_test_batch_end(self, batch, logs=None):
        """Called at the end of a batch in `evaluate` (and validation in `fit`)."""

    @default
    def on_predict_batch_begin(self, batch, logs=None):
        """Called at the beginning of a batch in `predict`."""

    @default
    def on_predict_batch_end(self, batch, logs=None):
        """Called at the end of a batch in `predict`."""

    @default
    def on_train_begin(self, logs=None):
        """Called at the beginning of training."""

    @default
    def on_train_end(self, logs=None):
        """Called at the end of training with the last epoch's logs."""

    @default
    def on_test_begin(self, logs=None):
        """Called at the beginning of evaluation or validation."""

    @default
    def on_test_end(self, logs=None):
        """Called at the end of evaluation or validation with the last batch's logs."""

    @default
    def on_predict_begin(self, logs=None):
        """Called at the beginning of prediction."""

    @default
    def on_predict_end(self, logs=None):
        """Called at the end of prediction."""
