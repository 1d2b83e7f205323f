"""Checkpoint sharding policies: `tf.train.experimental.ShardingCallback` and TF's two
policies (tensorflow/python/checkpoint/sharding).

A callback takes the `ShardableTensor`s of one device task (every tensor a checkpoint
saves, the object graph last) and returns shards, each a dict
{checkpoint key: {slice spec: tensor}}; each shard becomes one `.data-0000i-of-0000N` file
(sharded_save.py). `ShardByTaskPolicy` puts a task's tensors in one shard;
`MaxShardSizePolicy(max_shard_size)` fills shards of at most that many bytes in order,
cutting tensors into slices along the axis that leaves the fewest parts: a scalar or a
string too large for any shard becomes a shard of its own (after all others), and the object
graph counts as zero bytes.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import math
from collections.abc import Hashable

import numpy as np

from ndflow.checkpoint import tensor_slices
from ndflow.core import dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.devices import DeviceSpec
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.array_slicing import slice as _slice

OBJECT_GRAPH_PROTO_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


@tf_export("train.experimental.ShardableTensor")
@dataclasses.dataclass(frozen=True)
class ShardableTensor:
    """A tensor a checkpoint saves, with what a sharding callback needs to place it."""

    _tensor_save_spec: object
    tensor: Tensor
    dtype: dtypes.DType
    device: DeviceSpec
    name: str
    shape: TensorShape
    slice_spec: str
    checkpoint_key: str
    trackable: object

    def __hash__(self) -> int:
        return hash((self.name, self.dtype, str(self.device), self.checkpoint_key))

    def __repr__(self) -> str:
        return (f"\n{type(self).__name__}:\n"
                f"  _tensor_save_spec={self._tensor_save_spec!r}\n"
                f"  tensor={self.tensor!r}\n  dtype={self.dtype!r}\n"
                f"  device={self.device!r}\n  name={self.name!r}\n  shape={self.shape!r}\n"
                f"  slice_spec={self.slice_spec!r}\n"
                f"  checkpoint_key={self.checkpoint_key!r}\n  trackable={self.trackable!r}")


@tf_export("train.experimental.ShardingCallback")
class ShardingCallback(abc.ABC):
    """Decides how a checkpoint's tensors are split into shards (files): subclass it with a
    `description` property and `__call__(shardable_tensors) -> [shard, ...]`, each shard
    {checkpoint_key: {slice_spec: tensor}}; pass an instance as
    `tf.train.CheckpointOptions(experimental_sharding_callback=...)`."""

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """A text description of the sharding policy."""

    @abc.abstractmethod
    def __call__(self, shardable_tensors):
        """Returns a list of shards for the given shardable tensors."""

    def __hash__(self) -> int:
        value = hash(self.description)
        for name, attr in vars(self).items():
            if not (inspect.ismethod(attr) or inspect.isfunction(attr)):
                value ^= hash(name)
                if isinstance(attr, Hashable):
                    value ^= hash(attr)
        return value


@tf_export("train.experimental.ShardByTaskPolicy")
class ShardByTaskPolicy(ShardingCallback):
    """One shard per device task (the default when no callback is given)."""

    @property
    def description(self) -> str:
        return "Split tensors into shards based on their device spec task."

    def __call__(self, shardable_tensors):
        shard: dict = {}
        for t in shardable_tensors:
            shard.setdefault(t.checkpoint_key, {})[t.slice_spec] = t.tensor
        return [shard]


def _string_sizes(tensor) -> list[int]:
    """Byte length of each element of a string tensor (of the scalar itself)."""
    value = np.asarray(tensor.numpy(), dtype=object)
    if value.ndim == 0:
        return [len(value.item())]
    return [sum(len(e) for e in np.asarray(row, dtype=object).reshape(-1)) for row in value]


class _Partitioner:
    """One run of MaxShardSizePolicy over a task's tensors (TF's MaxShardSizePartitioner)."""

    def __init__(self, max_shard_size: int):
        self.max_size = max_shard_size
        self.shards: list[dict] = [{}]
        self.large: list[dict] = []
        self.remaining = max_shard_size

    def _new_shard(self) -> None:
        self.shards.append({})
        self.remaining = self.max_size

    def _next_partition(self, shape: list[int], item: int) -> tuple[int, int]:
        """(axis, rows) of the next piece: the axis cut into the fewest parts that fit."""
        if not shape:
            return 0, math.inf
        elems = math.prod(shape)

        def parts(axis: int) -> float:
            per_slice = (elems // shape[axis]) * item
            per_shard = self.remaining // per_slice if per_slice else math.inf
            return math.inf if per_shard == 0 else math.ceil(shape[axis] / per_shard)

        best_axis, best = 0, parts(0)
        for axis in range(1, len(shape)):
            n = parts(axis)
            if n < best and elems * item / n <= self.remaining:
                best_axis, best = axis, int(n)
        return best_axis, math.ceil(shape[best_axis] / best)

    def _spec(self, key, full_shape, offset, shape) -> str:
        return tensor_slices.format_spec(full_shape, offset, shape).strip()

    def add(self, st: ShardableTensor) -> None:
        key, tensor = st.checkpoint_key, st.tensor
        if st.slice_spec:
            full_shape, extents = tensor_slices.parse_spec(st.slice_spec)
            root_offset = [s for s, _ in extents]
            root_shape = [d - s if n == tensor_slices.FULL else n
                          for (s, n), d in zip(extents, full_shape)]
        else:
            full_shape = root_shape = list(st.shape.as_list())
            root_offset = [0] * len(root_shape)
        item = st.dtype.size
        total = math.prod(root_shape) * item
        if key == OBJECT_GRAPH_PROTO_KEY or st.dtype is dtypes.variant:
            total = item = 0  # sizes TF cannot know when saving: kept in the current shard
        elif st.dtype is dtypes.string:
            sizes = _string_sizes(tensor)
            total, item = sum(sizes), max(sizes, default=0)
        if not root_shape:
            if total > self.max_size:
                tf_logging.warning("Tensor %s is a %s scalar of size %s bytes and cannot be "
                             "partitioned into a shard of max shard size %s bytes. It will be "
                             "added as an individual shard that exceeds the max shard size.",
                             key, st.dtype.name, total, self.max_size)
                self.large.append({key: {st.slice_spec: tensor}})
                return
            if total > self.remaining:
                self._new_shard()
            self.shards[-1].setdefault(key, {})[st.slice_spec] = tensor
            self.remaining -= total
            return
        offset = list(root_offset)
        shape = list(root_shape)
        size = total
        while size > self.remaining:
            axis, rows = self._next_partition(shape, item)
            if rows == 0 and self.remaining == self.max_size:
                # Not one slice fits even an empty shard: the thinnest slice goes to a shard
                # of its own, as TF's docs and warning say (TF 2.21 itself loops forever).
                axis, rows = max(range(len(shape)), key=lambda a: shape[a]), 1
            elif rows == 0:  # not one slice fits what is left: start a new shard
                self._new_shard()
                continue
            relative = [o - r for o, r in zip(offset, root_offset)]
            piece = [r - o for r, o in zip(root_shape, relative)]
            piece[axis] = rows
            nbytes = math.prod(piece) * item
            part = _slice(tensor, relative, piece)
            spec = self._spec(key, full_shape, offset, piece)
            if nbytes > self.max_size:
                tf_logging.warning("Tensor %s's minimum slice %s has size %s bytes and cannot be "
                             "partitioned into a shard of max shard size %s bytes. It will be "
                             "added as an individual shard that exceeds the max shard size.",
                             key, spec, nbytes, self.max_size)
                self.large.append({key: {spec: part}})
            else:
                self.shards[-1].setdefault(key, {})[spec] = part
                self.remaining -= nbytes
                if self.remaining == 0:
                    self._new_shard()
            offset[axis] += rows
            relative[axis] += rows
            shape = [r - o for r, o in zip(root_shape, relative)]
            size = math.prod(shape) * item
        if math.prod(shape) > 0:
            if offset and shape and (offset != root_offset or shape != root_shape):
                relative = [o - r for o, r in zip(offset, root_offset)]
                rest = _slice(tensor, relative, shape)
            else:
                rest = tensor
            spec = self._spec(key, full_shape, offset, shape)
            self.shards[-1].setdefault(key, {})[spec] = rest
        self.remaining -= size

    def result(self) -> list[dict]:
        out = list(self.shards) if self.shards[0] else []
        return out + self.large


@tf_export("train.experimental.MaxShardSizePolicy")
class MaxShardSizePolicy(ShardingCallback):
    """Shards of at most `max_shard_size` bytes, tensors cut into slices to fill them. A
    shard may be larger if it holds one scalar or string that cannot be cut, or the object
    graph (whose size is not counted)."""

    def __init__(self, max_shard_size: int):
        self.max_shard_size = max_shard_size

    @property
    def description(self) -> str:
        return "Split tensors into shards with a max shard size."

    def __call__(self, shardable_tensors):
        part = _Partitioner(self.max_shard_size)
        for st in shardable_tensors:
            part.add(st)
        return part.result()
