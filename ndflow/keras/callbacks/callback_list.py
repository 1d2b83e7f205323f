"""`tf.keras.callbacks.CallbackList`: calls each hook on every callback, in order.

As in Keras 3 on the TensorFlow backend (whose `IS_THREAD_SAFE` is False), every hook runs
synchronously, and the logs each callback receives are "pythonified": nested dicts flattened,
keys sorted, tensors and NumPy scalars turned into Python floats where they convert.
"""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras.callbacks.callback import Callback
from ndflow.keras.callbacks.history import History
from ndflow.keras.callbacks.progbar_logger import ProgbarLogger


def pythonify_logs(logs) -> dict:
    """Keras' `python_utils.pythonify_logs`: a flat dict, sorted by key, with values made
    Python floats where `float()` takes them (others, such as vectors, kept)."""
    result = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(pythonify_logs(value))
            continue
        try:
            if isinstance(value, Tensor):
                value = value.numpy()
            value = float(value)
        except Exception:  # noqa: BLE001 - Keras keeps any value float() refuses
            pass
        result[key] = value
    return result


def _flatten(callbacks) -> list:
    if isinstance(callbacks, (list, tuple)):
        return [c for item in callbacks for c in _flatten(item)]
    if isinstance(callbacks, dict):
        return [c for key in sorted(callbacks) for c in _flatten(callbacks[key])]
    return [callbacks]


@keras_export("keras.callbacks.CallbackList")
class CallbackList(Callback):
    """A list of callbacks called through one set of hooks.

    Args:
        callbacks: the `Callback`s (nested lists are flattened).
        add_history: append a `History` unless one is already there.
        add_progbar: append a `ProgbarLogger` unless one is already there.
        model: the model given to every callback (`set_model`).
        **params: given to every callback (`set_params`) when not empty.
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        self.callbacks = _flatten(callbacks) if callbacks else []
        self._in_begin_end_block_count = 0
        self._add_default_callbacks(add_history, add_progbar)
        self.params = None
        self._model = None
        self.set_model(model)
        self.set_params(params)

    def set_params(self, params):
        self.params = params
        if params:
            for callback in self.callbacks:
                callback.set_params(params)

    def _add_default_callbacks(self, add_history, add_progbar) -> None:
        self._progbar = None
        self._history = None
        for cb in self.callbacks:
            if isinstance(cb, ProgbarLogger):
                self._progbar = cb
            elif isinstance(cb, History):
                self._history = cb
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)

    def set_model(self, model):
        if model is None:
            return
        super().set_model(model)
        if self._history:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def _on_begin(self) -> None:
        self._in_begin_end_block_count += 1

    def _on_end(self) -> None:
        self._in_begin_end_block_count -= 1
        if self._in_begin_end_block_count < 0:
            raise ValueError("`on_xxx_end` called without corresponding `on_xxx_begin`")

    def _call_batch_hook(self, hook: str, batch, logs) -> None:
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            getattr(callback, hook)(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch_hook("on_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch_hook("on_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch_hook("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch_hook("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch_hook("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch_hook("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch_hook("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch_hook("on_predict_batch_end", batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            callback.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            callback.on_epoch_end(epoch, logs)

    def _call_begin_hook(self, hook: str, logs) -> None:
        self._on_begin()
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            getattr(callback, hook)(logs)

    def _call_end_hook(self, hook: str, logs) -> None:
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            getattr(callback, hook)(logs)
        self._on_end()

    def on_train_begin(self, logs=None):
        self._call_begin_hook("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call_end_hook("on_train_end", logs)

    def on_test_begin(self, logs=None):
        self._call_begin_hook("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call_end_hook("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._call_begin_hook("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call_end_hook("on_predict_end", logs)

