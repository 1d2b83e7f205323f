"""The dense feature columns: numeric, bucketized (also categorical), embedding (own and
shared weights) and indicator columns, as TF's feature_column_v2 classes."""

from __future__ import annotations

import collections

from ndflow.checkpoint.checkpoint_utils import init_from_checkpoint
from ndflow.core import context, dtypes
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.feature_column.base import (
    CategoricalColumn,
    DenseColumn,
    IdWeightPair,
    ScopeStateManager,
    SequenceDenseColumn,
    TensorSequenceLengthPair,
    sequence_length_from_sparse_tensor,
)
from ndflow.ops import variable_scope as variable_scope_lib
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import constant, reshape, shape, stack
from ndflow.ops.array_fill import ones_like, tile
from ndflow.ops.array_gather import one_hot
from ndflow.ops.array_nd import scatter_nd
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_search import Bucketize
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import logical_and
from ndflow.ops.embedding_sparse import embedding_lookup_sparse_v2, safe_embedding_lookup_sparse
from ndflow.ops.parsing_config import FixedLenFeature
from ndflow.ops.sparse_api import retain as sparse_retain
from ndflow.ops.sparse_api import slice as sparse_slice
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.sparse_v1 import merge as sparse_merge

_NOT_IN_V1 = ("SharedEmbeddingColumns are not supported in `linear_model` or `input_layer`. "
              "Please use `DenseFeatures` or `LinearModel` instead.")


def _sequence_error(kind, column, must_be: bool, private: bool = False) -> ValueError:
    seq = "_SequenceCategoricalColumn" if private else "SequenceCategoricalColumn"
    cat = column.categorical_column
    if must_be:
        return ValueError(
            f"In {kind}: {column.name}. categorical_column must be of type "
            f"{seq} to use SequenceFeatures. Suggested fix: Use one of "
            f"sequence_categorical_column_with_*. Given (type {type(cat)}): {cat}")
    return ValueError(
        f"In {kind}: {column.name}. categorical_column must not be of type {seq}. "
        "Suggested fix A: If you wish to use DenseFeatures, use a non-sequence "
        "categorical_column_with_*. Suggested fix B: If you wish to create sequence input, "
        "use SequenceFeatures instead of DenseFeatures. "
        f"Given (type {type(cat)}): {cat}")


def _sequence_dense(column, kind: str, dense, transformation_cache, state_manager):
    """The (dense tensor, sequence length) pair of a `kind` column of a sequence categorical
    column, the tensor being `dense()`."""
    if not _is_sequence(column.categorical_column):
        raise _sequence_error(kind, column, must_be=True)
    tensor = dense()
    sparse = column.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
    return TensorSequenceLengthPair(tensor, sequence_length_from_sparse_tensor(sparse.id_tensor))


def _is_sequence(column) -> bool:
    return getattr(column, "_is_sequence_column", False)


class NumericColumn(DenseColumn, collections.namedtuple(
        "NumericColumn", ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """A real-valued feature of a fixed shape."""

    @property
    def name(self):
        return self.key

    @property
    def parse_example_spec(self):
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def transform_feature(self, transformation_cache, state_manager):
        tensor = transformation_cache.get(self.key, state_manager)
        if isinstance(tensor, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return cast(tensor, dtypes.float32)

    @property
    def variable_shape(self):
        return TensorShape(self.shape)

    def get_dense_tensor(self, transformation_cache, state_manager):
        return transformation_cache.get(self, state_manager)

    @property
    def parents(self):
        return [self.key]


class BucketizedColumn(DenseColumn, CategoricalColumn, collections.namedtuple(
        "BucketizedColumn", ("source_column", "boundaries"))):
    """A numeric column's values as bucket ids (one-hot when dense)."""

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def parse_example_spec(self):
        return self.source_column.parse_example_spec

    def transform_feature(self, transformation_cache, state_manager):
        source = transformation_cache.get(self.source_column, state_manager)
        return apply_op(Bucketize, [source],
                        {"boundaries": [float(b) for b in self.boundaries]}).outputs[0]

    @property
    def variable_shape(self):
        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    def get_dense_tensor(self, transformation_cache, state_manager):
        ids = transformation_cache.get(self, state_manager)
        return one_hot(cast(ids, dtypes.int64), depth=len(self.boundaries) + 1,
                       on_value=1., off_value=0.)

    @property
    def num_buckets(self):
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def get_sparse_tensors(self, transformation_cache, state_manager):
        ids = transformation_cache.get(self, state_manager)
        batch_size = shape(ids)[0]
        source_dim = self.source_column.shape[0]
        # each source element gets its own range of bucket ids
        i1 = reshape(tile(reshape(tf_range(0, batch_size), [-1, 1]), [1, source_dim]), (-1,))
        i2 = tile(tf_range(0, source_dim), [batch_size])
        bucket_ids = reshape(ids, (-1,)) + (len(self.boundaries) + 1) * i2
        indices = cast(transpose(stack((i1, i2))), dtypes.int64)
        dense_shape = cast(stack([batch_size, source_dim]), dtypes.int64)
        return IdWeightPair(SparseTensor(indices, bucket_ids, dense_shape), None)

    @property
    def parents(self):
        return [self.source_column]


def _lookup(column, weights, sparse_tensors):
    """The embedding combination of `sparse_tensors` in `weights`, as TF: the safe lookup
    unless asked otherwise for ids of rank <= 2."""
    ids, id_weights = sparse_tensors.id_tensor, sparse_tensors.weight_tensor
    id_rank = ids.dense_shape.get_shape().as_list()[0]
    if not column.use_safe_embedding_lookup and id_rank is not None and id_rank <= 2:
        return embedding_lookup_sparse_v2(weights, ids, id_weights, combiner=column.combiner,
                                          name=f"{column.name}_weights",
                                          max_norm=column.max_norm)
    return safe_embedding_lookup_sparse(weights, ids, id_weights, combiner=column.combiner,
                                        name=f"{column.name}_weights", max_norm=column.max_norm)


def _restore(column, var, ckpt, tensor_name):
    if ckpt is not None:
        init_from_checkpoint(ckpt, {tensor_name: var})
    del column


class _EmbeddingOf:
    """The embedding columns' parts that are their categorical column's (and the vectors'
    `dimension`)."""

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    def transform_feature(self, transformation_cache, state_manager):
        return transformation_cache.get(self.categorical_column, state_manager)

    @property
    def variable_shape(self):
        return TensorShape([self.dimension])

    @property
    def parents(self):
        return [self.categorical_column]


class EmbeddingColumn(_EmbeddingOf, DenseColumn, SequenceDenseColumn, collections.namedtuple(
        "EmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer",
                            "ckpt_to_load_from", "tensor_name_in_ckpt", "max_norm",
                            "trainable", "use_safe_embedding_lookup"))):
    """A categorical column's ids as a combination of learned embedding vectors."""

    def __new__(cls, categorical_column, dimension, combiner, initializer, ckpt_to_load_from,
                tensor_name_in_ckpt, max_norm, trainable, use_safe_embedding_lookup=True):
        return super().__new__(cls, categorical_column, dimension, combiner, initializer,
                               ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable,
                               use_safe_embedding_lookup)

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    def create_state(self, state_manager):
        state_manager.create_variable(
            self, name="embedding_weights",
            shape=(self.categorical_column.num_buckets, self.dimension), dtype=dtypes.float32,
            trainable=self.trainable, use_resource=True, initializer=self.initializer)

    def _dense(self, sparse_tensors, state_manager):
        weights = state_manager.get_variable(self, name="embedding_weights")
        _restore(self, weights, self.ckpt_to_load_from, self.tensor_name_in_ckpt)
        return _lookup(self, weights, sparse_tensors)

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence(self.categorical_column):
            raise _sequence_error("embedding_column", self, must_be=False,
                                  private=isinstance(state_manager, ScopeStateManager))
        sparse = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return self._dense(sparse, state_manager)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        if not _is_sequence(self.categorical_column):
            raise _sequence_error("embedding_column", self, must_be=True)
        sparse = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        dense = self._dense(sparse, state_manager)
        return TensorSequenceLengthPair(dense,
                                        sequence_length_from_sparse_tensor(sparse.id_tensor))



class _SharedEmbeddingColumn(_EmbeddingOf, DenseColumn, collections.namedtuple(
        "_SharedEmbeddingColumn", (
            "categorical_column", "dimension", "combiner", "initializer",
            "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
            "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """v1 shared_embedding_columns: one embedding variable, found through the graph
    collection `shared_embedding_collection_name`, for several categorical columns."""

    @property
    def _is_v2_column(self):
        return False

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self):
        return self.shared_embedding_collection_name

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence(self.categorical_column):
            raise _sequence_error("embedding_column", self, must_be=False, private=True)
        with name_scope(None, self.name):
            sparse = self.categorical_column.get_sparse_tensors(transformation_cache,
                                                                state_manager)
            embedding_shape = (self.categorical_column.num_buckets, self.dimension)
            found = context.get_collection(self.shared_embedding_collection_name)
            if found:
                if len(found) > 1:
                    raise ValueError(
                        f"Collection {found} can only contain one variable. Suggested fix A: "
                        "Choose a unique name for this collection. Suggested fix B: Do not add "
                        "any variables to this collection. The feature_column library already "
                        "adds a variable under the hood.")
                weights = found[0]
                if tuple(weights.get_shape().as_list()) != embedding_shape:
                    raise ValueError(
                        f"Shared embedding collection {self.shared_embedding_collection_name} "
                        f"contains variable {weights.name} of unexpected shape "
                        f"{weights.get_shape()}. Expected shape is {embedding_shape}. Suggested"
                        " fix A: Choose a unique name for this collection. Suggested fix B: Do "
                        "not add any variables to this collection. The feature_column library "
                        "already adds a variable under the hood.")
            else:
                trainable = getattr(state_manager, "_trainable", True)
                weights = variable_scope_lib.get_variable(
                    name="embedding_weights", shape=embedding_shape, dtype=dtypes.float32,
                    initializer=self.initializer, trainable=bool(self.trainable and trainable),
                    collections=getattr(state_manager, "_collections", None))
                context.add_to_collection(self.shared_embedding_collection_name, weights)
            _restore(self, weights, self.ckpt_to_load_from, self.tensor_name_in_ckpt)
            return _lookup(self, weights, sparse)



class SharedEmbeddingColumnCreator:
    """v2 shared_embeddings' holder of the one variable (per graph) its columns share."""

    def __init__(self, dimension, initializer, ckpt_to_load_from, tensor_name_in_ckpt,
                 num_buckets, trainable, name="shared_embedding_column_creator",
                 use_safe_embedding_lookup=True):
        self._dimension = dimension
        self._initializer = initializer
        self._ckpt_to_load_from = ckpt_to_load_from
        self._tensor_name_in_ckpt = tensor_name_in_ckpt
        self._num_buckets = num_buckets
        self._trainable = trainable
        self._name = name
        self._use_safe_embedding_lookup = use_safe_embedding_lookup
        self._embedding_weights: dict = {}

    def __call__(self, categorical_column, combiner, max_norm):
        return SharedEmbeddingColumn(categorical_column, self, combiner, max_norm,
                                     self._use_safe_embedding_lookup)

    @property
    def embedding_weights(self):
        key = id(context.get_default_graph())
        if key not in self._embedding_weights:
            var = variable_scope_lib.get_variable(
                name=self._name, shape=(self._num_buckets, self._dimension),
                dtype=dtypes.float32, initializer=self._initializer, trainable=self._trainable)
            _restore(self, var, self._ckpt_to_load_from, self._tensor_name_in_ckpt)
            self._embedding_weights[key] = var
        return self._embedding_weights[key]

    @property
    def dimension(self):
        return self._dimension


class SharedEmbeddingColumn(_EmbeddingOf, DenseColumn, SequenceDenseColumn, collections.namedtuple(
        "SharedEmbeddingColumn", ("categorical_column", "shared_embedding_column_creator",
                                  "combiner", "max_norm", "use_safe_embedding_lookup"))):
    """v2 shared_embeddings' column (TF: for DenseFeatures only, never the v1 functions)."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _parse_example_spec(self):
        raise ValueError(_NOT_IN_V1)

    def _transform_feature(self, inputs):
        raise ValueError(_NOT_IN_V1)

    @property
    def variable_shape(self):
        return TensorShape([self.shared_embedding_column_creator.dimension])

    @property
    def _variable_shape(self):
        raise ValueError(_NOT_IN_V1)

    def _dense(self, transformation_cache, state_manager):
        with name_scope(None, self.name):
            sparse = self.categorical_column.get_sparse_tensors(transformation_cache,
                                                                state_manager)
            weights = self.shared_embedding_column_creator.embedding_weights
            return _lookup(self, weights, sparse)

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence(self.categorical_column):
            raise _sequence_error("embedding_column", self, must_be=False,
                                  private=isinstance(state_manager, ScopeStateManager))
        return self._dense(transformation_cache, state_manager)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        raise ValueError(_NOT_IN_V1)

    def _get_dense_tensor_with(self, inputs, state_manager):
        raise ValueError(_NOT_IN_V1)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        return _sequence_dense(
            self, "embedding_column", lambda: self._dense(transformation_cache, state_manager),
            transformation_cache, state_manager)



class IndicatorColumn(DenseColumn, SequenceDenseColumn, collections.namedtuple(
        "IndicatorColumn", ("categorical_column",))):
    """A categorical column as a multi-hot vector (weighted: the weights' sums)."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    def _dense_from(self, pair, size):
        if pair.weight_tensor is not None:
            merged = sparse_merge(pair.id_tensor, pair.weight_tensor, vocab_size=int(size))
            # the slice sorts the merged indices and sums no duplicates away
            merged = sparse_slice(merged, [0, 0], merged.dense_shape)
            return scatter_nd(merged.indices, merged.values, merged.dense_shape)
        # TF sums one_hot(dense ids) over the id axis; the counts scattered straight into
        # [..., size] are the same values without the [..., ids, size] intermediate
        ids = pair.id_tensor
        valid = logical_and(ids.values >= 0, ids.values < size)
        ids = sparse_retain(ids, valid)
        where_ = concat([ids.indices[:, :-1], reshape(ids.values, [-1, 1])], axis=1)
        ones = ones_like(ids.values, dtype=dtypes.float32)
        out_shape = concat([ids.dense_shape[:-1], constant([size], dtypes.int64)], axis=0)
        return scatter_nd(where_, ones, out_shape)

    def transform_feature(self, transformation_cache, state_manager):
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        return self._dense_from(pair, self.categorical_column.num_buckets)

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self):
        return TensorShape([1, self.categorical_column.num_buckets])

    def get_dense_tensor(self, transformation_cache, state_manager):
        if _is_sequence(self.categorical_column):
            raise _sequence_error("indicator_column", self, must_be=False,
                                  private=isinstance(state_manager, ScopeStateManager))
        return transformation_cache.get(self, state_manager)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        return _sequence_dense(
            self, "indicator_column", lambda: transformation_cache.get(self, state_manager),
            transformation_cache, state_manager)

    @property
    def parents(self):
        return [self.categorical_column]
