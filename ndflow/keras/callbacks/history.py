"""`tf.keras.callbacks.History`: records each epoch's logs (`fit` returns it)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback


@keras_export("keras.callbacks.History")
class History(Callback):
    """Records the training history: `fit` returns this callback, whose `history` dict maps
    each metric to its list of per-epoch values (kept across `fit` calls that reuse the
    object) and whose `epoch` lists the epochs of the last run.

    Example:

    >>> model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    >>> model.compile(loss="mse")
    >>> history = model.fit(np.zeros((4, 1)), np.zeros((4, 1)), epochs=2, verbose=0)
    >>> sorted(history.history), history.epoch
    (['loss'], [0, 1])
    """

    def __init__(self):
        super().__init__()
        self.history = {}

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(v)
        # The model's `history` is this object, current as of the last finished epoch.
        self.model.history = self
