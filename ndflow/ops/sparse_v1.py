"""TF1 spellings of the tf.sparse functions (`tf.compat.v1.sparse.*`, `tf.compat.v1.sparse_*`):
the deprecated argument names (thresh, concat_dim, reduction_axes, keep_dims, split_dim) and
the *_sparse reductions, forwarding to the TF2 functions; and the TF1-only sparse_placeholder,
sparse_to_dense and sparse_merge."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.ops import array_core, sparse_api, sparse_reductions, sparse_v1_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.sparse_tensor import SparseTensor, SparseToDense


def _pick(new, old, new_name: str, old_name: str):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
    return old if new is None else new


@tf_export(v1=["sparse.add", "sparse_add"])
def add_v1(a, b, threshold=None, thresh=None):
    """`tf.compat.v1.sparse.add`: `thresh` is the old name of `threshold`."""
    threshold = _pick(threshold, thresh, "threshold", "thresh")
    return sparse_api.add(a, b, 0 if threshold is None else threshold)


@tf_export(v1=["sparse.concat", "sparse_concat"])
def concat_v1(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
              expand_nonconcat_dims=None):
    """`tf.compat.v1.sparse.concat`: `concat_dim` / `expand_nonconcat_dim` are old names."""
    axis = _pick(axis, concat_dim, "axis", "concat_dim")
    expand = _pick(expand_nonconcat_dims, expand_nonconcat_dim or None, "expand_nonconcat_dims",
                   "expand_nonconcat_dim")
    return sparse_api.concat(axis, sp_inputs, bool(expand), name)


def _reduce_v1(fn, sparse: bool, export: list):
    def reduce_v1(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
        axis = _pick(axis, reduction_axes, "axis", "reduction_axes")
        keepdims = _pick(keepdims, keep_dims, "keepdims", "keep_dims")
        return fn(sp_input, axis, keepdims, output_is_sparse=sparse)
    reduce_v1.__doc__ = f"`tf.compat.v1.{export[0]}` (old argument names accepted)."
    reduce_v1.__name__ = reduce_v1.__qualname__ = export[1]
    return tf_export(v1=export)(reduce_v1)


reduce_sum_v1 = _reduce_v1(sparse_reductions.reduce_sum, False,
                           ["sparse.reduce_sum", "sparse_reduce_sum"])
reduce_sum_sparse_v1 = _reduce_v1(sparse_reductions.reduce_sum, True,
                                  ["sparse.reduce_sum_sparse", "sparse_reduce_sum_sparse"])
reduce_max_v1 = _reduce_v1(sparse_reductions.reduce_max, False,
                           ["sparse.reduce_max", "sparse_reduce_max"])
reduce_max_sparse_v1 = _reduce_v1(sparse_reductions.reduce_max, True,
                                  ["sparse.reduce_max_sparse", "sparse_reduce_max_sparse"])


def _segment_v1(fn, what: str):
    def segment_v1(data, indices, segment_ids, name=None, num_segments=None,
                   sparse_gradient=False):
        return fn(data, indices, segment_ids, num_segments, name, sparse_gradient)
    segment_v1.__doc__ = f"`tf.compat.v1.sparse.segment_{what}` (TF1 argument order)."
    segment_v1.__name__ = segment_v1.__qualname__ = f"segment_{what}_v1"
    return tf_export(v1=[f"sparse.segment_{what}", f"sparse_segment_{what}"])(segment_v1)


segment_sum_v1 = _segment_v1(sparse_reductions.segment_sum, "sum")
segment_mean_v1 = _segment_v1(sparse_reductions.segment_mean, "mean")
segment_sqrt_n_v1 = _segment_v1(sparse_reductions.segment_sqrt_n, "sqrt_n")


@tf_export(v1=["sparse.split", "sparse_split"])
def split_v1(keyword_required=None, sp_input=None, num_split=None, axis=None, name=None,
             split_dim=None):
    """`tf.compat.v1.sparse.split`: keyword arguments only; `split_dim` is the old `axis`."""
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    return sparse_api.split(sp_input, num_split, _pick(axis, split_dim, "axis", "split_dim"),
                            name)


@tf_export(v1=["sparse.placeholder", "sparse_placeholder"])
def placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders, fed in `Session.run` from a SparseTensorValue
    (or an (indices, values, dense_shape) tuple); a fully known `shape` is its default."""
    with name_scope(name, "SparseTensor"):
        rank = None if shape is None else len(shape)
        values = array_core.placeholder(dtype, [None], name="values")
        indices = array_core.placeholder(dtypes.int64, [None, rank], name="indices")
        if shape is not None and all(d is not None and d >= 0 for d in shape):
            dense_shape = array_core.placeholder_with_default(
                convert_to_tensor([int(d) for d in shape], dtypes.int64), [rank], name="shape")
        else:
            dense_shape = array_core.placeholder(dtypes.int64, [rank], name="shape")
        return SparseTensor(indices, values, dense_shape)


@tf_export(v1=["sparse_to_dense"])
def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """The dense tensor of shape `output_shape` holding `sparse_values` at `sparse_indices`
    (a scalar value fills every index) and `default_value` elsewhere."""
    values = convert_to_tensor(sparse_values)
    return apply_op(SparseToDense, [convert_to_tensor(sparse_indices),
                                    convert_to_tensor(output_shape,
                                                      dtype_hint=dtypes.int32),
                                    values, convert_to_tensor(default_value, values.dtype)],
                    {"validate_indices": bool(validate_indices)},
                    name=name).outputs[0]


@tf_export(v1=["sparse.merge", "sparse_merge"])
def merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """A SparseTensor whose last index is each entry's id (from `sp_ids`) in a dimension of
    `vocab_size`, holding `sp_values`' values (TF1's sparse_merge, one id column)."""
    with name_scope(name, "SparseMerge"):
        ids = cast(sp_ids.values, dtypes.int64)
        indices = concat([sp_ids.indices[:, :-1], expand_dims(ids, 1)], 1)
        shape = concat([sp_ids.dense_shape[:-1],
                        convert_to_tensor([int(vocab_size)], dtypes.int64)], 0)
        merged = SparseTensor(indices, sp_values.values, shape)
        return merged if already_sorted else sparse_api.reorder(merged)


attach(globals(), sparse_v1_docs.DOCS)
