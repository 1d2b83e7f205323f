"""`tf.compat.v1.train.replica_device_setter`: TF1's device function for between-graph
replication, placing variables (and other parameter-server ops) on `/job:ps` tasks and every
other op on the worker device.

    with tf.device(tf.compat.v1.train.replica_device_setter(ps_tasks=2)):
        w = tf.Variable(...)          # /job:ps/task:0
        b = tf.Variable(...)          # /job:ps/task:1 (round-robin)
        y = tf.matmul(x, w) + b       # /job:worker

Strategies choose a ps task per op: round-robin (the default, as TF) or
`GreedyLoadBalancingStrategy` (TF1 contrib's: the task with the least load so far, load
measured by `byte_size_load_fn`, a variable's size in bytes). A device set on the op itself
(an inner `tf.device`) keeps its fields: they are merged over the chosen device.
"""

from __future__ import annotations

from ndflow.core import dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.devices import DeviceSpec
from ndflow.core.shapes import as_shape
from ndflow.distribute.cluster_resolver.cluster_spec import ClusterSpec

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp",
                   "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp",
                   "ResourceConditionalAccumulator", "DecisionTreeResource")


class _RoundRobinStrategy:
    """Ps tasks in turn: 0, 1, ..., num_tasks - 1, 0, ..."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op) -> int:
    """The bytes of the variable `op` makes: its `shape` and `dtype` attrs (else its first
    output's); 0 for a shape not fully known."""
    attrs = op.attrs
    dtype = attrs.get("dtype") or attrs.get("T") or op.outputs[0].dtype
    shape = attrs.get("shape")
    shape = as_shape(shape) if shape is not None else op.outputs[0].shape
    if not shape.is_fully_defined():
        return 0
    return int(shape.num_elements()) * dtypes.as_dtype(dtype).size


class GreedyLoadBalancingStrategy:
    """Places each op on the ps task with the least load so far (ties: the lowest task),
    adding `load_fn(op)` to it."""

    def __init__(self, num_tasks: int, load_fn=byte_size_load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op) -> int:
        task = min(range(self._num_tasks), key=lambda i: self._ps_loads[i])
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        """The device of `op` (an Operation or NodeDef)."""
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        op_type = op.op if hasattr(op, "input") else op.type  # NodeDef or Operation
        if self._ps_tasks and self._ps_device and op_type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = DeviceSpec(ps.job, ps.replica, self._ps_strategy(op), ps.device_type,
                                ps.device_index)
            return ps.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


@tf_export(v1=["train.replica_device_setter"])
def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device` (None when there are no ps tasks)."""
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        jobs = spec.as_dict()
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in jobs or jobs[ps_job] is None:
            return None
        ps_tasks = len(jobs[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        tf_logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                           "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function
