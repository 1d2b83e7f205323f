"""`tf.keras.callbacks.LearningRateScheduler`: sets the optimizer's learning rate from
`schedule(epoch, lr)` at the start of each epoch."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.callbacks.callback import Callback
from ndflow.keras.progbar import print_msg


def learning_rate_value(optimizer) -> float:
    """The optimizer's current learning rate as a Python float (a variable, tensor, NumPy
    value or float)."""
    lr = optimizer.learning_rate
    if isinstance(lr, Tensor):
        lr = lr.numpy()
    return float(np.asarray(lr))


def log_learning_rates(model, logs: dict) -> None:
    """Adds `learning_rate` (or `learning_rate_<name>` per optimizer of a multi-optimizer)
    to an epoch's logs, as Keras' LR callbacks do."""
    optimizer = model.optimizer
    if hasattr(optimizer, "optimizers"):
        for opt in optimizer.optimizers:
            logs[f"learning_rate_{opt.name}"] = learning_rate_value(opt)
    else:
        logs["learning_rate"] = learning_rate_value(optimizer)


@keras_export("keras.callbacks.LearningRateScheduler")
class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch from a schedule.

    Args:
      schedule: a function `(epoch, lr) -> new_lr` (epoch counted from 0, lr the current
        rate as a float); a one-argument `schedule(epoch)` is accepted too.
      verbose: 1 prints each setting.

    Example:

    >>> scheduler = tf.keras.callbacks.LearningRateScheduler(
    ...     lambda epoch, lr: lr if epoch < 10 else lr * 0.9)
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def _update_optimizer_lr(self, optimizer, epoch):
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            learning_rate = self.schedule(epoch, learning_rate_value(optimizer))
        except TypeError:  # the old one-argument schedules
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, np.float32, np.float64)):
            raise ValueError("The output of the `schedule` function should be a float. "
                             f"Got: {learning_rate}")
        optimizer.learning_rate = learning_rate
        return learning_rate

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if hasattr(optimizer, "optimizers"):
            for opt in optimizer.optimizers:
                learning_rate = self._update_optimizer_lr(opt, epoch)
                if self.verbose > 0:
                    print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting "
                              f"{opt.name} learning rate to {learning_rate}.")
        else:
            learning_rate = self._update_optimizer_lr(optimizer, epoch)
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate "
                          f"to {learning_rate}.")

    def on_epoch_end(self, epoch, logs=None):
        log_learning_rates(self.model, logs or {})
