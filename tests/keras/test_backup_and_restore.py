"""tf.keras.callbacks.BackupAndRestore as Keras 3: a `fit` interrupted mid-epoch resumes at the
last backed-up epoch with the backed-up weights and optimizer state; Keras' files
(latest.weights.h5, training_metadata.json) and fallbacks."""

import json

import numpy as np
import pytest

import ndflow as tf

keras = tf.keras
X = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
Y = X @ np.arange(8, dtype=np.float32).reshape(4, 2)


def _model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="d")])
    model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9), loss="mse")
    return model


class _Record(keras.callbacks.Callback):
    def __init__(self, stop_at=None):
        super().__init__()
        self.stop_at, self.epochs = stop_at, []

    def on_train_begin(self, logs=None):
        self.start_weights = [w.numpy().copy() for w in self.model.weights]
        self.start_step = int(self.model.optimizer.iterations.numpy())

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)

    def on_train_batch_end(self, batch, logs=None):
        if (self.epochs[-1], batch) == self.stop_at:
            raise KeyboardInterrupt


def test_interrupted_fit_resumes_at_the_backed_up_epoch(tmp_path):
    backup = tmp_path / "backup"
    first = _model()
    with pytest.raises(KeyboardInterrupt):   # 4 steps per epoch; stops in epoch 2
        first.fit(X, Y, batch_size=8, epochs=3, verbose=0, shuffle=False,
                  callbacks=[keras.callbacks.BackupAndRestore(backup), _Record((1, 1))])
    assert json.loads((backup / "training_metadata.json").read_text()) == \
        {"epoch": 1, "batch": 0}
    saved = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="d")])
    saved.load_weights(backup / "latest.weights.h5")

    model, record = _model(), _Record()
    model.fit(X, Y, batch_size=8, epochs=3, verbose=0, shuffle=False,
              callbacks=[keras.callbacks.BackupAndRestore(backup), record])
    assert record.epochs == [1, 2] and record.start_step == 4   # weights and optimizer state
    for restored, expected in zip(record.start_weights, saved.get_weights(), strict=True):
        np.testing.assert_array_equal(restored, expected)
    assert int(model.optimizer.iterations.numpy()) == 12
    assert not backup.exists()   # delete_checkpoint: a finished run leaves no backup


def test_batch_frequency_and_kept_backup(tmp_path):
    model = _model()
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(tmp_path, save_freq=3, delete_checkpoint=False)])
    # saved after batches 3 (epoch 0, batch index 2) and 6 (epoch 1, batch index 1)
    assert json.loads((tmp_path / "training_metadata.json").read_text()) == \
        {"epoch": 1, "batch": 1}


def test_corrupted_backup_falls_back_to_the_previous_one(tmp_path):
    model = _model()
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(tmp_path, double_checkpoint=True,
                                         delete_checkpoint=False)])
    assert (tmp_path / "latest.weights.h5.bkp").exists()
    (tmp_path / "latest.weights.h5").write_bytes(b"not hdf5")
    record = _Record()
    _model().fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False), record])
    assert record.epochs == [1] and record.start_step == 4   # the epoch-1 backup


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        keras.callbacks.BackupAndRestore("")
    with pytest.raises(ValueError, match="Invalid value for argument `save_freq`"):
        keras.callbacks.BackupAndRestore("/tmp/x", save_freq="batch")
