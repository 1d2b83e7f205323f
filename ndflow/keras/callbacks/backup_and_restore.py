"""`tf.keras.callbacks.BackupAndRestore`: fault tolerance as Keras 3 implements it. The model's
weights and optimizer state go to `backup_dir/latest.weights.h5` (Keras' weights format,
written atomically) and the progress to `backup_dir/training_metadata.json`
(`{"epoch": ..., "batch": ...}`) every epoch or every `save_freq` batches; a `fit` that
starts with a backup present loads it and continues at the saved epoch. The directory is
Keras' own: a backup ndflow wrote resumes in Keras and the other way round.
"""

from __future__ import annotations

import json
import os
import shutil

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback
from ndflow.keras.callbacks.save_frequency import SaveFrequency


@keras_export("keras.callbacks.BackupAndRestore")
class BackupAndRestore(SaveFrequency, Callback):
    """Backs up the training state so that an interrupted `fit` resumes where it stopped.

    Args:
        backup_dir: where the backup lives (must be specific to this training run).
        save_freq: "epoch", or an integer: back up every that many batches.
        double_checkpoint: keep the previous backup too (`*.bkp`), used when the latest
            one cannot be read.
        delete_checkpoint: delete the backup when training ends normally.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        super().__init__()
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self.backup_dir = os.fspath(backup_dir)
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._training_metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._prev_weights_path = f"{self._weights_path}.bkp"
        self._prev_training_metadata_path = f"{self._training_metadata_path}.bkp"
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError("Invalid value for argument `save_freq`. Received: "
                             f"save_freq={save_freq}. Expected either 'epoch' or an integer "
                             "value.")

    def on_train_begin(self, logs=None):
        try:
            self._load_model()
        except OSError:
            # the latest weights may be corrupted: fall back to the previous backup
            if not os.path.exists(self._prev_weights_path):
                raise
            shutil.copyfile(self._prev_weights_path, self._weights_path)
            if os.path.exists(self._prev_training_metadata_path):
                shutil.copyfile(self._prev_training_metadata_path,
                                self._training_metadata_path)
            elif os.path.exists(self._training_metadata_path):
                os.remove(self._training_metadata_path)
            self._load_model()

    def _load_model(self):
        if not self.model.built:
            raise ValueError("To use the BackupAndRestore callback, you model must be built "
                             f"before you call `fit()`. Model {self.model} is unbuilt. You can "
                             "build it beforehand by calling it on a batch of data.")
        if os.path.exists(self._weights_path):
            optimizer = self.model.optimizer
            if optimizer is not None and not optimizer.built:
                optimizer.build(self.model.trainable_variables)  # slots to load into
            self.model.load_weights(self._weights_path)
        if os.path.exists(self._training_metadata_path):
            with open(self._training_metadata_path) as f:
                self.model._initial_epoch = json.loads(f.read())["epoch"]

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save_model()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model()

    def _save_model(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for path, prev in ((self._weights_path, self._prev_weights_path),
                               (self._training_metadata_path, self._prev_training_metadata_path)):
                if os.path.exists(path):
                    shutil.copyfile(path, prev)
        self.model.save_weights(filepath=self._weights_path, overwrite=True)
        metadata = json.dumps({"epoch": self._current_epoch, "batch": self._last_batch_seen})
        partial = self._training_metadata_path + ".tmp"
        with open(partial, "w") as f:
            f.write(metadata)
        os.replace(partial, self._training_metadata_path)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
