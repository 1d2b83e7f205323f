"""`tf.keras.callbacks.EarlyStopping`: stops `fit` when the monitored metric stops improving."""

from __future__ import annotations

import warnings

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.monitor_callback import MonitorCallback
from ndflow.keras.progbar import print_msg


@keras_export("keras.callbacks.EarlyStopping")
class EarlyStopping(MonitorCallback):
    """Sets `model.stop_training` once `monitor` has not improved (by more than `min_delta`)
    for `patience` epochs, never at epoch 0 nor before `start_from_epoch`.

    Args:
      monitor: the logged quantity to watch (default "val_loss").
      mode: "min", "max", or "auto" (max for accuracy-like names, else min).
      min_delta: the smallest change that counts as an improvement.
      patience: how many epochs without improvement to wait before stopping.
      verbose: 1 prints a message when stopping or restoring.
      baseline: optional value to reach: while no epoch beats it, the patience counter
        is not reset.
      restore_best_weights: whether to set back, when stopping, the weights of the best
        epoch (the first monitored epoch's if none improved).
      start_from_epoch: the number of warm-up epochs not watched.

    Example:

    >>> stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2)
    >>> model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    >>> model.compile(loss="mse")
    >>> history = model.fit(np.zeros((8, 1)), np.zeros((8, 1)), epochs=50, callbacks=[stop],
    ...                     verbose=0)
    >>> len(history.epoch) < 50
    True
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.start_from_epoch = start_from_epoch

    def on_train_begin(self, logs=None):
        # An instance may be reused across fit calls.
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()  # once the model's metrics are built
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch

        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            # The wait restarts only when both the baseline and the previous best are beaten.
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg("Restoring model weights from the end of the best epoch: "
                          f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        logs = logs or {}
        monitor_value = logs.get(self.monitor)
        if monitor_value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(list(logs.keys()))}",
                          stacklevel=2)
        return monitor_value
