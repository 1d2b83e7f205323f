"""`tf.keras.callbacks.SwapEMAWeights`: evaluate and predict with an optimizer's moving
averages (`use_ema=True`), as Keras 3.15: the model's variables and the averages trade places
before evaluation/prediction and back after; with `swap_on_epoch=True` also around each epoch's
other callbacks (a ModelCheckpoint placed after it saves the averages)."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras.callbacks.callback import Callback


def _ema_optimizers(model) -> list:
    optimizer = model.optimizer
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)   # LossScaleOptimizer
    if hasattr(optimizer, "optimizers"):                               # MultiOptimizer
        chosen = [o for o in optimizer.optimizers if getattr(o, "use_ema", False)]
        if not chosen:
            raise ValueError("SwapEMAWeights must be used when at least one inner optimizer "
                             "has `use_ema=True` set. Received a MultiOptimizer with all "
                             "inner optimizers having `use_ema=False`.")
    else:
        chosen = [optimizer]
    for opt in chosen:
        if not hasattr(opt, "_model_variables_moving_average"):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the "
                             f"optimizer. Received: use_ema={getattr(opt, 'use_ema', False)}")
    return chosen


@keras_export("keras.callbacks.SwapEMAWeights")
class SwapEMAWeights(Callback):
    """Evaluates and predicts with the optimizer's exponential moving average (EMA) of the
    weights, while training keeps the raw weights: the weights are swapped with the EMA
    before `evaluate`/`predict` and back after (the optimizer needs `use_ema=True`).

    Args:
      swap_on_epoch: whether to also put the EMA weights in the model at each epoch's end
        (and the raw ones back at the next epoch's start), so the callbacks placed after
        this one, such as ModelCheckpoint, see the EMA weights.
    """

    def __init__(self, swap_on_epoch: bool = False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _swap_variables(self) -> None:
        for opt in _ema_optimizers(self.model):
            for var, average in zip(opt._trainable_variables,
                                    opt._model_variables_moving_average):
                value = var.read_value()
                var.assign(average.read_value())
                average.assign(value)

    def _finalize_ema_values(self) -> None:
        for opt in _ema_optimizers(self.model):
            for var, average in zip(opt._trainable_variables,
                                    opt._model_variables_moving_average):
                average.assign(var.read_value())

    def _swap_in(self) -> None:
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def _swap_out(self) -> None:
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._swap_out()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_in()
            # fit ends by copying the averages into the variables: here they hold the
            # trained weights, so the averages must first get back the EMA
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        self._swap_in()

    def on_test_end(self, logs=None):
        self._swap_out()

    def on_predict_begin(self, logs=None):
        self._swap_in()

    def on_predict_end(self, logs=None):
        self._swap_out()
