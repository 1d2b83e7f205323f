"""`tf.keras.callbacks.ModelCheckpoint`: saves the model (`model.save`) or its weights
(`model.save_weights`) every epoch or every `save_freq` batches, optionally only when the
monitored metric improves. Keras 3's file rules: weights go to a `.weights.h5` file, a whole
model to a `.keras` (or legacy `.h5`) file; `filepath` is formatted with `epoch` (from 1),
`batch` (from 1, batch-level saving) and the logs, e.g. `"{epoch:02d}-{val_loss:.2f}.keras"`.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.callbacks.monitor_callback import MonitorCallback
from ndflow.keras.callbacks.save_frequency import SaveFrequency
from ndflow.keras.progbar import print_msg


@keras_export("keras.callbacks.ModelCheckpoint")
class ModelCheckpoint(SaveFrequency, MonitorCallback):
    """Saves the model or its weights during training.

    Args:
        filepath: where to save (str or PathLike), with format fields.
        monitor: the metric watched by `save_best_only` (and `mode`).
        verbose: 1 prints Keras' messages.
        save_best_only: save only when `monitor` improves on the best so far (always when it
            is missing or not a scalar, with a warning).
        save_weights_only: `model.save_weights(filepath)` instead of `model.save(filepath)`.
        mode: "auto", "min" or "max".
        save_freq: "epoch" or a number of batches.
        initial_value_threshold: the initial best value of `monitor`.
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath) if isinstance(filepath, os.PathLike) else filepath
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0

        if self.save_freq != "epoch" and not isinstance(self.save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {self.save_freq}. Expected save_freq "
                             "are 'epoch' or integer values")
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, "
                                 "the filepath provided must end in `.weights.h5` (Keras "
                                 f"weights format). Received: filepath={self.filepath}")
        elif not any(self.filepath.endswith(ext) for ext in (".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model "
                             f"format). Received: filepath={self.filepath}")

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(epoch=self._current_epoch, batch=batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch=epoch, batch=None, logs=logs)

    def _should_save_model(self, epoch, batch, logs, filepath) -> bool:
        logs = logs or {}
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.",
                          stacklevel=2)
            return True
        if isinstance(current, (np.ndarray, Tensor)) and len(current.shape) > 0:
            warnings.warn("Can save best model only when `monitor` is a scalar value. "
                          f"Received: {current}. Falling back to `save_best_only=False`.",
                          stacklevel=2)
            return True
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to "
                          f"{current:.5f}, saving model to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _save_model(self, epoch, batch, logs) -> None:
        filepath = self._get_file_path(epoch, batch, logs)
        try:
            if not self._should_save_model(epoch, batch, logs, filepath):
                return
            dirname = os.path.dirname(filepath)
            if dirname and not os.path.exists(dirname):
                os.makedirs(dirname)
            if self.save_weights_only:
                self.model.save_weights(filepath, overwrite=True)
            else:
                self.model.save(filepath, overwrite=True)
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")
        except IsADirectoryError as e:
            raise OSError("Please specify a non-directory filepath for ModelCheckpoint. "
                          f"Filepath used is an existing directory: {filepath}") from e
        except OSError as e:
            if "is a directory" in str(e.args[0] if e.args else "").lower():
                raise OSError("Please specify a non-directory filepath for ModelCheckpoint. "
                              f"Filepath used is an existing directory: {filepath}") from e
            raise

    def _get_file_path(self, epoch, batch, logs) -> str:
        logs = logs or {}
        try:
            # Placeholders such as {epoch:02d}, {batch:02d} and {val_loss:.2f}.
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f"Reason: {e}") from e
