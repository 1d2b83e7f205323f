"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse` (v2 and
compat.v1), as TensorFlow composes them (embedding_ops.py, ragged_embedding_ops.py): each row
of a 2-D SparseTensor (or rank-2 RaggedTensor) of ids picks rows of a table (one tensor or
variable, or shards split by the "mod"/"div" strategy), weighted and combined by "sum",
"mean" or "sqrtn". Without weights on a single table the rows go straight to
SparseSegmentSum/Mean/SqrtN with `sparse_gradient` (the table's gradient is IndexedSlices);
otherwise the distinct ids are looked up once (embedding_lookup), gathered back per entry,
scaled by the weights and reduced by SegmentSum. The safe variant drops ids < 0 (and weights
<= 0 unless summing), fills empty rows with `default_id` (zeros when None), and folds
higher-rank ids to 2-D and back."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import div_no_nan, multiply, where_v1
from ndflow.ops.arithmetic import pow as tf_pow
from ndflow.ops.array_core import expand_dims, rank, reshape, shape, size, stack
from ndflow.ops.array_fill import ones, tile, zeros_like
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_search import unique
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_slicing import slice as tf_slice
from ndflow.ops.cast import cast
from ndflow.ops.comparison import greater, greater_equal
from ndflow.ops.embedding_ops import embedding_lookup_v1
from ndflow.ops.gather_batch import gather
from ndflow.ops.math import sqrt
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.reduction import reduce_prod
from ndflow.ops.segment import segment_sum
from ndflow.ops.sparse_api import fill_empty_rows, retain
from ndflow.ops.sparse_api import reshape as sparse_reshape
from ndflow.ops.sparse_reductions import segment_mean as sparse_segment_mean
from ndflow.ops.sparse_reductions import segment_sqrt_n as sparse_segment_sqrt_n
from ndflow.ops.sparse_reductions import segment_sum as sparse_segment_sum
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.variables import Variable

_SPARSE_SEGMENT = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                   "sqrtn": sparse_segment_sqrt_n}


def _combiner(combiner):
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    return combiner


def _table_list(params) -> list:
    """A PartitionedVariable's parts; anything but a list is one table (TF's rule)."""
    if callable(getattr(params, "_get_variable_list", None)):
        params = params._get_variable_list()
    return params if isinstance(params, list) else [params]


def _is_table(p) -> bool:
    return isinstance(p, (Tensor, CompositeTensor, Variable))


def _combine(params: list, segment_ids, sp_weights, ids, combiner: str, max_norm,
             allow_fast_lookup: bool, partition_strategy: str, name) -> Tensor:
    """TF's embedding_lookup_sparse_impl: the combined embeddings of each segment."""
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    if len(params) == 1 and not _is_table(params[0]):
        params = [convert_to_tensor(params[0], name="params")]
    ignore_weights = sp_weights is None
    sparse_gradient = False
    if (len(params) == 1 and not isinstance(params[0], CompositeTensor) and max_norm is None
            and (allow_fast_lookup or ignore_weights)):
        idx, embeddings = ids, params[0]
        if isinstance(embeddings, Variable):
            embeddings = embeddings.read_value()
        sparse_gradient = not allow_fast_lookup
    else:
        ids, idx = unique(ids)
        embeddings = embedding_lookup_v1(params, ids, partition_strategy=partition_strategy,
                                         max_norm=max_norm)
    if ignore_weights:
        if segment_ids.dtype not in (dtypes.int32, dtypes.int64):
            segment_ids = cast(segment_ids, dtypes.int32)
        return _SPARSE_SEGMENT[combiner](embeddings, idx, segment_ids, name=name,
                                         sparse_gradient=sparse_gradient)
    if segment_ids.dtype != dtypes.int32:
        segment_ids = cast(segment_ids, dtypes.int32)
    weights = sp_weights.values
    embeddings = gather(embeddings, idx)
    original_dtype = embeddings.dtype
    if original_dtype in (dtypes.float16, dtypes.bfloat16):
        embeddings = cast(embeddings, dtypes.float32)
    if weights.dtype != embeddings.dtype:
        weights = cast(weights, embeddings.dtype)
    # each weight broadcast over its embedding's axes
    weights_shape = shape(weights)
    ones_shape = expand_dims(rank(embeddings) - 1, 0)
    static = weights.shape
    weights = reshape(weights, concat([weights_shape, ones(ones_shape, weights_shape.dtype)], 0))
    if embeddings.shape.rank is not None:
        weights.set_shape(static.concatenate([1] * (embeddings.shape.rank - 1)))
    embeddings = multiply(embeddings, weights)
    if combiner == "sum":
        embeddings = segment_sum(embeddings, segment_ids, name=name)
    else:
        summed = segment_sum(embeddings, segment_ids)
        if combiner == "mean":
            norm = segment_sum(weights, segment_ids)
        else:
            norm = sqrt(segment_sum(tf_pow(weights, 2), segment_ids))
        embeddings = div_no_nan(summed, norm, name=name)
    if embeddings.dtype != original_dtype:
        embeddings = cast(embeddings, original_dtype)
    return embeddings


def _lookup_ragged(params, rt_ids, rt_weights, partition_strategy, name, combiner, max_norm,
                   allow_fast_lookup):
    """TF's ragged embedding_lookup_sparse: the rows of a rank-2 RaggedTensor of ids."""
    combiner = _combiner(combiner)
    params = _table_list(params)
    if rt_weights is not None:
        if not isinstance(rt_weights, RaggedTensor):
            # (TF's message, whose doubled braces keep the placeholders literal)
            raise TypeError("sp_ids must be of the same type as sp_weights, received "
                            "{type(sp_ids).__name__!r} for sp_ids and "
                            "{type(sp_weights).__name__!r} for sp_weights.")
        rt_ids.values.shape.assert_is_compatible_with(rt_weights.values.shape)
        rt_ids.shape.assert_is_compatible_with(rt_weights.shape)
    with name_scope(name, "embedding_lookup_sparse") as scope:
        return _combine(params, rt_ids.value_rowids(), rt_weights, rt_ids.flat_values,
                        combiner, max_norm, allow_fast_lookup, partition_strategy, scope)


@tf_export(v1=["nn.embedding_lookup_sparse"])
def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None, allow_fast_lookup=False) -> Tensor:
    """`tf.compat.v1.nn.embedding_lookup_sparse`: for each row of the 2-D SparseTensor (or
    RaggedTensor) `sp_ids`, its ids' rows of `params` weighted by `sp_weights` (None: 1) and
    combined by `combiner` ("mean" by default, "sqrtn", "sum"); shards split by
    `partition_strategy`. Rows after the last non-empty one are absent, empty rows before
    it are zero."""
    if isinstance(sp_ids, RaggedTensor):
        return _lookup_ragged(params, sp_ids, sp_weights, partition_strategy, name, combiner,
                              max_norm, allow_fast_lookup)
    combiner = _combiner(combiner)
    params = _table_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor,got "
                            f"{type(sp_weights)}")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    with name_scope(name, "embedding_lookup_sparse") as scope:
        return _combine(params, sp_ids.indices[:, 0], sp_weights, sp_ids.values, combiner,
                        max_norm, allow_fast_lookup, partition_strategy, scope)


@tf_export("nn.embedding_lookup_sparse", v1=[])
def embedding_lookup_sparse_v2(params, sp_ids, sp_weights, combiner=None, max_norm=None,
                               name=None, allow_fast_lookup=False) -> Tensor:
    """`tf.nn.embedding_lookup_sparse`: the v1 function with shards split by "div"."""
    return embedding_lookup_sparse(params, sp_ids, sp_weights, "div", name, combiner, max_norm,
                                   allow_fast_lookup)


def _tables_for(embedding_weights, sparse_weights) -> list:
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    tables = _table_list(embedding_weights)
    if len(tables) < 1:
        raise ValueError(f"Missing embedding_weights {tables}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    return [w if isinstance(w, Variable) and dtype in (None, w.dtype)
            else convert_to_tensor(w, dtype=dtype) for w in tables]


def _retain_sparse(ids: SparseTensor, weights, keep):
    return retain(ids, keep), None if weights is None else retain(weights, keep)


def _retain_ragged(ids: RaggedTensor, weights, keep):
    nrows, rowids = ids.nrows(), boolean_mask(ids.value_rowids(), keep)

    def rebuild(rt):
        return RaggedTensor.from_value_rowids(boolean_mask(rt.values, keep), rowids,
                                              nrows=nrows, validate=False)
    return rebuild(ids), None if weights is None else rebuild(weights)


def _prune(ids, weights, combiner: str, retain_fn):
    """Drops ids < 0, and (unless summing) entries whose weight is <= 0."""
    ids, weights = retain_fn(ids, weights, greater_equal(ids.values, 0))
    if combiner != "sum" and weights is not None:
        ids, weights = retain_fn(ids, weights, greater(weights.values, 0))
    return ids, weights


def _fill_empty_ragged(rt: RaggedTensor, default_value):
    """TF's ragged fill_empty_rows (RaggedFillEmptyRows), through SparseFillEmptyRows: one
    `default_value` in each empty row, and the bool vector of the rows that were empty."""
    rowids = cast(rt.value_rowids(), dtypes.int64)
    n = size(rt.values, out_type=dtypes.int64)
    column = range_(n, dtype=dtypes.int64) - gather(cast(rt.row_splits, dtypes.int64), rowids)
    dense_shape = stack([cast(rt.nrows(), dtypes.int64), n + 1])
    filled, empty = fill_empty_rows(SparseTensor(stack([rowids, column], 1), rt.values,
                                                 dense_shape), default_value)
    return RaggedTensor.from_value_rowids(filled.values, filled.indices[:, 0],
                                          nrows=rt.nrows(out_type=dtypes.int64),
                                          validate=False), empty


def _zero_empty_rows(result, is_row_empty, scope):
    empty = tile(reshape(is_row_empty, [-1, 1]), stack([1, shape(result)[1]]))
    return where_v1(empty, zeros_like(result), result, name=scope)


def _safe_ragged(tables, ids, weights, combiner, default_id, scope, partition_strategy,
                 max_norm, allow_fast_lookup):
    ids, weights = _prune(ids, weights, combiner, _retain_ragged)
    ids, is_row_empty = _fill_empty_ragged(ids, convert_to_tensor(default_id or 0, ids.dtype))
    if weights is not None:
        weights, _ = _fill_empty_ragged(weights, convert_to_tensor(1.0, weights.dtype))
    result = embedding_lookup_sparse(tables, ids, weights, combiner=combiner,
                                     partition_strategy=partition_strategy,
                                     name=None if default_id is None else scope,
                                     max_norm=max_norm, allow_fast_lookup=allow_fast_lookup)
    if default_id is None:
        result = _zero_empty_rows(result, is_row_empty, scope)
    return result


@tf_export(v1=["nn.safe_embedding_lookup_sparse"])
def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False) -> Tensor:
    """`tf.compat.v1.nn.safe_embedding_lookup_sparse`: embedding_lookup_sparse after
    dropping ids < 0 and (unless `combiner` is "sum") weights <= 0; a row left with no id
    gets `default_id`'s embedding, or zeros when it is None. SparseTensor ids of rank > 2
    are combined along their last dimension (output `[d0, ..., dn-1] + embedding shape`)."""
    tables = _tables_for(embedding_weights, sparse_weights)
    with name_scope(name, "embedding_lookup") as scope:
        if isinstance(sparse_ids, RaggedTensor):
            return _safe_ragged(tables, sparse_ids, sparse_weights, combiner, default_id,
                                scope, partition_strategy, max_norm, allow_fast_lookup)
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape.dims[0] if original_shape.shape.rank else None
        original_rank = size(original_shape) if rank_dim is None else rank_dim
        outer = tf_slice(original_shape, [0], stack([original_rank - 1]))
        sparse_ids = sparse_reshape(sparse_ids, stack([reduce_prod(outer),
                                                       gather(original_shape,
                                                              original_rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune(sparse_ids, sparse_weights, combiner,
                                            _retain_sparse)
        sparse_ids, is_row_empty = fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(tables, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope,
                                         max_norm=max_norm,
                                         allow_fast_lookup=allow_fast_lookup)
        if default_id is None:
            result = _zero_empty_rows(result, is_row_empty, scope)
        final = reshape(result, concat([cast(outer, dtypes.int32), shape(result)[1:]], 0))
        outer_rank = None if rank_dim is None else rank_dim - 1
        final.set_shape(TensorShape(None if outer_rank is None else [None] * outer_rank)
                        .concatenate(result.shape[1:]))
        return final


@tf_export("nn.safe_embedding_lookup_sparse", v1=[])
def safe_embedding_lookup_sparse_v2(embedding_weights, sparse_ids, sparse_weights=None,
                                    combiner="mean", default_id=None, max_norm=None, name=None,
                                    allow_fast_lookup=False) -> Tensor:
    """`tf.nn.safe_embedding_lookup_sparse`: the v1 function with shards split by "div"."""
    return safe_embedding_lookup_sparse(embedding_weights, sparse_ids,
                                        sparse_weights=sparse_weights, combiner=combiner,
                                        default_id=default_id, name=name,
                                        partition_strategy="div", max_norm=max_norm,
                                        allow_fast_lookup=allow_fast_lookup)
