"""Sequence feature columns (TF's sequence_feature_column.py): a numeric column over
[batch, time, ...] sparse input and the categorical columns' sequence forms."""

from __future__ import annotations

import collections

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.feature_column import constructors
from ndflow.feature_column.base import (
    KeyedVarLenColumn,
    SequenceDenseColumn,
    TensorSequenceLengthPair,
    check_shape,
    sequence_length_from_sparse_tensor,
)
from ndflow.feature_column.categorical_columns import SequenceCategoricalColumn
from ndflow.feature_column.deprecation_warnings import SEQUENCE_FEATURE_COLUMN, deprecated
from ndflow.ops.array_core import reshape, shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.sparse_tensor import sparse_tensor_to_dense


class SequenceNumericColumn(KeyedVarLenColumn, SequenceDenseColumn, collections.namedtuple(
        "SequenceNumericColumn", ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """Real values per time step: [batch, time, *shape] after padding with default_value."""

    def transform_feature(self, transformation_cache, state_manager):
        tensor = transformation_cache.get(self.key, state_manager)
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return tensor

    @property
    def variable_shape(self):
        return TensorShape(self.shape)

    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        sp = transformation_cache.get(self, state_manager)
        dense = sparse_tensor_to_dense(sp, default_value=self.default_value)
        dense = reshape(dense, concat([shape(dense)[:1], [-1], list(self.shape)], axis=0))
        # a 2-D input holds num_elements values per step
        num_elements = self.variable_shape.num_elements() if sp.shape.ndims == 2 else 1
        return TensorSequenceLengthPair(
            dense, sequence_length_from_sparse_tensor(sp, num_elements=num_elements))

    @property
    def parents(self):
        return [self.key]


@tf_export("feature_column.sequence_numeric_column")
@deprecated(SEQUENCE_FEATURE_COLUMN)
def sequence_numeric_column(key, shape=(1,), default_value=0., dtype=dtypes.float32,  # noqa: A002
                            normalizer_fn=None):
    """A SequenceNumericColumn of `key` (each step `shape` values)."""
    shape = check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return SequenceNumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                                 normalizer_fn=normalizer_fn)


@tf_export("feature_column.sequence_categorical_column_with_identity")
@deprecated(SEQUENCE_FEATURE_COLUMN)
def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    """categorical_column_with_identity over sequences."""
    return SequenceCategoricalColumn(
        constructors.categorical_column_with_identity(key, num_buckets, default_value))


@tf_export("feature_column.sequence_categorical_column_with_hash_bucket")
@deprecated(SEQUENCE_FEATURE_COLUMN)
def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """categorical_column_with_hash_bucket over sequences."""
    return SequenceCategoricalColumn(
        constructors.categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


@tf_export("feature_column.sequence_categorical_column_with_vocabulary_file")
@deprecated(SEQUENCE_FEATURE_COLUMN)
def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                                     num_oov_buckets=0, default_value=None,
                                                     dtype=dtypes.string):
    """categorical_column_with_vocabulary_file over sequences."""
    return SequenceCategoricalColumn(constructors.categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


@tf_export("feature_column.sequence_categorical_column_with_vocabulary_list")
@deprecated(SEQUENCE_FEATURE_COLUMN)
def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                                     default_value=-1, num_oov_buckets=0):
    """categorical_column_with_vocabulary_list over sequences."""
    return SequenceCategoricalColumn(constructors.categorical_column_with_vocabulary_list(
        key, vocabulary_list, dtype, default_value, num_oov_buckets))
