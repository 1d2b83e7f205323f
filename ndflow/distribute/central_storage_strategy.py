"""`tf.distribute.experimental.CentralStorageStrategy`: one machine, the computation mirrored
on the compute devices (all GPUs, else the CPU; or logical CPU devices such as
["/cpu:1", "/cpu:2"]) and every variable kept once, on the parameter device (the only
compute device, else the CPU).

Replicas run as MirroredStrategy's (mirrored_run.py). With several replicas a variable is an
`AggregatingVariable`, TensorFlow's wrapper: every replica reads the one variable, and a write
in a replica context is combined over the replicas by the variable's `aggregation` first
(SUM, MEAN, ONLY_FIRST_REPLICA; NONE is TensorFlow's ValueError), then applied once, so an
optimizer applies the replicas' summed gradients once per step. With one replica variables are
plain, on that device.
"""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.distribute import distribution_context as dc
from ndflow.distribute import values as values_lib
from ndflow.distribute.distribute_lib import Strategy
from ndflow.distribute.mirrored_strategy import MirroredExtended, canonical_device
from ndflow.runtime.device_config import list_logical_devices

_LOCAL_CPU = "/device:CPU:0"
_NO_AGGREGATION = (
    "You must specify an aggregation method to update a AggregatingVariable in Replica "
    "Context. You can do so by passing an explicit value for argument `aggregation` to "
    "tf.Variable(..).e.g. `tf.Variable(..., aggregation=tf.VariableAggregation.SUM)``tf."
    "VariableAggregation` lists the possible aggregation methods.This is required because "
    "AggregatingVariable should always be kept in sync. When updating them or assigning to "
    "them in a replica context, we automatically try to aggregate the values before updating "
    "the variable. For this aggregation, we need to know the aggregation method. Another "
    "alternative is to not try to update such AggregatingVariable in replica context, but in "
    "cross replica context. You can enter cross replica context by calling `tf.distribute."
    "get_replica_context().merge_call(merge_fn, ..)`.Inside `merge_fn`, you can then update "
    "the AggregatingVariable using `tf.distribute.StrategyExtended.update()`.")


class AggregatingVariable(values_lib.MirroredVariable):
    """A variable stored once for all replicas: a MirroredVariable of one component, whose
    replica-context writes aggregate over the replicas (see the module doc)."""

    def _write(self, method: str, value, read_value: bool, **kwargs):
        replica = dc.get_replica_context()
        if dc.update_replica_id() is None and replica is not None and \
                replica.strategy is self._strategy and self._aggregation_mode == "NONE":
            raise ValueError(_NO_AGGREGATION)
        return super()._write(method, value, read_value, **kwargs)

    def __repr__(self):
        return repr(self._primary)

    def __str__(self):
        return str(self._primary)


class CentralStorageExtended(MirroredExtended):
    def __init__(self, container_strategy, compute_devices=None, parameter_device=None):
        if compute_devices is None:  # TF's default: every GPU, else the one CPU
            compute_devices = [d.name for d in list_logical_devices("GPU")] or [_LOCAL_CPU]
        super().__init__(container_strategy, compute_devices)
        if parameter_device is None:
            parameter_device = self._devices[0] if len(self._devices) == 1 else _LOCAL_CPU
        canonical_device(parameter_device)  # TF's ValueError for a name that does not parse
        # as given (a graph records '/device:CPU:0' for '/cpu:0'), as TensorFlow places it
        self._variable_device = parameter_device
        self._parameter_devices = (parameter_device,)

    @property
    def parameter_devices(self) -> tuple:
        return self._parameter_devices

    def _create_variable(self, next_creator, **kwargs):
        replica = self._merge_creates()
        if replica is not None:
            return replica.merge_call(
                lambda strategy: self._create_variable(next_creator, **kwargs))
        if self._num_replicas_in_sync == 1:
            with scopes.device(self._variable_device):
                return next_creator(**kwargs)
        aggregation = kwargs.pop("aggregation", None)
        with dc.frame(self._container_strategy(), None), scopes.device(self._variable_device):
            variable = next_creator(**kwargs)
        return AggregatingVariable(self._container_strategy(), [variable], aggregation)


@tf_export("distribute.experimental.CentralStorageStrategy")
class CentralStorageStrategy(Strategy):
    """Variables on one device, computation mirrored on the compute devices (see the module
    doc)."""

    def __init__(self, compute_devices=None, parameter_device=None):
        super().__init__(CentralStorageExtended(self, compute_devices, parameter_device))

    def __repr__(self):
        return (f"<CentralStorageStrategy compute_devices={self.extended.worker_devices} "
                f"parameter_device={self.extended.parameter_devices[0]}>")
