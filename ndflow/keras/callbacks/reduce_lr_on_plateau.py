"""`tf.keras.callbacks.ReduceLROnPlateau`: multiplies the learning rate by `factor` when the
monitored metric has not improved for `patience` epochs."""

from __future__ import annotations

import warnings

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.learning_rate_scheduler import learning_rate_value, log_learning_rates
from ndflow.keras.callbacks.monitor_callback import MonitorCallback
from ndflow.keras.progbar import print_msg


@keras_export("keras.callbacks.ReduceLROnPlateau")
class ReduceLROnPlateau(MonitorCallback):
    """After `patience` epochs without an improvement larger than `min_delta`, the learning
    rate becomes `max(lr * factor, min_lr)` (when above `min_lr`), then `cooldown` epochs
    pass before epochs count again. The epoch's logs get `learning_rate`.

    Args:
      monitor: the logged quantity to watch (default "val_loss").
      mode: "min", "max", or "auto" (max for accuracy-like names, else min).
      factor: the multiplier applied to the learning rate (below 1).
      patience: how many epochs without improvement to wait.
      verbose: 1 prints a message at each reduction.
      min_delta: the smallest change that counts as an improvement.
      cooldown: epochs to wait after a reduction before counting again.
      min_lr: the lower bound of the learning rate.
      **kwargs: accepted for Keras' signature and ignored.

    Raises:
      ValueError: `factor` of 1 or more.
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self) -> None:
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def _reduce_optimizer_lr(self, optimizer, epoch, name="") -> bool:
        old_lr = learning_rate_value(optimizer)
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            optimizer.learning_rate = new_lr
            if self.verbose > 0:
                name_str = f" {name}" if name else ""
                print_msg(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing{name_str} "
                          f"learning rate to {new_lr}.")
            return True
        return False

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs or {}
        log_learning_rates(self.model, logs)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn("Learning rate reduction is conditioned on metric "
                          f"`{self.monitor}` which is not available. Available metrics are: "
                          f"{','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch):
                self.cooldown_counter = self.cooldown
                self.wait = 0

    def _reduce(self, epoch) -> bool:
        optimizer = self.model.optimizer
        if hasattr(optimizer, "optimizers"):
            reduced = False
            for opt in optimizer.optimizers:
                reduced = self._reduce_optimizer_lr(opt, epoch, f"{opt.name}") or reduced
            return reduced
        return self._reduce_optimizer_lr(optimizer, epoch)

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0
