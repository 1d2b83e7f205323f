"""`tf.keras.callbacks.LambdaCallback`: a callback made of functions given as arguments."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback


@keras_export("keras.callbacks.LambdaCallback")
class LambdaCallback(Callback):
    """Each given function replaces that hook: `on_epoch_begin(epoch, logs)`,
    `on_epoch_end(epoch, logs)`, `on_train_begin(logs)`, `on_train_end(logs)`,
    `on_train_batch_begin(batch, logs)`, `on_train_batch_end(batch, logs)`, and any other
    hook by keyword (`on_test_end=fn`), called with the hook's arguments.

    Args:
      on_epoch_begin: optional function `(epoch, logs)`.
      on_epoch_end: optional function `(epoch, logs)`.
      on_train_begin: optional function `(logs)`.
      on_train_end: optional function `(logs)`.
      on_train_batch_begin: optional function `(batch, logs)`.
      on_train_batch_end: optional function `(batch, logs)`.
      **kwargs: any other hook (`on_test_begin`, `on_predict_end`, ...) by name.

    Example:

    >>> printer = tf.keras.callbacks.LambdaCallback(
    ...     on_epoch_end=lambda epoch, logs: print(epoch, sorted(logs)))
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        given = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                 "on_train_batch_begin": on_train_batch_begin,
                 "on_train_batch_end": on_train_batch_end}
        for hook, fn in given.items():
            if fn is not None:
                setattr(self, hook, fn)
