"""`tf.keras.callbacks.TerminateOnNaN`: stops training at a NaN or infinite batch loss."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback
from ndflow.keras.progbar import print_msg


@keras_export("keras.callbacks.TerminateOnNaN")
class TerminateOnNaN(Callback):
    """At a NaN/Inf `loss` in a batch's logs: prints `Batch N: Invalid loss, terminating
    training` and sets `model.stop_training` (on_train_end still runs), or with
    `raise_error=True` raises RuntimeError at once.

    Args:
      raise_error: whether to raise instead of stopping gracefully.
    """

    def __init__(self, raise_error: bool = False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or not (np.isnan(loss) or np.isinf(loss)):
            return
        if self.raise_error:
            raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: "
                               f"{loss}. Terminating training immediately.")
        print_msg(f"Batch {batch}: Invalid loss, terminating training")
        self.model.stop_training = True
