"""`tf.distribute.MultiWorkerMirroredStrategy`: synchronous data parallelism over several
processes (workers), on torch.distributed (ndflow.distribute.collective: gloo on CPU, NCCL
on GPU).

The workers come from the cluster resolver (`TF_CONFIG`'s `cluster`/`task` as TensorFlow
reads it, or torch's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT; see cluster_resolver/). Each
worker runs MirroredStrategy's replicas on its local devices (all GPUs, else the CPU);
`num_replicas_in_sync` counts the replicas of all workers. Then:

- variables created in `scope()` are checked to have the same name, shape and dtype on
  every worker (InvalidArgumentError naming the first that differs) and take worker 0's
  initial value (a broadcast), so every worker starts from the same weights;
- reductions sum over the local replicas, then over the workers with TensorFlow's
  `CollectiveReduceV2` op (so they run eagerly and inside `tf.function`); the gradients an
  optimizer applies are packed per dtype into buckets of about 25 MB, one collective per
  bucket, as DDP does;
- `experimental_distribute_dataset`: every worker reads the same global batches and takes
  its own contiguous share of each (then split over its local replicas), so the workers
  together consume each global batch exactly once;
- `extended.should_checkpoint` / `should_save_summary` are True on the chief (worker 0)
  only: the chief writes checkpoints, the others do not.
"""

from __future__ import annotations

import enum

from ndflow.core.api_export import tf_export
from ndflow.distribute import collective, input_lib
from ndflow.distribute import values as values_lib
from ndflow.distribute.cluster_resolver.resolvers import resolver_from_environment
from ndflow.distribute.distribute_lib import Strategy
from ndflow.distribute.mirrored_strategy import MirroredExtended
from ndflow.distribute.reduce_util import ReduceOp, as_reduce_op
from ndflow.ops import collective_ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import truediv
from ndflow.ops.array_core import constant, reshape
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.cast import cast


@tf_export("distribute.experimental.CommunicationImplementation",
           "distribute.experimental.CollectiveCommunication")
class CommunicationImplementation(enum.Enum):
    """Which collective implementation a multi-worker strategy uses.

    Members:
      AUTO: let the runtime choose.
      RING: ring all-reduce over gRPC (CPU and GPU).
      NCCL: NVIDIA NCCL (GPUs only).

    Example:
      >>> opts = tf.distribute.experimental.CommunicationOptions(
      ...     implementation=tf.distribute.experimental.CommunicationImplementation.RING)
      >>> opts.implementation.value
      'RING'
    """
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


@tf_export("distribute.experimental.CommunicationOptions")
class CommunicationOptions:
    """How collectives run: `bytes_per_pack` (0: 25 MB buckets), `timeout_seconds`."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation


class CollectiveAllReduceExtended(MirroredExtended):
    def __init__(self, container_strategy, cluster_resolver, communication_options):
        super().__init__(container_strategy)
        options = communication_options or CommunicationOptions()
        self._options = options
        self._cluster_resolver = cluster_resolver or resolver_from_environment()
        kwargs = {} if options.timeout_seconds is None else \
            {"timeout_seconds": options.timeout_seconds}
        self._spec = collective.initialize(self._cluster_resolver, **kwargs)
        self._bucket_bytes = options.bytes_per_pack or collective.BUCKET_BYTES
        self._instance = 0

    @property
    def _num_workers(self) -> int:
        return self._spec.world_size

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self._devices) * self._num_workers

    @property
    def should_checkpoint(self) -> bool:
        return self._spec.is_chief

    @property
    def should_save_summary(self) -> bool:
        return self._spec.is_chief

    @property
    def should_init(self) -> bool:
        return True

    @property
    def worker_index(self) -> int:
        return self._spec.rank

    # variables: the same everywhere, worker 0's initial values ------------------------------
    def _create_variable(self, next_creator, **kwargs):
        var = super()._create_variable(next_creator, **kwargs)
        self.broadcast_variables([var])
        return var

    def broadcast_variables(self, variables_) -> None:
        """Gives every worker worker 0's values of `variables_` (eagerly; names, shapes and
        dtypes checked to agree first). Keras' fit calls it for the model's weights."""
        if self._num_workers == 1 or not variables_:
            return
        collective.check_consistent([(getattr(v, "path", v.name), tuple(v.shape.as_list()),
                                      v.dtype.name) for v in variables_])
        primaries = [v.values[0] if isinstance(v, values_lib.MirroredVariable) else v
                     for v in variables_]
        received = collective.broadcast([p.value() for p in primaries], root=0,
                                        bucket_bytes=self._bucket_bytes)
        for var, value in zip(variables_, received):
            for component in values_lib.local_results(var):
                component.assign(value.numpy())

    # reductions: local replicas, then the workers ------------------------------------------
    def _across_workers(self, tensors: list) -> list:
        """SUM of each tensor over the workers: packed per dtype into ~bucket_bytes buckets,
        one CollectiveReduceV2 per bucket."""
        if self._num_workers == 1:
            return list(tensors)
        out = list(tensors)
        by_dtype: dict = {}
        for i, t in enumerate(tensors):
            by_dtype.setdefault(t.dtype, []).append(i)
        for indices in by_dtype.values():
            bucket, size = [], 0
            for i in indices + [None]:
                t = None if i is None else tensors[i]
                nbytes = 0 if t is None else _nbytes(t)
                if bucket and (t is None or size + nbytes > self._bucket_bytes
                               or not t.shape.is_fully_defined()):
                    self._reduce_bucket(bucket, tensors, out)
                    bucket, size = [], 0
                if t is not None:
                    bucket.append(i)
                    size += nbytes
        return out

    def _reduce_bucket(self, bucket: list, tensors: list, out: list) -> None:
        values = [tensors[i] for i in bucket]
        if len(values) == 1 or not all(v.shape.is_fully_defined() for v in values):
            for i, v in zip(bucket, values):
                out[i] = self._collective_sum(v)
            return
        sizes = [v.shape.num_elements() for v in values]
        flat = self._collective_sum(concat([reshape(v, [-1]) for v in values], 0))
        for i, piece, v in zip(bucket, split(flat, sizes), values):
            out[i] = reshape(piece, v.shape.as_list())

    def _collective_sum(self, tensor):
        self._instance += 1  # names the collective in errors
        return apply_op(collective_ops.CollectiveReduceV2,
                        [tensor, constant(self._num_workers, name="group_size"),
                         constant(1, name="group_key"),
                         constant(self._instance, name="instance_key"), []],
                        {"merge_op": "Add", "final_op": "Id"}).outputs[0]

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return self.batch_reduce_to(reduce_op, [(value, destinations)], options)[0]

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None) -> list:
        reduce_op = as_reduce_op(reduce_op)
        local = [MirroredExtended.reduce_to(self, ReduceOp.SUM, v, d)
                 if values_lib.is_distributed(v) else convert_to_tensor(v)
                 for v, d in value_destination_pairs]
        total = self._across_workers(local)
        if reduce_op is ReduceOp.MEAN:
            n = self._num_replicas_in_sync
            total = [truediv(t, cast(constant(n), t.dtype)) for t in total]
        return total

    def sum_across_workers(self, grads: list) -> list:
        """SUM over the workers of per-worker gradients (None stays None), bucketed: what
        Keras' towers use after summing their local replicas."""
        present = [i for i, g in enumerate(grads) if g is not None]
        reduced = self._across_workers([convert_to_tensor(grads[i]) for i in present])
        out = list(grads)
        for i, r in zip(present, reduced):
            out[i] = r
        return out

    def gather_to(self, value, axis):
        raise NotImplementedError("MultiWorkerMirroredStrategy.gather across workers")

    # input -----------------------------------------------------------------------------------
    def distribute_dataset(self, dataset, options=None):
        return input_lib.DistributedDataset(dataset, self._container_strategy(),
                                            num_workers=self._num_workers,
                                            worker_index=self._spec.rank)


def _nbytes(t) -> int:
    n = t.shape.num_elements() if t.shape.is_fully_defined() else 0
    return n * t.dtype.size


@tf_export("distribute.MultiWorkerMirroredStrategy", v1=[])
class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous training on the devices of several workers (see the module doc)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        super().__init__(CollectiveAllReduceExtended(self, cluster_resolver,
                                                     communication_options))

    @property
    def cluster_resolver(self):
        return self._extended._cluster_resolver

    def __repr__(self):
        spec = self._extended._spec
        return (f"<MultiWorkerMirroredStrategy worker {spec.rank} of {spec.world_size}, "
                f"devices={self._extended.worker_devices}>")


@tf_export("distribute.experimental.MultiWorkerMirroredStrategy")
class ExperimentalMultiWorkerMirroredStrategy(MultiWorkerMirroredStrategy):
    """The deprecated form taking `communication` (a CommunicationImplementation)."""

    def __init__(self, communication=CommunicationImplementation.AUTO, cluster_resolver=None):
        super().__init__(cluster_resolver,
                         CommunicationOptions(implementation=communication))

