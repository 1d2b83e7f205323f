"""The categorical feature columns: hashed, vocabulary (list and file), identity, weighted,
crossed and sequence columns, as TF's feature_column_v2 classes. Ids are TensorFlow's:
Fingerprint64 buckets (StringToHashBucketFast), SparseCrossHashed crosses."""

from __future__ import annotations

import collections

from ndflow.core import dtypes
from ndflow.core.scopes import init_scope
from ndflow.feature_column.base import (
    CategoricalColumn,
    FeatureColumn,
    IdWeightPair,
    KeyedVarLenColumn,
    assert_string_or_int,
    convert_to_tensor_or_sparse_tensor,
    to_sparse_input_and_drop_ignore_values,
)
from ndflow.ops.arithmetic import add, where
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_fill import fill
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import logical_or, not_equal
from ndflow.ops.lookup_initializers import (
    KeyValueTensorInitializer,
    TextFileIndex,
    TextFileInitializer,
)
from ndflow.ops.lookup_tables import StaticHashTable
from ndflow.ops.parsing_config import VarLenFeature
from ndflow.ops.reduction import reduce_prod
from ndflow.ops.sparse_api import reshape as sparse_reshape
from ndflow.ops.sparse_cross import cross_hashed
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.string_hash_ops import string_to_hash_bucket_fast
from ndflow.ops.string_ops import as_string


def _check_input_dtype(column, input_tensor):
    if column.dtype.is_integer != input_tensor.dtype.is_integer:
        raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                         f"key: {column.key}, column dtype: {column.dtype}, "
                         f"tensor dtype: {input_tensor.dtype}")
    assert_string_or_int(input_tensor.dtype, prefix=f"column_name: {column.key} input_tensor")


class _SimpleCategorical(KeyedVarLenColumn, CategoricalColumn):
    """A categorical column of one feature key whose transformation is its ids."""

    def transform_feature(self, transformation_cache, state_manager):
        sparse = to_sparse_input_and_drop_ignore_values(
            transformation_cache.get(self.key, state_manager))
        return self._ids(sparse, state_manager)

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return IdWeightPair(transformation_cache.get(self, state_manager), None)

    @property
    def parents(self):
        return [self.key]


class HashedCategoricalColumn(_SimpleCategorical, collections.namedtuple(
        "HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):
    """Ids = Fingerprint64(value as string) mod hash_bucket_size."""

    def _ids(self, sparse, state_manager):
        if not isinstance(sparse, SparseTensor):
            raise ValueError("SparseColumn input must be a SparseTensor.")
        assert_string_or_int(sparse.dtype, prefix=f"column_name: {self.key} input_tensor")
        if self.dtype.is_integer != sparse.dtype.is_integer:
            raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                             f"key: {self.key}, column dtype: {self.dtype}, "
                             f"tensor dtype: {sparse.dtype}")
        values = sparse.values if self.dtype == dtypes.string else as_string(sparse.values)
        ids = string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(sparse.indices, ids, sparse.dense_shape)

    @property
    def num_buckets(self):
        return self.hash_bucket_size


def _oov_lookup(table, size, num_oov, default_value, values):
    """TF's index-table lookup: in-vocabulary ids, else Fingerprint64 OOV buckets after the
    vocabulary (or default_value without buckets)."""
    ids = table.lookup(values)
    if not num_oov:
        return ids
    as_str = values if values.dtype == dtypes.string else as_string(values)
    buckets = add(string_to_hash_bucket_fast(as_str, num_oov, name="hash_bucket"), size)
    return where(not_equal(ids, default_value), ids, buckets)


class _VocabularyColumn(_SimpleCategorical):
    """A vocabulary lookup table per column (kept by the state manager)."""

    def _ids(self, sparse, state_manager):
        _check_input_dtype(self, sparse)
        key_dtype = self.dtype
        if sparse.dtype.is_integer:
            key_dtype = dtypes.int64  # the tables hold int64 keys
            sparse = SparseTensor(sparse.indices, cast(sparse.values, dtypes.int64),
                                  sparse.dense_shape)
        name = f"{self.key}_lookup"
        if state_manager is None or not state_manager.has_resource(self, name):
            with init_scope():
                table = self._make_table(key_dtype, name)
            if state_manager is not None:
                state_manager.add_resource(self, name, table)
        else:
            table = state_manager.get_resource(self, name)
        default = -1 if self.num_oov_buckets else self.default_value
        ids = _oov_lookup(table, self._vocab_size(), self.num_oov_buckets, default,
                          sparse.values)
        return SparseTensor(sparse.indices, ids, sparse.dense_shape)

    @property
    def num_buckets(self):
        return self._vocab_size() + self.num_oov_buckets


class VocabularyFileCategoricalColumn(_VocabularyColumn, collections.namedtuple(
        "VocabularyFileCategoricalColumn", ("key", "vocabulary_file", "vocabulary_size",
                                            "num_oov_buckets", "dtype", "default_value",
                                            "file_format"))):
    """Ids = line numbers of the values in a vocabulary file."""

    def __new__(cls, key, vocabulary_file, vocabulary_size, num_oov_buckets, dtype,
                default_value, file_format=None):
        return super().__new__(cls, key, vocabulary_file, vocabulary_size, num_oov_buckets,
                               dtype, default_value, file_format)

    def _vocab_size(self):
        return self.vocabulary_size

    def _make_table(self, key_dtype, name):
        init = TextFileInitializer(self.vocabulary_file, key_dtype, TextFileIndex.WHOLE_LINE,
                                   dtypes.int64, TextFileIndex.LINE_NUMBER,
                                   vocab_size=self.vocabulary_size)
        default = -1 if self.num_oov_buckets else self.default_value
        return StaticHashTable(init, default, name=name)


class VocabularyListCategoricalColumn(_VocabularyColumn, collections.namedtuple(
        "VocabularyListCategoricalColumn", ("key", "vocabulary_list", "dtype",
                                            "default_value", "num_oov_buckets"))):
    """Ids = positions of the values in an in-memory vocabulary."""

    def _vocab_size(self):
        return len(self.vocabulary_list)

    def _make_table(self, key_dtype, name):
        keys = list(self.vocabulary_list)
        init = KeyValueTensorInitializer(keys, tf_range(0, len(keys), dtype=dtypes.int64),
                                         key_dtype=key_dtype, value_dtype=dtypes.int64)
        default = -1 if self.num_oov_buckets else self.default_value
        return StaticHashTable(init, default, name=name)


class IdentityCategoricalColumn(_SimpleCategorical, collections.namedtuple(
        "IdentityCategoricalColumn", ("key", "number_buckets", "default_value"))):
    """Integer values are the ids (out of range: default_value, if given)."""

    @property
    def dtype(self):
        return dtypes.int64

    def _ids(self, sparse, state_manager):
        if not sparse.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} "
                             f"dtype: {sparse.dtype}")
        values = sparse.values
        if values.dtype != dtypes.int64:
            values = cast(values, dtypes.int64, name="values")
        if self.default_value is not None:
            out = logical_or(values < 0, values >= self.num_buckets, name="out_of_range")
            values = where(out, fill(shape(values), cast(self.default_value, dtypes.int64),
                                     name="default_values"), values)
        return SparseTensor(sparse.indices, values, sparse.dense_shape)

    @property
    def num_buckets(self):
        return self.number_buckets


class WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ("categorical_column", "weight_feature_key", "dtype"))):
    """A categorical column's ids with per-id weights from another feature."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def parse_example_spec(self):
        config = dict(self.categorical_column.parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists "
                             f"for {self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    def _weights(self, weight_tensor):
        if weight_tensor is None:
            raise ValueError(f"Missing weights {self.weight_feature_key}.")
        weight_tensor = convert_to_tensor_or_sparse_tensor(weight_tensor)
        if self.dtype != weight_tensor.dtype.base_dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got "
                             f"{weight_tensor.dtype}.")
        if not isinstance(weight_tensor, SparseTensor):
            # weight 0 means a missing id
            weight_tensor = to_sparse_input_and_drop_ignore_values(weight_tensor,
                                                                   ignore_value=0.0)
        if not weight_tensor.dtype.is_floating:
            weight_tensor = SparseTensor(weight_tensor.indices,
                                         cast(weight_tensor.values, dtypes.float32),
                                         weight_tensor.dense_shape)
        return weight_tensor

    def transform_feature(self, transformation_cache, state_manager):
        weights = self._weights(transformation_cache.get(self.weight_feature_key,
                                                         state_manager))
        ids = to_sparse_input_and_drop_ignore_values(
            transformation_cache.get(self.categorical_column, state_manager))
        return ids, weights

    def get_sparse_tensors(self, transformation_cache, state_manager):
        ids, weights = transformation_cache.get(self, state_manager)
        return IdWeightPair(ids, weights)

    @property
    def parents(self):
        return [self.categorical_column, self.weight_feature_key]


def collect_leaf_level_keys(cross):
    keys = []
    for k in cross.keys:
        keys.extend(collect_leaf_level_keys(k) if isinstance(k, CrossedColumn) else [k])
    return keys


class CrossedColumn(CategoricalColumn, collections.namedtuple(
        "CrossedColumn", ("keys", "hash_bucket_size", "hash_key"))):
    """The hashed cross of features (SparseCrossHashed of the raw values and the ids of
    categorical keys)."""

    @property
    def _is_v2_column(self):
        return all(isinstance(k, str) or k._is_v2_column for k in collect_leaf_level_keys(self))

    @property
    def name(self):
        names = [k if isinstance(k, str) else k.name for k in collect_leaf_level_keys(self)]
        return "_X_".join(sorted(names))

    @property
    def parse_example_spec(self):
        config = {}
        for key in self.keys:
            if isinstance(key, FeatureColumn):
                config.update(key.parse_example_spec)
            else:
                config[key] = VarLenFeature(dtypes.string)
        return config

    def transform_feature(self, transformation_cache, state_manager):
        tensors = []
        for key in collect_leaf_level_keys(self):
            if isinstance(key, str):
                tensors.append(transformation_cache.get(key, state_manager))
            elif isinstance(key, CategoricalColumn):
                pair = key.get_sparse_tensors(transformation_cache, state_manager)
                if pair.weight_tensor is not None:
                    raise ValueError("crossed_column does not support weight_tensor, but the "
                                     "given column populates weight_tensor. "
                                     f"Given column: {key.name}")
                tensors.append(pair.id_tensor)
            else:
                raise ValueError(f"Unsupported column type. Given: {key}")
        return cross_hashed(tensors, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def get_sparse_tensors(self, transformation_cache, state_manager):
        return IdWeightPair(transformation_cache.get(self, state_manager), None)

    @property
    def parents(self):
        return list(self.keys)


class SequenceCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "SequenceCategoricalColumn", ("categorical_column",))):
    """A categorical column over sequences: ids [batch, time, ...] flattened to 3-D."""

    _is_sequence_column = True

    @property
    def name(self):
        return self.categorical_column.name

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    def transform_feature(self, transformation_cache, state_manager):
        return self.categorical_column.transform_feature(transformation_cache, state_manager)

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    def get_sparse_tensors(self, transformation_cache, state_manager):
        pair = self.categorical_column.get_sparse_tensors(transformation_cache, state_manager)
        ids, weights = pair.id_tensor, pair.weight_tensor
        dims = ids.dense_shape
        # [batch, time, everything else]: one id list per step
        target = concat([dims[:2], reshape(reduce_prod(dims[2:]), [1])], axis=0)
        ids = sparse_reshape(ids, target)
        if weights is not None:
            weights = sparse_reshape(weights, target)
        return IdWeightPair(ids, weights)

    @property
    def parents(self):
        return [self.categorical_column]
