"""Reshaping RaggedTensors: `RaggedTensor.from_sparse`/`to_sparse`, `merge_dims`,
`tf.ragged.stack` (axis 0), `tf.ragged.boolean_mask`, `tf.tile` and embedding lookups, as
TensorFlow 2.21 computes them (built from ordinary ops: eager and graph alike). The methods
are attached to the class here, which ops/ragged_tensor.py cannot import.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops import arithmetic, composite_dispatch
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape, stack
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import ones_like
from ndflow.ops.array_fill import tile as dense_tile
from ndflow.ops.array_gather import gather, unsorted_segment_sum
from ndflow.ops.array_mask import boolean_mask as dense_boolean_mask
from ndflow.ops.array_range import range as range_op
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.ragged_factory import lengths_to_splits
from ndflow.ops.ragged_math import ragged_concat
from ndflow.ops.ragged_tensor import RaggedTensor, _gather_rows, splits_to_segment_ids
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.sparse_tensor import SparseTensor


def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64) -> RaggedTensor:
    """The rows of a 2-D SparseTensor (indices in row-major order, each row's values
    starting at column 0): values grouped by row index."""
    if not isinstance(st_input, SparseTensor):
        raise TypeError(f"st_input must be a SparseTensor, got {st_input!r}")
    if st_input.indices.shape.rank == 2 and st_input.indices.shape.as_list()[1] not in (2,
                                                                                         None):
        raise ValueError("from_sparse takes a 2-D SparseTensor (rank "
                         f"{st_input.indices.shape.as_list()[1]} given)")
    dt = dtypes.as_dtype(row_splits_dtype)
    return cls.from_value_rowids(st_input.values, cast(st_input.indices[:, 0], dt),
                                 nrows=cast(st_input.dense_shape[0], dt), validate=False)


def to_sparse(self, name=None) -> SparseTensor:
    """The SparseTensor of the same values: each value's coordinates (row, position in
    row, ...); dense shape: the bounding shape."""
    flat = self.flat_values
    if flat.shape.rank != 1:
        raise ValueError("ndflow's RaggedTensor.to_sparse takes 1-D flat values (no dense "
                         "inner dimensions).")
    splits = [cast(s, dtypes.int64) for s in self.nested_row_splits]
    index = range_op(shape_op(flat, out_type=dtypes.int64)[0], dtype=dtypes.int64)
    columns = []
    for s in reversed(splits):  # innermost first: position within the row, then the row
        rowids = gather(splits_to_segment_ids(s), index)
        columns.insert(0, arithmetic.subtract(index, gather(s, rowids)))
        index = rowids
    columns.insert(0, index)
    return SparseTensor(stack(columns, axis=1), flat,
                        self.bounding_shape(out_type=dtypes.int64))


def merge_dims(self, outer_axis, inner_axis):
    """Axes `outer_axis`..`inner_axis` merged into one (`rt.merge_dims(0, 1)`: the rows of
    rows as one list of rows; `(0, -1)`: every value in one 1-D tensor)."""
    rank = self.shape.rank
    if rank is None:
        raise ValueError("merge_dims needs a RaggedTensor of known rank")
    outer = outer_axis + rank if outer_axis < 0 else outer_axis
    inner = inner_axis + rank if inner_axis < 0 else inner_axis
    if not 0 <= outer <= inner < rank:
        raise ValueError(f"Expected outer_axis ({outer_axis}) to be less than or equal to "
                         f"inner_axis ({inner_axis}), both within rank {rank}")
    return _merge(self, outer, inner)


def _merge(x, outer: int, inner: int):
    if outer == inner:
        return x
    if not isinstance(x, RaggedTensor):  # dense dims: a reshape
        dims = shape_op(x)
        return reshape(x, concat([dims[:outer], [-1], dims[inner + 1:]], 0))
    if outer > 0:
        if outer == 1:
            return _merge_into_rows(x, inner)
        return x.with_values(_merge(x.values, outer - 1, inner - 1))
    return _merge(x.values, 0, inner - 1)  # axes 0 and 1 merged: the rows of rows


def _merge_into_rows(rt: RaggedTensor, inner: int) -> RaggedTensor:
    """Axes 1..inner of `rt` merged: each row's sub-rows concatenated."""
    splits, values = rt.row_splits, rt.values
    for _ in range(inner - 1):
        if isinstance(values, RaggedTensor):
            splits = gather(values.row_splits, splits)
            values = values.values
        else:  # a dense dimension: every row's values times its size
            dims = shape_op(values, out_type=splits.dtype)
            splits = arithmetic.multiply(splits, dims[1])
            values = reshape(values, concat([[-1], shape_op(values)[2:]], 0))
    return RaggedTensor._from_splits(values, splits)


for _fn in (to_sparse, merge_dims):
    setattr(RaggedTensor, _fn.__name__, _fn)
RaggedTensor.from_sparse = classmethod(from_sparse)


@tf_export("ragged.stack")
def stack_ragged(values, axis=0, name=None) -> RaggedTensor:
    """The tensors (ragged or dense, of one rank) as the rows of one RaggedTensor."""
    if axis != 0:
        raise ValueError("ndflow's tf.ragged.stack stacks along axis 0 only.")
    if not values:
        raise ValueError("tf.ragged.stack needs at least one tensor")
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    dt = ragged[0].row_splits.dtype if ragged else dtypes.int64
    rows = []
    for v in values:
        if not isinstance(v, RaggedTensor):
            v = convert_to_tensor(v)
            if ragged and v.shape.rank and v.shape.rank > 1:
                v = RaggedTensor.from_tensor(v, ragged_rank=ragged[0].ragged_rank,
                                             row_splits_dtype=dt)
        n = v.nrows(out_type=dt) if isinstance(v, RaggedTensor) else \
            shape_op(v, out_type=dt)[0]
        rows.append(RaggedTensor._from_splits(v, stack([convert_to_tensor(0, dt), n])))
    return ragged_concat(rows, 0)


@tf_export("ragged.boolean_mask")
def boolean_mask(data, mask, name=None):
    """The values of `data` where `mask` is True, row by row: a mask of the same (ragged)
    shape keeps values; a 1-D mask keeps whole rows; a dense mask of a dense `data`'s shape
    gives a RaggedTensor of the kept values of each row."""
    if isinstance(mask, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("A RaggedTensor mask needs RaggedTensor data")
        return _mask_values(data, mask)
    mask = convert_to_tensor(mask, dtypes.bool)
    if mask.shape.rank == 1:
        if isinstance(data, RaggedTensor):
            keep = cast(_where_true(mask), data.row_splits.dtype)
            return _gather_rows(data, keep)
        return dense_boolean_mask(data, mask)
    data = convert_to_tensor(data)
    if mask.shape.rank != 2:
        raise ValueError("ndflow's tf.ragged.boolean_mask takes 1-D or 2-D dense masks")
    lengths = reduce_sum(cast(mask, dtypes.int64), axis=1)
    return RaggedTensor._from_splits(dense_boolean_mask(data, mask),
                                     lengths_to_splits(lengths))


def _where_true(mask):
    n = shape_op(mask, out_type=dtypes.int64)[0]
    return dense_boolean_mask(range_op(n, dtype=dtypes.int64), mask)


def _mask_values(data: RaggedTensor, mask: RaggedTensor) -> RaggedTensor:
    """Values kept where the same-shaped ragged mask is True; each innermost row's length
    becomes its count of kept values."""
    if isinstance(data.values, RaggedTensor):
        return data.with_values(_mask_values(data.values, mask.values))
    keep = mask.values
    counts = unsorted_segment_sum(cast(keep, data.row_splits.dtype), data.value_rowids(),
                                  data.nrows())
    return RaggedTensor._from_splits(dense_boolean_mask(data.values, keep),
                                     lengths_to_splits(counts))


@composite_dispatch.register("tile")
def tile_ragged(rt, multiples, name=None) -> RaggedTensor:
    """`tf.tile` of a RaggedTensor with one ragged dimension: each row's contents repeated
    `multiples[1]` times within the row, the rows `multiples[0]` times, inner dense
    dimensions tiled as `tf.tile` tiles them."""
    if not isinstance(rt, RaggedTensor) or rt.ragged_rank != 1:
        raise ValueError("ndflow's tf.tile of a RaggedTensor supports one ragged dimension "
                         f"(ragged_rank 1), got {rt!r}")
    multiples = cast(convert_to_tensor(multiples), dtypes.int64)
    values = rt.values
    rank = values.shape.rank
    if rank is not None and rank > 1:
        values = dense_tile(values, concat([[1], multiples[2:]], 0))
    lengths = rt.row_lengths()
    new_lengths = lengths * multiples[1]
    new_splits = lengths_to_splits(new_lengths)
    rows = splits_to_segment_ids(new_splits)
    position = range_op(new_splits[-1], dtype=dtypes.int64) - gather(new_splits[:-1], rows)
    source = gather(rt.row_splits[:-1], rows) + arithmetic.floormod(position,
                                                                    gather(lengths, rows))
    values = gather(values, source)
    outer = stack([multiples[0]])
    inner = ones_like(shape_op(values, out_type=dtypes.int64)[1:])
    values = dense_tile(values, concat([outer, inner], 0))
    return RaggedTensor.from_row_lengths(values, dense_tile(new_lengths, outer), name=name)


@composite_dispatch.register("embedding_lookup")
def embedding_lookup_ragged(lookup, params, ids, *args, **kwargs) -> RaggedTensor:
    """An embedding lookup of RaggedTensor ids: the lookup of their flat values, in the ids'
    row partitions (TF's ragged embedding_lookup)."""
    return ids.with_flat_values(lookup(params, ids.flat_values, *args, **kwargs))


@composite_dispatch.register("reverse")
def reverse_ragged(rt, axis, name=None) -> RaggedTensor:
    """`tf.reverse` of a RaggedTensor with one ragged dimension along axis 0 (the rows'
    order) and/or 1 (each row's contents)."""
    axes = [int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    rank = rt.shape.rank
    axes = [a + rank if a < 0 and rank is not None else a for a in axes]
    if not isinstance(rt, RaggedTensor) or rt.ragged_rank != 1 or not set(axes) <= {0, 1}:
        raise ValueError("ndflow's tf.reverse of a RaggedTensor supports one ragged "
                         f"dimension and axes 0 and 1, got axis={axis} for {rt!r}")
    if 1 in axes:
        splits = rt.row_splits
        rows = splits_to_segment_ids(splits)
        position = range_op(splits[-1], dtype=dtypes.int64) - gather(splits[:-1], rows)
        source = gather(splits[1:], rows) - 1 - position
        rt = rt.with_values(gather(rt.values, source))
    if 0 in axes:
        rt = _gather_rows(rt, range_op(rt.nrows() - 1, -1, -1, dtype=dtypes.int64))
    return rt
