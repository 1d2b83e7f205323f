"""The `tf.sparse` functions that rearrange entries (TensorFlow's sparse_ops.py): reorder,
reshape, add, concat, slice, split, fill_empty_rows, sparse_dense_matmul on the ops of
sparse_ops.py, and the ones TensorFlow writes in Python on other ops: from_dense, retain,
reset_shape, to_indicator, transpose, expand_dims, eye, map_values, mask."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.ops import sparse_api_docs
from ndflow.ops import sparse_ops as ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims as dense_expand_dims
from ndflow.ops.array_core import reshape as dense_reshape
from ndflow.ops.array_core import shape as dense_shape_of
from ndflow.ops.array_core import stack
from ndflow.ops.array_fill import ones, zeros, zeros_like
from ndflow.ops.array_gather import gather, where
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_slicing import concat as dense_concat
from ndflow.ops.array_transpose import transpose as dense_transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, logical_not, not_equal
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.reduction import reduce_any, reduce_max, reduce_min
from ndflow.ops.sparse_tensor import SparseTensor, SparseToDense, sparse_tensor_to_dense


def _check(sp, what="Input"):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(sp).__name__}.")
    return sp


@tf_export("sparse.from_dense")
def from_dense(tensor, name=None):
    """The SparseTensor of the non-zero (non-empty) elements of `tensor`."""
    with name_scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor)
        indices = where(not_equal(tensor, zeros_like(tensor)))
        return SparseTensor(indices, gather_nd(tensor, indices),
                            dense_shape_of(tensor, out_type=dtypes.int64))


@tf_export("sparse.reorder", v1=["sparse.reorder", "sparse_reorder"])
def reorder(sp_input, name=None):
    """The same entries in canonical row-major order."""
    sp = _check(sp_input)
    idx, val = apply_op(ops.SparseReorder, [sp.indices, sp.values, sp.dense_shape],
                        name=name or "SparseReorder").outputs
    return SparseTensor(idx, val, sp.dense_shape)


@tf_export("sparse.reshape", v1=["sparse.reshape", "sparse_reshape"])
def reshape(sp_input, shape, name=None):
    """The entries of `sp_input` in a dense tensor of shape `shape` (one dimension may be
    -1), in the same row-major order."""
    sp = _check(sp_input)
    shape = convert_to_tensor(shape, dtypes.int64)
    idx, out_shape = apply_op(ops.SparseReshape, [sp.indices, sp.dense_shape, shape],
                              name=name or "SparseReshape").outputs
    return SparseTensor(idx, sp.values, out_shape)


def _real_dtype(dt):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dt, dt)


@tf_export("sparse.add", v1=[])
def add(a, b, threshold=0):
    """a + b: two SparseTensors give a SparseTensor (sums smaller in magnitude than
    `threshold` dropped); a SparseTensor and a dense tensor give a dense tensor."""
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        thresh = convert_to_tensor(threshold, _real_dtype(a.dtype), name="threshold")
        idx, val, shape = apply_op(ops.SparseAdd, [a.indices, a.values, a.dense_shape,
                                                   b.indices, b.values, b.dense_shape,
                                                   thresh]).outputs
        return SparseTensor(idx, val, shape)
    if isinstance(b, SparseTensor):
        a, b = b, a
    if not isinstance(a, SparseTensor):
        raise TypeError("At least one input must be a SparseTensor.")
    dense = convert_to_tensor(b, a.dtype)
    return apply_op(ops.SparseTensorDenseAdd, [a.indices, a.values, a.dense_shape, dense])\
        .outputs[0]


@tf_export("sparse.concat", v1=[])
def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """The SparseTensors `sp_inputs` joined along `axis`; with `expand_nonconcat_dims` the
    other dimensions grow to the largest input's."""
    if not isinstance(sp_inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    sps = [_check(s) for s in sp_inputs]
    if len(sps) == 1:
        return sps[0]
    shapes = [s.dense_shape for s in sps]
    if expand_nonconcat_dims:
        largest = reduce_max(stack(shapes), axis=0)
        rank = largest.shape.as_list()[0]
        if rank is None:
            raise ValueError("expand_nonconcat_dims needs inputs of known rank")
        ax = axis + rank if axis < 0 else axis
        shapes = [dense_concat([largest[:ax], s[ax:ax + 1], largest[ax + 1:]], 0)
                  for s in shapes]
    out = apply_op(ops.SparseConcat, [[s.indices for s in sps], [s.values for s in sps],
                                      shapes], {"concat_dim": int(axis)},
                   name=name or "SparseConcat").outputs
    return SparseTensor(*out)


@tf_export("sparse.slice", v1=["sparse.slice", "sparse_slice"])
def slice(sp_input, start, size, name=None):  # noqa: A001 - TensorFlow's name
    """The entries of `sp_input` inside the box [start, start + size), re-based at `start`."""
    sp = _check(sp_input)
    out = apply_op(ops.SparseSlice, [sp.indices, sp.values, sp.dense_shape,
                                     convert_to_tensor(start, dtypes.int64),
                                     convert_to_tensor(size, dtypes.int64)],
                   name=name or "SparseSlice").outputs
    return SparseTensor(*out)


@tf_export("sparse.split", v1=[])
def split(sp_input=None, num_split=None, axis=None, name=None):
    """`num_split` SparseTensors along `axis`; the first `size % num_split` one wider."""
    sp = _check(sp_input)
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None:
        raise ValueError("axis is required")
    out = apply_op(ops.SparseSplit, [convert_to_tensor(axis, dtypes.int64), sp.indices,
                                     sp.values, sp.dense_shape], {"num_split": int(num_split)},
                   name=name or "SparseSplit").outputs
    n = int(num_split)
    return [SparseTensor(out[i], out[n + i], out[2 * n + i]) for i in range(n)]


@tf_export("sparse.fill_empty_rows", v1=["sparse.fill_empty_rows", "sparse_fill_empty_rows"])
def fill_empty_rows(sp_input, default_value, name=None):
    """`sp_input` with one `default_value` entry at column 0 of each empty row, and a bool
    vector marking the rows that were empty."""
    sp = _check(sp_input)
    default = convert_to_tensor(default_value, sp.dtype, name="default_value")
    idx, val, empty, _ = apply_op(ops.SparseFillEmptyRows, [sp.indices, sp.values,
                                                            sp.dense_shape, default],
                                  name=name or "SparseFillEmptyRows").outputs
    return SparseTensor(idx, val, sp.dense_shape), empty


@tf_export("sparse.sparse_dense_matmul", v1=["sparse.sparse_dense_matmul", "sparse.matmul",
                                             "sparse_tensor_dense_matmul"])
def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The dense product of a rank-2 SparseTensor and a dense matrix (either may come
    first)."""
    if isinstance(b, SparseTensor) and not isinstance(sp_a, SparseTensor):
        # A·B with B sparse: (B^H·A^H)^H, one sparse-times-dense product.
        a = convert_to_tensor(sp_a, b.dtype)
        prod = apply_op(ops.SparseTensorDenseMatMul, [b.indices, b.values, b.dense_shape, a],
                        {"adjoint_a": not adjoint_b, "adjoint_b": not adjoint_a},
                        name=name or "SparseTensorDenseMatMul").outputs[0]
        return dense_transpose(prod, conjugate=True)
    sp = _check(sp_a)
    b = convert_to_tensor(b, sp.dtype, name="b")
    return apply_op(ops.SparseTensorDenseMatMul, [sp.indices, sp.values, sp.dense_shape, b],
                    {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                    name=name or "SparseTensorDenseMatMul").outputs[0]


@tf_export("sparse.retain", v1=["sparse.retain", "sparse_retain"])
def retain(sp_input, to_retain):
    """The entries where the bool vector `to_retain` is True."""
    sp = _check(sp_input)
    keep = convert_to_tensor(to_retain, dtypes.bool)
    if keep.shape.rank not in (None, 1):
        raise ValueError(f"to_retain should be a vector, got shape {keep.shape}")
    n = sp.values.shape.as_list()[0] if sp.values.shape.rank else None
    m = keep.shape.as_list()[0] if keep.shape.rank else None
    if n is not None and m is not None and n != m:
        raise ValueError(f"Shapes ({n},) and ({m},) are incompatible")
    return SparseTensor(boolean_mask(sp.indices, keep), boolean_mask(sp.values, keep),
                        sp.dense_shape)


@tf_export("sparse.reset_shape", v1=["sparse.reset_shape", "sparse_reset_shape"])
def reset_shape(sp_input, new_shape=None):
    """`sp_input` with dense shape `new_shape` (no smaller in any dimension), or the
    tightest shape holding its entries when None."""
    sp = _check(sp_input)
    if new_shape is None:
        return SparseTensor(sp.indices, sp.values, reduce_max(sp.indices, axis=0) + 1)
    new = convert_to_tensor(new_shape, dtypes.int64)
    old_v = getattr(sp.dense_shape, "numpy", None)
    new_v = getattr(new, "numpy", None)
    if old_v is not None and new_v is not None:
        old_v, new_v = old_v(), new_v()
        if old_v.shape != new_v.shape:
            raise ValueError(f"Shapes {list(old_v)} and {list(new_v)} must have the same rank")
        if (new_v < old_v).any():   # (TF's message names the two the other way round)
            raise ValueError("Requested new_shape should have dimension sizes >= "
                             f"sp_input.shape.  Found new_shape ({old_v}), sp_input.shape "
                             f"({new_v}).")
    return SparseTensor(sp.indices, sp.values, new)


@tf_export("sparse.to_indicator", v1=["sparse.to_indicator", "sparse_to_indicator"])
def to_indicator(sp_input, vocab_size, name=None):
    """A bool tensor whose last dimension (of size `vocab_size`) marks the ids that each
    row's values hold."""
    sp = _check(sp_input)
    with name_scope(name, "SparseToIndicator"):
        ids = cast(sp.values, dtypes.int64)
        indices = dense_concat([sp.indices[:, :-1], dense_expand_dims(ids, 1)], 1)
        shape = dense_concat([sp.dense_shape[:-1],
                              dense_reshape(convert_to_tensor(vocab_size, dtypes.int64),
                                            [1])], 0)
        ordered, flags = apply_op(ops.SparseReorder, [indices, ones(dense_shape_of(ids),
                                                                    dtypes.bool), shape]).outputs
        return apply_op(SparseToDense, [ordered, shape, flags,
                                        convert_to_tensor(False, dtypes.bool)],
                        {"validate_indices": True}).outputs[0]   # ids out of range: an error


@tf_export("sparse.transpose", v1=["sparse.transpose", "sparse_transpose"])
def transpose(sp_input, perm=None, name=None):
    """The SparseTensor with dimensions permuted by `perm` (reversed when None), in
    canonical order."""
    sp = _check(sp_input)
    with name_scope(name, "SparseTranspose"):
        if perm is None:
            rank = sp.dense_shape.shape.as_list()[0]
            perm = list(range(rank - 1, -1, -1))
        perm = convert_to_tensor(perm, dtypes.int32)
        indices = gather(sp.indices, perm, axis=1)
        shape = gather(sp.dense_shape, perm)
        return reorder(SparseTensor(indices, sp.values, shape))


@tf_export("sparse.expand_dims")
def expand_dims(sp_input, axis=None, name=None):
    """`sp_input` with a dimension of size 1 inserted at `axis`."""
    sp = _check(sp_input)
    rank = sp.dense_shape.shape.as_list()[0]
    axis = -1 if axis is None else int(axis)
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise ValueError(f"axis {axis} is out of range for a SparseTensor of rank {rank}")
    with name_scope(name, "ExpandDims"):
        ax = axis + rank + 1 if axis < 0 else axis
        column = zeros(stack([dense_shape_of(sp.indices, out_type=dtypes.int64)[0],
                              convert_to_tensor(1, dtypes.int64)]), dtypes.int64)
        indices = dense_concat([sp.indices[:, :ax], column, sp.indices[:, ax:]], 1)
        shape = dense_concat([sp.dense_shape[:ax], convert_to_tensor([1], dtypes.int64),
                              sp.dense_shape[ax:]], 0)
        return SparseTensor(indices, sp.values, shape)


@tf_export("sparse.eye")
def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """The [num_rows, num_columns] identity matrix as a SparseTensor."""
    with name_scope(name, "eye"):
        rows = convert_to_tensor(num_rows, dtypes.int64)
        cols = rows if num_columns is None else convert_to_tensor(num_columns, dtypes.int64)
        n = reduce_min(stack([rows, cols]))
        diag = tf_range(n, dtype=dtypes.int64)
        return SparseTensor(stack([diag, diag], axis=1), ones(dense_reshape(n, [1]),
                                                              dtypes.as_dtype(dtype)),
                            stack([rows, cols]))


def _swap(v, found: list):
    """`v` with each SparseTensor replaced by its values (collected in `found`)."""
    if isinstance(v, SparseTensor):
        found.append(v)
        return v.values
    if isinstance(v, (list, tuple)):
        return type(v)(_swap(x, found) for x in v)
    if isinstance(v, dict):
        return {k: _swap(x, found) for k, x in v.items()}
    return v


@tf_export("sparse.map_values", v1=[])
def map_values(op, *args, **kwargs):
    """`op` applied to the values of the SparseTensors among the arguments (which must share
    their indices); returns a SparseTensor with those indices."""
    found = []
    new_args = [_swap(a, found) for a in args]
    new_kwargs = {k: _swap(v, found) for k, v in kwargs.items()}
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    for other in found[1:]:
        a, b = getattr(first.indices, "numpy", None), getattr(other.indices, "numpy", None)
        if a is not None and b is not None and (a().shape != b().shape or (a() != b()).any()):
            raise ValueError("SparseTensors to map_values must have the same indices")
    return SparseTensor(first.indices, op(*new_args, **new_kwargs), first.dense_shape)


@tf_export("sparse.mask", v1=["sparse.mask", "sparse_mask"])
def mask(a, mask_indices, name=None):
    """The IndexedSlices `a` without the slices whose index is in `mask_indices`."""
    with name_scope(name, "sparse_mask"):
        drop = convert_to_tensor(mask_indices, a.indices.dtype)
        hit = reduce_any(equal(dense_expand_dims(a.indices, 1), dense_reshape(drop, [1, -1])),
                         axis=1)
        keep = where(logical_not(hit))[:, 0]
        return IndexedSlices(gather(a.values, keep), gather(a.indices, keep), a.dense_shape)


# tf.sparse.to_dense lives with SparseTensor (sparse_tensor.py); the same function here, so
# that every tf.sparse function can be imported from this module.
to_dense = sparse_tensor_to_dense

__all__ = ["to_dense", "from_dense", "reorder", "reshape", "add", "concat", "slice", "split",
           "fill_empty_rows", "sparse_dense_matmul", "retain", "reset_shape", "to_indicator",
           "transpose", "expand_dims", "eye", "map_values", "mask"]


attach(globals(), sparse_api_docs.DOCS)
