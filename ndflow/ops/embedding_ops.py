"""`tf.nn.embedding_lookup`: rows of an embedding table, or of a table sharded over several
tensors or variables (a list, or a PartitionedVariable's parts) by TensorFlow's "mod" or
"div" partition strategy (TF's embedding_ops.py: DynamicPartition of the ids, one gather
per shard, DynamicStitch)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.tensor import Tensor
from ndflow.ops import composite_dispatch
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import floor_div, floormod, maximum, subtract, where
from ndflow.ops.array_core import identity, reshape, shape, size, stack
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.clip_ops import clip_by_norm
from ndflow.ops.comparison import composite_name, less
from ndflow.ops.data_flow import dynamic_partition, dynamic_stitch
from ndflow.ops.gather_batch import gather
from ndflow.ops.reduction import reduce_sum


def _clip(embeddings, ids, max_norm):
    """Each embedding (the axes after the ids' axes) clipped to an l2 norm of `max_norm`."""
    if max_norm is None:
        return embeddings
    return clip_by_norm(embeddings, max_norm,
                        axes=list(range(ids.shape.rank, embeddings.shape.rank)))


def _rows(params: list, ids_dtype):
    """The total number of rows of the shards, static when every shard's is known."""
    dims = [p.shape.dims[0] if p.shape.rank else None for p in params]
    if all(d is not None for d in dims):
        return convert_to_tensor(sum(dims), dtype=ids_dtype)
    return reduce_sum(cast(stack([shape(p)[0] for p in params]), ids_dtype))


def _assign(flat_ids, params: list, partition_strategy: str):
    """(shard of each id, row of each id within its shard)."""
    n = len(params)
    if partition_strategy == "mod":
        return floormod(flat_ids, n), floor_div(flat_ids, n)
    if partition_strategy == "div":
        total = _rows(params, flat_ids.dtype)
        per_shard, extras = floor_div(total, n), floormod(total, n)
        shard = maximum(floor_div(flat_ids, per_shard + 1),
                        floor_div(subtract(flat_ids, extras), per_shard))
        row = where(less(shard, extras), floormod(flat_ids, per_shard + 1),
                    floormod(subtract(flat_ids, extras), per_shard))
        return shard, row
    raise ValueError(f"Unrecognized partition strategy: {partition_strategy}.Must be one of "
                     "either `mod` or `div`.")


def _lookup(params, ids, partition_strategy: str, name, max_norm) -> Tensor:
    if params is None:
        raise ValueError("params must be specified")
    if callable(getattr(params, "_get_variable_list", None)):  # a PartitionedVariable
        params = params._get_variable_list()
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    params = list(params) if isinstance(params, (list, tuple)) else [params]
    with composite_name(name, "embedding_lookup") as final:
        params = [p if hasattr(p, "assign") else convert_to_tensor(p, name="params")
                  for p in params]
        ids = convert_to_tensor(ids, name="ids")
        if len(params) == 1:
            return identity(_clip(gather(params[0], ids), ids, max_norm))
        flat_ids = reshape(ids, [-1])
        positions = range_(size(flat_ids, out_type=dtypes.int32))
        shard, row = _assign(flat_ids, params, partition_strategy)
        shard = cast(shard, dtypes.int32)
        rows = dynamic_partition(row, shard, len(params))
        where_from = dynamic_partition(positions, shard, len(params))
        gathered = [gather(p, r) for p, r in zip(params, rows)]
        merged = dynamic_stitch(where_from, gathered)
        element = params[0].shape[1:]
        for p in params[1:]:
            element = element.merge_with(p.shape[1:])
        element_dims = element.as_list() if element.is_fully_defined() else \
            shape(params[0])[1:]
        out = _clip(reshape(merged, concat([shape(ids), element_dims], 0)), ids, max_norm)
    return identity(out, name=final)


@tf_export("nn.embedding_lookup", v1=[])
def embedding_lookup(params, ids, max_norm=None, name: str | None = None) -> Tensor:
    """`tf.nn.embedding_lookup`: `params[ids]` for a table (tensor or variable) or a list of
    shards split by the "div" strategy; `max_norm` clips each embedding's l2 norm."""
    if isinstance(ids, CompositeTensor):   # ops/ragged_array_ops.py
        return composite_dispatch.call("embedding_lookup", embedding_lookup, params, ids,
                                       max_norm, name)
    return _lookup(params, ids, "div", name, max_norm)


@tf_export(v1=["nn.embedding_lookup"])
def embedding_lookup_v1(params, ids, partition_strategy: str = "mod", name: str | None = None,
                        validate_indices: bool = True, max_norm=None) -> Tensor:
    """`tf.compat.v1.nn.embedding_lookup`: shards split by `partition_strategy` ("mod":
    id % n picks the shard, the TF 1.x default; "div": contiguous ranges)."""
    del validate_indices  # TensorFlow ignores it too (gather always checks on CPU)
    return _lookup(params, ids, partition_strategy, name, max_norm)
