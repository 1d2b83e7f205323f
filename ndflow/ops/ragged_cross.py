"""`tf.ragged.cross` / `tf.ragged.cross_hashed` (TensorFlow's RaggedCross): feature crosses of
rank-2 RaggedTensors, SparseTensors and dense tensors, in the inputs' own order (the op's
`input_order` attr), as a RaggedTensor with one row per input row. The same crossing and
hashing as tf.sparse.cross* (kernels/sparse_cross.py). Also `tf.ragged.stack_dynamic_partitions`
(items grouped into rows by partition id), another way of building rows from flat items."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape, shape, stack
from ndflow.ops.array_gather import gather
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.op_def import op_def
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.sort import argsort
from ndflow.ops.sparse_cross import DEFAULT_HASH_KEY
from ndflow.ops.sparse_tensor import SparseTensor

RaggedCross = op_def(
    "RaggedCross",
    inputs=["ragged_values: ragged_values_types", "ragged_row_splits: ragged_splits_types",
            "sparse_indices: Nsparse * int64", "sparse_values: sparse_values_types",
            "sparse_shape: Nsparse * int64", "dense_inputs: dense_types"],
    outputs=["output_values: out_values_type", "output_row_splits: out_row_splits_type"],
    attrs=["Nsparse: int >= 0", "input_order: string", "hashed_output: bool",
           "num_buckets: int >= 0", "hash_key: int",
           "ragged_values_types: list(type)", "ragged_splits_types: list(type)",
           "sparse_values_types: list(type)", "dense_types: list(type)",
           "out_values_type: {int64, string}", "out_row_splits_type: {int32, int64}"],
    shape=lambda ctx: [TensorShape([None]), TensorShape([None])], gradient_undefined=True)


def _int64(t):
    return t if t.dtype in (dtypes.string, dtypes.int64) else cast(t, dtypes.int64)


def _cross(inputs, hashed: bool, num_buckets: int, hash_key, name):
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    ragged, sparse, dense, order = [], [], [], []
    for i, t in enumerate(inputs):
        if not isinstance(t, (RaggedTensor, SparseTensor)):
            t = convert_to_tensor(t)
        if not (t.dtype.is_integer or t.dtype is dtypes.string):
            raise ValueError(f"Unexpected dtype for inputs[{i}]: {t.dtype}")
        if isinstance(t, RaggedTensor):
            if t.ragged_rank != 1:
                raise ValueError("tf.ragged.cross only supports inputs with rank=2")
            ragged.append(t)
            order.append("R")
        elif isinstance(t, SparseTensor):
            sparse.append(t)
            order.append("S")
        else:
            dense.append(_int64(t))
            order.append("D")
    splits_type = dtypes.int32 if ragged and all(
        t.row_splits.dtype is dtypes.int32 for t in ragged) else dtypes.int64
    key = DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    if key > 2 ** 63:
        key -= 2 ** 64
    attrs = {"input_order": "".join(order), "hashed_output": hashed,
             "num_buckets": int(num_buckets), "hash_key": key,
             "out_values_type": dtypes.int64 if hashed else dtypes.string,
             "out_row_splits_type": splits_type}
    values, splits = apply_op(
        RaggedCross, [[_int64(t.values) for t in ragged], [t.row_splits for t in ragged],
                      [s.indices for s in sparse], [_int64(s.values) for s in sparse],
                      [s.dense_shape for s in sparse], dense],
        attrs, name=name or "RaggedCross").outputs
    return RaggedTensor._from_splits(values, splits)


@tf_export("ragged.cross")
def cross(inputs, name=None):
    """Each row's combinations of one value per input, joined by "_X_"."""
    return _cross(inputs, False, 0, None, name)


@tf_export("ragged.cross_hashed")
def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Each row's combinations of one value per input as fingerprint-chained ids modulo
    `num_buckets` (0: modulo 2**63 - 1)."""
    return _cross(inputs, True, num_buckets, hash_key, name)


@tf_export("ragged.stack_dynamic_partitions")
def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """A RaggedTensor whose row i holds the items of `data` whose partition is i, in order
    (a stable sort by partition)."""
    with name_scope(name, "SegmentStack"):
        if isinstance(data, RaggedTensor) or isinstance(partitions, RaggedTensor):
            if not (isinstance(data, RaggedTensor) and isinstance(partitions, RaggedTensor)):
                raise NotImplementedError("ndflow's stack_dynamic_partitions takes ragged data "
                                          "with ragged partitions of the same row structure")
            return stack_dynamic_partitions(data.values, partitions.values, num_partitions)
        data = convert_to_tensor(data, name="data")
        partitions = convert_to_tensor(partitions, name="partitions")
        rank = partitions.shape.rank
        if rank is None:
            raise ValueError("partitions must have known rank.")
        if rank == 0:
            data, partitions = stack([data]), stack([partitions])
        elif rank > 1:
            data = reshape(data, concat([[-1], shape(data)[rank:]], 0))
            partitions = reshape(partitions, [-1])
        ids = cast(partitions, dtypes.int64)
        order = argsort(ids, stable=True)
        rows = gather(ids, order)
        n = cast(convert_to_tensor(num_partitions), dtypes.int64)
        _check_partitions(rows, n)
        return RaggedTensor.from_value_rowids(gather(data, order), rows, nrows=n,
                                              validate=False)


def _check_partitions(rows, n):
    """TF's range checks, eagerly (graphs skip them)."""
    eager = getattr(rows, "numpy", None)
    if eager is not None:
        r, limit = eager(), int(n.numpy())
        if r.size and r[-1] >= limit:
            raise InvalidArgumentError(None, None, "partitions must be less than "
                                       "num_partitions")
        if r.size and r[0] < 0:
            raise InvalidArgumentError(None, None, "partitions must be non-negative.")
