"""The public feature-column constructors (`tf.feature_column.*`), with TensorFlow's
argument checks and messages."""

from __future__ import annotations

import math

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.file_io import GFile, file_exists_v2
from ndflow.feature_column.base import (
    CategoricalColumn,
    FeatureColumn,
    assert_key_is_string,
    assert_string_or_int,
    check_default_value,
    check_shape,
)
from ndflow.feature_column.categorical_columns import (
    CrossedColumn,
    HashedCategoricalColumn,
    IdentityCategoricalColumn,
    SequenceCategoricalColumn,
    VocabularyFileCategoricalColumn,
    VocabularyListCategoricalColumn,
    WeightedCategoricalColumn,
)
from ndflow.feature_column.dense_columns import (
    BucketizedColumn,
    EmbeddingColumn,
    IndicatorColumn,
    NumericColumn,
    SharedEmbeddingColumnCreator,
    _SharedEmbeddingColumn,
)
from ndflow.feature_column.deprecation_warnings import (
    FEATURE_COLUMN_V1,
    FEATURE_COLUMN_V2,
    deprecated,
)
from ndflow.ops.init_ops_v1 import truncated_normal_initializer

_DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's crossed_column default


@tf_export("feature_column.numeric_column")
@deprecated(FEATURE_COLUMN_V2)
def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32,  # noqa: A002
                   normalizer_fn=None):
    """A column of real values of `shape` read from feature `key`."""
    shape = check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    default_value = check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    assert_key_is_string(key)
    return NumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                         normalizer_fn=normalizer_fn)


@tf_export("feature_column.bucketized_column")
@deprecated(FEATURE_COLUMN_V2)
def bucketized_column(source_column, boundaries):
    """A numeric column's values as buckets of the sorted `boundaries`."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries:
        raise ValueError("boundaries must not be empty.")
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


@tf_export("feature_column.categorical_column_with_hash_bucket")
@deprecated(FEATURE_COLUMN_V2)
def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Ids = Fingerprint64 hash of the (string form of the) value mod hash_bucket_size."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    assert_key_is_string(key)
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    return HashedCategoricalColumn(key, hash_bucket_size, dtype)


@tf_export("feature_column.categorical_column_with_vocabulary_file", v1=[])
@deprecated(FEATURE_COLUMN_V2)
def categorical_column_with_vocabulary_file_v2(key, vocabulary_file, vocabulary_size=None,
                                               dtype=dtypes.string, default_value=None,
                                               num_oov_buckets=0, file_format=None):
    """Ids = line numbers in `vocabulary_file` (OOV: default_value or hash buckets)."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if file_format is None and vocabulary_file.endswith("tfrecord.gz"):
        file_format = "tfrecord_gzip"
    if file_format == "tfrecord_gzip":
        raise NotImplementedError("categorical_column_with_vocabulary_file: the "
                                  "'tfrecord_gzip' vocabulary format is not supported by ndflow")
    if vocabulary_size is None:
        if not file_exists_v2(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with GFile(vocabulary_file, mode="rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyFileCategoricalColumn(
        key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
        num_oov_buckets=0 if num_oov_buckets is None else num_oov_buckets,
        default_value=-1 if default_value is None else default_value, dtype=dtype,
        file_format=file_format)


@tf_export(v1=["feature_column.categorical_column_with_vocabulary_file"])
@deprecated(FEATURE_COLUMN_V2)
def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=dtypes.string):
    """The v1 argument order of categorical_column_with_vocabulary_file."""
    return categorical_column_with_vocabulary_file_v2(key, vocabulary_file, vocabulary_size,
                                                      dtype, default_value, num_oov_buckets)


def _vocabulary_dtype(vocabulary_list):
    kind = np.array(vocabulary_list).dtype
    if kind.kind in "SUO":
        return dtypes.string
    return dtypes.as_dtype(kind)


@tf_export("feature_column.categorical_column_with_vocabulary_list")
@deprecated(FEATURE_COLUMN_V2)
def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """Ids = positions in `vocabulary_list` (OOV: default_value or hash buckets)."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, "
                         f"column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    vocabulary_dtype = _vocabulary_dtype(vocabulary_list)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    assert_string_or_int(vocabulary_dtype, prefix=f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not "
                             f"match, column_name: {key}")
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return VocabularyListCategoricalColumn(key=key, vocabulary_list=tuple(vocabulary_list),
                                           dtype=dtype, default_value=default_value,
                                           num_oov_buckets=num_oov_buckets)


@tf_export("feature_column.categorical_column_with_identity")
@deprecated(FEATURE_COLUMN_V2)
def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer values in [0, num_buckets) are the ids themselves."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    assert_key_is_string(key)
    return IdentityCategoricalColumn(key=key, number_buckets=num_buckets,
                                     default_value=default_value)


@tf_export("feature_column.indicator_column")
@deprecated(FEATURE_COLUMN_V2)
def indicator_column(categorical_column):
    """A categorical column as a multi-hot dense vector."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. "
                         f"Given: {categorical_column}")
    return IndicatorColumn(categorical_column)


@tf_export("feature_column.weighted_categorical_column")
@deprecated(FEATURE_COLUMN_V2)
def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """A categorical column whose ids carry weights from feature `weight_feature_key`."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column=categorical_column,
                                     weight_feature_key=weight_feature_key, dtype=dtype)


@tf_export("feature_column.crossed_column")
@deprecated(FEATURE_COLUMN_V2,
            "Use `tf.keras.layers.experimental.preprocessing.HashedCrossing` "
            "instead for feature crossing when preprocessing data to train a Keras model.")
def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The hashed cross of string feature keys and categorical columns."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             f"categorical column except HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability of "
                             f"collision. Instead, use the feature name as a string. Given: {key}")
    return CrossedColumn(keys=tuple(keys), hash_bucket_size=hash_bucket_size,
                         hash_key=hash_key)


def _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")


@tf_export("feature_column.embedding_column")
@deprecated(FEATURE_COLUMN_V2)
def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True, use_safe_embedding_lookup=True):
    """A categorical column's ids as combined rows of a learned [num_buckets, dimension]
    embedding (default initializer: truncated normal, stddev 1/sqrt(dimension))."""
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. Embedding of "
                         f"column_name: {categorical_column.name}")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column=categorical_column, dimension=dimension,
                           combiner=combiner, initializer=initializer,
                           ckpt_to_load_from=ckpt_to_load_from,
                           tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm,
                           trainable=trainable,
                           use_safe_embedding_lookup=use_safe_embedding_lookup)


def _unwrap(column):
    while isinstance(column, (WeightedCategoricalColumn, SequenceCategoricalColumn)):
        column = column.categorical_column
    return column


def _check_shared(categorical_columns, private: bool):
    """TF's checks that the shared columns have one type and one bucket count; returns the
    columns sorted by name and the bucket count."""
    sorted_columns = sorted(categorical_columns, key=lambda x: x.name)
    c0 = sorted_columns[0]
    num_buckets = c0.num_buckets
    if not isinstance(c0, CategoricalColumn):
        base = "_CategoricalColumn" if private else "CategoricalColumn"
        raise ValueError(f"All categorical_columns must be subclasses of {base}. "
                         f"Given: {c0}, of type: {type(c0)}")
    c0 = _unwrap(c0)
    for c in sorted_columns[1:]:
        c = _unwrap(c)
        if not isinstance(c, type(c0)):
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                "type, or be weighted_categorical_column or sequence column of the same type. "
                f"Given column: {c0} of type: {type(c0)} does not match given column: {c} of "
                f"type: {type(c)}")
        if num_buckets != c.num_buckets:
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                f"number of buckets. ven column: {c0} with buckets: {num_buckets} does  not "
                f"match column: {c} with buckets: {c.num_buckets}")
    return sorted_columns, num_buckets


def _shared_common(categorical_columns, dimension, initializer, collection_name,
                   ckpt_to_load_from, tensor_name_in_ckpt, private: bool):
    """The checks and defaults v1 and v2 share: (initializer, bucket count, collection name)."""
    if context.executing_eagerly():
        raise RuntimeError("shared_embedding_columns are not supported when eager execution "
                           "is enabled.")
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1. / math.sqrt(dimension))
    sorted_columns, num_buckets = _check_shared(categorical_columns, private)
    if not collection_name:
        collection_name = "_".join(c.name for c in sorted_columns) + "_shared_embedding"
    return initializer, num_buckets, collection_name


@tf_export(v1=["feature_column.shared_embedding_columns"])
@deprecated(FEATURE_COLUMN_V2)
def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True,
                             use_safe_embedding_lookup=True):
    """v1: embedding columns of several categorical columns sharing one variable (graph
    mode only)."""
    initializer, _, shared_embedding_collection_name = _shared_common(
        categorical_columns, dimension, initializer, shared_embedding_collection_name,
        ckpt_to_load_from, tensor_name_in_ckpt, private=True)
    return [_SharedEmbeddingColumn(
        categorical_column=c, dimension=dimension, combiner=combiner, initializer=initializer,
        shared_embedding_collection_name=shared_embedding_collection_name,
        ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
        max_norm=max_norm, trainable=trainable,
        use_safe_embedding_lookup=use_safe_embedding_lookup) for c in categorical_columns]


@tf_export("feature_column.shared_embeddings", v1=[])
@deprecated(FEATURE_COLUMN_V2)
def shared_embedding_columns_v2(categorical_columns, dimension, combiner="mean",
                                initializer=None, shared_embedding_collection_name=None,
                                ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                                trainable=True, use_safe_embedding_lookup=True):
    """v2: SharedEmbeddingColumns of one creator (graph mode only; TF uses them only in
    DenseFeatures, which Keras 3 does not have)."""
    initializer, num_buckets, shared_embedding_collection_name = _shared_common(
        categorical_columns, dimension, initializer, shared_embedding_collection_name,
        ckpt_to_load_from, tensor_name_in_ckpt, private=False)
    creator = SharedEmbeddingColumnCreator(dimension, initializer, ckpt_to_load_from,
                                           tensor_name_in_ckpt, num_buckets, trainable,
                                           shared_embedding_collection_name,
                                           use_safe_embedding_lookup)
    return [creator(c, combiner, max_norm) for c in categorical_columns]


def _parse_spec(feature_columns, private: bool):
    result = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn) or (
                not private and isinstance(column, _SharedEmbeddingColumn)):
            base = "_FeatureColumn" if private else "FeatureColumn"
            raise ValueError(f"All feature_columns must be {base} instances. Given: {column}")
        config = column._parse_example_spec if private else column.parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}."
                                 f" Given {value} and {result[key]}")
        result.update(config)
    return result


@tf_export("feature_column.make_parse_example_spec", v1=[])
@deprecated(FEATURE_COLUMN_V2)
def make_parse_example_spec_v2(feature_columns):
    """{feature key: FixedLenFeature or VarLenFeature} for tf.io.parse_example."""
    return _parse_spec(feature_columns, private=False)


@tf_export(v1=["feature_column.make_parse_example_spec"])
@deprecated(FEATURE_COLUMN_V1)
def make_parse_example_spec(feature_columns):
    """v1 make_parse_example_spec (v1 columns accepted)."""
    return _parse_spec(feature_columns, private=True)
