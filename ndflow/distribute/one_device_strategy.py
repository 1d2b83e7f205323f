"""`tf.distribute.OneDeviceStrategy`: one replica on one named device; variables created in
its scope and the computation of `run` are placed there."""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.distribute import distribution_context as dc
from ndflow.distribute import input_lib
from ndflow.distribute.distribute_lib import (
    InputContext,
    ReplicaContext,
    Strategy,
    StrategyExtended,
)
from ndflow.distribute.mirrored_strategy import canonical_device
from ndflow.ops.variable_creators import variable_creator_scope


class OneDeviceExtended(StrategyExtended):
    def __init__(self, container_strategy, device):
        super().__init__(container_strategy)
        self._device = canonical_device(device)
        self._devices = (self._device,)

    def creator_scope(self):
        def create(next_creator, **kwargs):
            with scopes.device(self._device):
                return next_creator(**kwargs)
        return variable_creator_scope(create)

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        ctx = ReplicaContext(self._container_strategy(), 0)
        with dc.frame(self._container_strategy(), ctx), scopes.device(self._device):
            return fn(*args, **(kwargs or {}))

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return value  # one replica: SUM and MEAN are the value itself

    def distribute_dataset(self, dataset, options=None):
        return input_lib.DistributedDataset(dataset, self._container_strategy())

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())


@tf_export("distribute.OneDeviceStrategy")
class OneDeviceStrategy(Strategy):
    """All variables and computation on `device` ("/gpu:0", "/cpu:0")."""

    def __init__(self, device):
        super().__init__(OneDeviceExtended(self, device))

    def __repr__(self):
        return f"<OneDeviceStrategy device={self.extended._device}>"
