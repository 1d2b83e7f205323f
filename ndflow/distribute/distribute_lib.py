"""`tf.distribute.Strategy`, `StrategyExtended`, `ReplicaContext` and the default strategy.

A strategy's public methods are generic here; what differs between strategies (the devices,
how replicas run, how values are reduced and variables created) is in its `extended` object.
The default strategy (no `scope()` entered) has one replica on the current device: `run`
calls the function, `reduce` returns the value, variables are plain `tf.Variable`s.
"""

from __future__ import annotations

import collections
import contextlib
import enum

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.distribute import distribution_context as dc
from ndflow.distribute import values as values_lib
from ndflow.distribute.reduce_util import ReduceOp, as_reduce_op
from ndflow.ops.arithmetic import truediv
from ndflow.ops.array_core import constant, identity
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.reduction import reduce_sum


@tf_export("distribute.InputReplicationMode")
class InputReplicationMode(enum.Enum):
    """How a distributed dataset is replicated across the input pipelines.

    Members:
      PER_WORKER: one input pipeline per worker, feeding all of its replicas (the default).
      PER_REPLICA: one input pipeline per replica.

    Example:
      >>> tf.distribute.InputOptions().experimental_replication_mode
      <InputReplicationMode.PER_WORKER: 'PER_WORKER'>
    """
    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


@tf_export("distribute.InputOptions", v1=[])
class InputOptions(collections.namedtuple("InputOptions", [
        "experimental_fetch_to_device", "experimental_replication_mode",
        "experimental_place_dataset_on_device", "experimental_per_replica_buffer_size"])):
    """Options for distributed input: TF's immutable named tuple (fetching to the devices is
    on unless turned off)."""

    def __new__(cls, experimental_fetch_to_device=None,
                experimental_replication_mode=InputReplicationMode.PER_WORKER,
                experimental_place_dataset_on_device=False,
                experimental_per_replica_buffer_size=1):
        if experimental_fetch_to_device is None:
            experimental_fetch_to_device = True
        return super().__new__(cls, experimental_fetch_to_device, experimental_replication_mode,
                               experimental_place_dataset_on_device,
                               experimental_per_replica_buffer_size)


@tf_export("distribute.RunOptions")
class RunOptions:
    """Options for `Strategy.run` (TPU-specific in TensorFlow; kept for compatibility).

    Args:
      experimental_enable_dynamic_batch_size: whether the batch size may change between steps.
      experimental_bucketizing_dynamic_shape: whether dynamic shapes are bucketed.
      experimental_xla_options: options for XLA compilation.

    Example:
      >>> tf.distribute.RunOptions().experimental_enable_dynamic_batch_size
      True
    """
    def __init__(self, experimental_enable_dynamic_batch_size=True,
                 experimental_bucketizing_dynamic_shape=False,
                 experimental_xla_options=None):
        self.experimental_enable_dynamic_batch_size = experimental_enable_dynamic_batch_size
        self.experimental_bucketizing_dynamic_shape = experimental_bucketizing_dynamic_shape
        self.experimental_xla_options = experimental_xla_options


@tf_export("distribute.InputContext")
class InputContext:
    """What an input function needs to know: how many pipelines, which one this is, and
    how many replicas consume the data (to derive the per-replica batch size)."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self):
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self):
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self):
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible "
                             f"by `num_replicas_in_sync` {self._num_replicas_in_sync}")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self):
        return (f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
                f"total: {self._num_input_pipelines})")

    __repr__ = __str__


@tf_export("distribute.experimental.ValueContext", v1=[])
class ValueContext:
    """The replica a value function of `experimental_distribute_values_from_function` is for.

    Args:
      replica_id_in_sync_group: the index of the replica the value is for.
      num_replicas_in_sync: the number of replicas.

    Example:
      >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
      >>> values = strategy.experimental_distribute_values_from_function(
      ...     lambda ctx: ctx.replica_id_in_sync_group * 10)
      >>> strategy.experimental_local_results(values)
      (0,)
    """
    def __init__(self, replica_id_in_sync_group=0, num_replicas_in_sync=1):
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return self._replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self):
        return self._num_replicas_in_sync


# -- replica context ---------------------------------------------------------------------------

@tf_export("distribute.ReplicaContext")
class ReplicaContext:
    """The context of one replica inside `strategy.run`: its id, the number of replicas, and
    the collectives (`all_reduce`, `all_gather`, `merge_call`) that meet the others."""

    def __init__(self, strategy, replica_id_in_sync_group):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group
        self._merge_hook = None  # set by the strategy's replica runner

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        extended = self._strategy.extended
        first = getattr(extended, "worker_index", 0) * len(extended.worker_devices)
        return constant(first + self._replica_id, dtypes.int32)

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs `merge_fn(strategy, *args)` once, in cross-replica context, with each
        argument regrouped over the replicas (PerReplica); returns this replica's part."""
        kwargs = kwargs or {}
        if self._merge_hook is not None:
            return self._merge_hook(merge_fn, args, kwargs)
        # one replica in this thread: nothing to wait for
        with dc.frame(self._strategy, None), self._strategy.extended.creator_scope():
            return merge_fn(self._strategy, *args, **kwargs)

    def all_reduce(self, reduce_op, value, options=None):
        """The reduction of `value` (a nested structure of tensors) over all replicas."""
        reduce_op = as_reduce_op(reduce_op)
        flat = flatten(value)

        def merge(strategy, *per_replica):
            reduced = [strategy.extended.reduce_to(reduce_op, v, None) for v in per_replica]
            copies = len(values_lib.local_results(per_replica[0])) if per_replica else 1
            if copies == 1:
                return reduced
            devices = strategy.extended.worker_devices
            out = []
            for r in reduced:  # each replica its own copy, on its device (as TF)
                parts = []
                for i in range(copies):
                    with scopes.device(devices[i]):
                        parts.append(identity(r))
                out.append(values_lib.Mirrored(parts))
            return out

        reduced = self.merge_call(merge, args=tuple(flat))
        return pack_sequence_as(value, [values_lib.select_replica(self._replica_id, r)
                                        if isinstance(r, values_lib.DistributedValues) else r
                                        for r in reduced])

    def all_gather(self, value, axis, options=None):
        flat = flatten(value)

        def merge(strategy, *per_replica):
            return [strategy.extended.gather_to(v, axis) for v in per_replica]

        return pack_sequence_as(value, self.merge_call(merge, args=tuple(flat)))

    def __repr__(self):
        return f"<tf.distribute.ReplicaContext replica {self._replica_id}>"


# -- strategies --------------------------------------------------------------------------------

@tf_export("distribute.StrategyExtended")
class StrategyExtended:
    """The strategy's mechanics; subclasses set `_devices` and override what differs."""

    def __init__(self, container_strategy):
        self._container_strategy_ref = container_strategy
        self._devices = ("/job:localhost/replica:0/task:0/device:CPU:0",)

    def _container_strategy(self):
        return self._container_strategy_ref

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self._devices)

    @property
    def worker_devices(self) -> tuple:
        return tuple(self._devices)

    @property
    def parameter_devices(self) -> tuple:
        return tuple(self._devices)

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    @property
    def should_init(self) -> bool:
        return True

    def variable_created_in_scope(self, v) -> bool:
        return getattr(v, "_strategy", None) is self._container_strategy_ref

    def colocate_vars_with(self, colocate_with_variable):
        return contextlib.nullcontext()

    def value_container(self, value):
        return value

    def creator_scope(self):
        """The variable creator active in cross-replica context of this strategy."""
        return contextlib.nullcontext()

    # replicas ------------------------------------------------------------------------------
    def call_for_each_replica(self, fn, args=(), kwargs=None):
        ctx = ReplicaContext(self._container_strategy_ref, 0)
        with dc.frame(self._container_strategy_ref, ctx):
            return fn(*args, **(kwargs or {}))

    # reductions: values are PerReplica/Mirrored (one part per replica) or plain tensors ---
    def reduce_to(self, reduce_op, value, destinations, options=None):
        reduce_op = as_reduce_op(reduce_op)
        parts = values_lib.local_results(value)
        if not isinstance(value, values_lib.DistributedValues) and \
                not isinstance(value, values_lib.MirroredVariable):
            if reduce_op is ReduceOp.SUM and self._num_replicas_in_sync > 1:
                raise ValueError(f"A non-DistributedValues value {value} cannot be reduced "
                                 f"with the given reduce op {reduce_op}.")
            return value
        total = parts[0] if len(parts) == 1 else _add_n([_read(p) for p in parts])
        if reduce_op is ReduceOp.MEAN and len(parts) > 1:
            total = truediv(total, _as_dtype_of(len(parts), total))
        return total

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None) -> list:
        return [self.reduce_to(reduce_op, v, d, options) for v, d in value_destination_pairs]

    def gather_to(self, value, axis):
        parts = [_read(p) for p in values_lib.local_results(value)]
        return parts[0] if len(parts) == 1 else concat(parts, axis)

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """`fn(component, *args)` for each component of `var` (mirrored: every device's)."""
        kwargs = kwargs or {}
        with dc.frame(self._container_strategy_ref, None):
            if not isinstance(var, values_lib.MirroredVariable):
                return fn(var, *values_lib.select_replica(0, args),
                          **values_lib.select_replica(0, kwargs))
            results = []
            for i, component in enumerate(var.values):
                with dc.update_context(i):
                    results.append(fn(component, *values_lib.select_replica(i, args),
                                      **values_lib.select_replica(i, kwargs)))
        return values_lib.regroup(results, values_lib.Mirrored)

    def update_non_slot(self, colocate_with, fn, args=(), kwargs=None, group=True):
        return fn(*args, **(kwargs or {}))


def _read(x):
    return x.value() if hasattr(x, "handle") and hasattr(x, "value") else x


def _add_n(parts):
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _as_dtype_of(n: int, tensor):
    return cast(constant(n), tensor.dtype)


@tf_export("distribute.Strategy")
class Strategy:
    """Distributes computation over replicas; see `tf.distribute` in TensorFlow's guide."""

    def __init__(self, extended):
        self._extended = extended
        self._scope_depth = 0

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return self._extended._num_replicas_in_sync

    @property
    def cluster_resolver(self):
        return getattr(self._extended, "_cluster_resolver", None)

    @contextlib.contextmanager
    def scope(self):
        """Variables created inside are distributed (mirrored) by this strategy."""
        current = dc.get_strategy()
        if current is not self and dc.has_strategy():
            raise ValueError(f"Mixing different tf.distribute.Strategy objects: {self} is "
                             f"not {current}")
        with dc.frame(self, None if self is not dc.default_strategy()
                      else dc.get_replica_context()), self._extended.creator_scope():
            yield self

    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs `fn` once per replica; the results are PerReplica values (one replica: the
        value itself)."""
        return self._extended.call_for_each_replica(fn, tuple(args), kwargs or {})

    def reduce(self, reduce_op, value, axis):
        """Reduces a per-replica `value` across replicas (and along `axis` within each)."""
        reduce_op = as_reduce_op(reduce_op)
        if axis is None:
            return self._extended.reduce_to(reduce_op, value, None)
        parts = [_read(p) for p in values_lib.local_results(value)]

        def across_replicas(per_part):  # SUM over the replicas (and workers, if any)
            wrapped = values_lib.PerReplica(per_part) if len(per_part) > 1 else per_part[0]
            return self._extended.reduce_to(ReduceOp.SUM, wrapped, None)

        total = across_replicas([reduce_sum(p, axis=axis) for p in parts])
        if reduce_op is ReduceOp.MEAN:
            count = across_replicas([_as_dtype_of(_dim(p, axis), total) for p in parts])
            total = truediv(total, count)
        return total

    def gather(self, value, axis):
        """The replicas' values concatenated along `axis`."""
        return self._extended.gather_to(value, axis)

    def experimental_local_results(self, value) -> tuple:
        return values_lib.local_results(value)

    def experimental_distribute_dataset(self, dataset, options=None):
        return self._extended.distribute_dataset(dataset, options)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return self._extended.distribute_datasets_from_function(dataset_fn, options)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_distribute_values_from_function(self, value_fn):
        n = self.num_replicas_in_sync
        parts = [value_fn(ValueContext(i, n)) for i in range(n)]
        return values_lib.regroup(parts)

    def __deepcopy__(self, memo):
        raise RuntimeError("Must only deepcopy DistributionStrategy.")


def _dim(tensor, axis) -> int:
    shape = tensor.shape.as_list()
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    n = 1
    for a in axes:
        if shape[a] is None:
            raise ValueError(f"strategy.reduce with MEAN along axis {axis} needs a static "
                             f"shape; got {tensor.shape}")
        n *= shape[a]
    return n


class _DefaultExtended(StrategyExtended):
    def distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return value  # one replica: SUM and MEAN are the value

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        return fn(*args, **(kwargs or {}))

    @property
    def worker_devices(self):
        raise RuntimeError("worker_devices() method unsupported by default tf.distribute."
                           "Strategy.")


class _DefaultDistributionStrategy(Strategy):
    def __init__(self):
        super().__init__(_DefaultExtended(self))

    def __repr__(self):
        return "<ndflow.distribute._DefaultDistributionStrategy>"


class _DefaultReplicaContext(ReplicaContext):
    @property
    def replica_id_in_sync_group(self):
        return 0  # TF's default replica context: a Python 0


_DEFAULT = _DefaultDistributionStrategy()
dc.set_default(_DEFAULT, _DefaultReplicaContext(_DEFAULT, 0))


# -- optimizers: gradients summed over the replicas before they are applied -------------------

def in_multi_replica_context() -> bool:
    """Whether the code runs in one replica of several (inside `strategy.run`)."""
    ctx = dc.get_replica_context()
    return ctx is not None and ctx.num_replicas_in_sync > 1 and \
        not isinstance(ctx, _DefaultReplicaContext)


def apply_across_replicas(apply_fn, grads_and_vars):
    """What TF's optimizers do in a replica context: `merge_call` once, sum each variable's
    gradient over the replicas, then `apply_fn(pairs, i)` for each component index i of the
    mirrored variables (inside `extended.update`'s context, so variables and slots resolve
    to their i-th copy); plain variables are updated at i = 0 only. Returns the last result
    of `apply_fn` (eager: None; graph: its op)."""
    pairs = [(g, v) for g, v in grads_and_vars]

    def merge(strategy, gvs):
        reduced = [(None if g is None else strategy.extended.reduce_to(ReduceOp.SUM, g, v), v)
                   for g, v in gvs]
        copies = max([len(v.values) for _, v in reduced if values_lib.is_distributed(v)],
                     default=1)  # this process's copies (another worker updates its own)
        results = []
        for i in range(copies):
            with dc.update_context(i):
                part = [(values_lib.select_replica(i, g), v) for g, v in reduced
                        if i == 0 or values_lib.is_distributed(v)]
                results.append(apply_fn(part, i))
        return results[-1] if len(results) == 1 or results[-1] is None else \
            values_lib.Mirrored(results)

    result = dc.get_replica_context().merge_call(merge, args=(pairs,))
    return result
