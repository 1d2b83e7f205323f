"""`tf.distribute.MirroredStrategy`: synchronous data parallelism over the devices of one
process (all GPUs, else the CPU; or a list such as ["/cpu:0", "/cpu:1"] of logical CPU
devices made with `tf.config.set_logical_device_configuration`).

Variables created in `scope()` are MirroredVariables (one copy per device); `run` runs one
replica per device (mirrored_run.py); `reduce`/`gather` combine PerReplica values;
`experimental_distribute_dataset` splits every global batch into one part per replica.
"""

from __future__ import annotations

from ndflow.core import context, scopes
from ndflow.core import devices as device_lib
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.distribute import distribution_context as dc
from ndflow.distribute import input_lib, mirrored_run
from ndflow.distribute import values as values_lib
from ndflow.distribute.cross_device_ops import CrossDeviceOps, ReductionToOneDevice
from ndflow.distribute.distribute_lib import ReplicaContext, Strategy, StrategyExtended
from ndflow.ops.array_core import identity
from ndflow.ops.variable_creators import variable_creator_scope
from ndflow.ops.variable_enums import VariableSynchronization
from ndflow.runtime.device_config import list_logical_devices

_LOCAL = "/job:localhost/replica:0/task:0"


def canonical_device(name: str) -> str:
    """'/cpu:1' -> '/job:localhost/replica:0/task:0/device:CPU:1' (TF's ValueError if the
    name does not parse)."""
    spec = device_lib.DeviceSpec.from_string(name)
    if spec.device_type is None:
        raise ValueError(f"Device {name!r} names no device type (CPU or GPU).")
    job = spec.job or "localhost"
    index = 0 if spec.device_index is None else spec.device_index
    return (f"/job:{job}/replica:{spec.replica or 0}/task:{spec.task or 0}"
            f"/device:{spec.device_type}:{index}")


def default_devices() -> tuple:
    """TF's default: every logical GPU, else every logical CPU device."""
    devices = list_logical_devices("GPU") or list_logical_devices("CPU")
    return tuple(canonical_device(d.name) for d in devices)


def validate_devices(names) -> tuple:
    devices = tuple(canonical_device(d) for d in names)
    if not devices:
        raise ValueError("Must specify at least one device.")
    if len(set(devices)) != len(devices):
        raise ValueError(f"No duplicates allowed in `devices` argument: {devices}")
    known = {canonical_device(d.name) for d in list_logical_devices()}
    for d in devices:
        spec = device_lib.DeviceSpec.from_string(d)
        if spec.device_type not in ("CPU", "GPU"):
            raise InvalidArgumentError(None, None, f"Unknown device type {spec.device_type!r} "
                                       f"in {d}: MirroredStrategy runs on CPU and GPU devices")
        if d.startswith(_LOCAL) and d not in known:
            # TF soft-places such a replica on another device, silently running two towers
            # on one; more towers than devices is a mistake worth an error (issue 12)
            raise InvalidArgumentError(None, None, f"Device {d} does not exist; the "
                                       f"devices are {sorted(known)}. Split the CPU with "
                                       "tf.config.set_logical_device_configuration.")
    return devices


class MirroredExtended(StrategyExtended):
    def __init__(self, container_strategy, devices=None, cross_device_ops=None):
        super().__init__(container_strategy)
        self._devices = validate_devices(devices) if devices is not None else default_devices()
        if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
            raise ValueError("cross_device_ops must be an instance of "
                             f"tf.distribute.CrossDeviceOps, got {cross_device_ops!r}")
        self._cross_device_ops = cross_device_ops or ReductionToOneDevice()

    # variables ------------------------------------------------------------------------------
    def creator_scope(self):
        return variable_creator_scope(self._create_variable)

    def _merge_creates(self):
        """The replica context when a variable is being created in one of this strategy's
        replicas (it is then created once, by the merge, the same variable for every
        replica), else None."""
        replica = dc.get_replica_context()
        if replica is not None and replica.strategy is self._container_strategy() and \
                replica._merge_hook is not None:
            return replica
        return None

    def _create_variable(self, next_creator, **kwargs):
        replica = self._merge_creates()
        if replica is not None:
            return replica.merge_call(
                lambda strategy: self._create_variable(next_creator, **kwargs))
        aggregation = kwargs.pop("aggregation", None)
        initial_value = kwargs.get("initial_value")
        name = kwargs.pop("name", None)
        components = []
        with dc.frame(self._container_strategy(), None):
            for i, device in enumerate(self._devices):
                from_primary = dict(kwargs)
                if i > 0:
                    # every copy starts from the primary's value (TF's mirrored init)
                    primary = components[0]
                    from_primary["initial_value"] = lambda p=primary: identity(
                        p.read_value() if context.executing_eagerly() else p.initial_value)
                    from_primary["name"] = f"{(name or 'Variable').rstrip(':0')}/replica_{i}"
                else:
                    from_primary["initial_value"] = initial_value
                    if name is not None:
                        from_primary["name"] = name
                with scopes.device(device):
                    components.append(next_creator(**from_primary))
        kind = values_lib.SyncOnReadVariable \
            if kwargs.get("synchronization") is VariableSynchronization.ON_READ \
            else values_lib.MirroredVariable
        return kind(self._container_strategy(), components, aggregation)

    # replicas --------------------------------------------------------------------------------
    def call_for_each_replica(self, fn, args=(), kwargs=None):
        kwargs = kwargs or {}
        if len(self._devices) == 1:
            ctx = ReplicaContext(self._container_strategy(), 0)
            with dc.frame(self._container_strategy(), ctx), scopes.device(self._devices[0]):
                return fn(*values_lib.select_replica(0, args), **kwargs)
        return mirrored_run.call_for_each_replica(self._container_strategy(), fn, args, kwargs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        if isinstance(value, (values_lib.DistributedValues, values_lib.MirroredVariable)):
            return self._cross_device_ops.reduce(reduce_op, value, destinations, options)
        return super().reduce_to(reduce_op, value, destinations, options)

    # input -----------------------------------------------------------------------------------
    def distribute_dataset(self, dataset, options=None):
        return input_lib.DistributedDataset(dataset, self._container_strategy())

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return input_lib.DistributedDatasetsFromFunction(dataset_fn,
                                                         self._container_strategy())


@tf_export("distribute.MirroredStrategy")
class MirroredStrategy(Strategy):
    """Synchronous training on several devices of one machine (see the module doc)."""

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__(MirroredExtended(self, devices, cross_device_ops))

    def __repr__(self):
        return f"<MirroredStrategy devices={self.extended.worker_devices}>"
