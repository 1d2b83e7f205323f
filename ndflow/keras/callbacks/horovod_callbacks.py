"""Horovod's Keras callbacks, registered as `hvd.callbacks.*` (ndflow.distribute.horovod is
layer 5 and cannot import Keras, so they live here and register themselves there).

- `BroadcastGlobalVariablesCallback(root_rank)`: the model's variables are broadcast from
  `root_rank` when training begins (so every worker starts from the same weights), and the
  model's and optimizer's variables again after the first batch (the optimizer's slots exist
  only then), as Horovod does.
- `MetricAverageCallback()`: the epoch's logged metrics are averaged over the workers.
"""

from __future__ import annotations

import torch

from ndflow.distribute import collective
from ndflow.distribute.horovod import callbacks as hvd_callbacks
from ndflow.distribute.horovod import tensor_ops
from ndflow.keras.callbacks.callback import Callback


@hvd_callbacks.register
class BroadcastGlobalVariablesCallback(Callback):
    def __init__(self, root_rank: int, device: str = ""):
        super().__init__()
        self.root_rank = root_rank
        self.broadcast_done = False

    def _broadcast(self, with_optimizer: bool) -> None:
        variables = list(self.model.variables)
        optimizer = getattr(self.model, "optimizer", None)
        if with_optimizer and optimizer is not None:
            variables += list(optimizer.variables)
        tensor_ops.broadcast_variables(variables, self.root_rank)

    def on_train_begin(self, logs=None):
        if self.model.built:
            self._broadcast(with_optimizer=False)

    def on_train_batch_end(self, batch, logs=None):
        if not self.broadcast_done:
            self._broadcast(with_optimizer=True)
            self.broadcast_done = True


@hvd_callbacks.register
class MetricAverageCallback(Callback):
    def __init__(self, device: str = ""):
        super().__init__()

    def on_epoch_end(self, epoch, logs=None):
        if not logs or not collective.is_initialized():
            return
        names = sorted(k for k, v in logs.items() if isinstance(v, (int, float)))
        values = torch.tensor([float(logs[k]) for k in names], dtype=torch.float64)
        averaged = collective.all_reduce([values], op=collective.MEAN)[0]
        for k, v in zip(names, averaged.tolist()):
            logs[k] = v
