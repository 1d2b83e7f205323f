"""Feature configurations of `tf.io.parse_example` (`FixedLenFeature`, `VarLenFeature`,
`FixedLenSequenceFeature`) and their translation to ParseExampleV2's keys, types, shapes and
default tensors, with TensorFlow's validation messages."""

from __future__ import annotations

import collections
import re

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.protos import example_pb
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor


@tf_export("io.VarLenFeature", v1=["VarLenFeature", "io.VarLenFeature"])
class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed as a `tf.SparseTensor`.

    Args:
      dtype: the feature's dtype: tf.int64, tf.float32 or tf.string.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
      >>> spec = {"x": tf.io.VarLenFeature(tf.int64)}
      >>> out = tf.io.parse_single_example(ex.SerializeToString(), spec)
      >>> out['x'].values.numpy()
      array([1, 2])
    """

    __slots__ = ()


@tf_export("io.FixedLenFeature", v1=["FixedLenFeature", "io.FixedLenFeature"])
class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of fixed shape, parsed as a dense tensor.

    Args:
      shape: the feature's shape (e.g. [] for a scalar, [3] for three values).
      dtype: tf.int64, tf.float32 or tf.string.
      default_value: the value of an example without the feature; None makes the feature
        required (a missing one is an error).

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
      >>> spec = {"x": tf.io.FixedLenFeature([2], tf.int64)}
      >>> out = tf.io.parse_single_example(ex.SerializeToString(), spec)
      >>> out['x'].numpy()
      array([1, 2])
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


@tf_export("io.FixedLenSequenceFeature",
           v1=["FixedLenSequenceFeature", "io.FixedLenSequenceFeature"])
class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of a variable number of fixed-shape rows, parsed as a dense tensor.

    The result has a leading dimension of rows; in a batch, shorter examples are padded with
    `default_value`.

    Args:
      shape: the shape of one row.
      dtype: tf.int64, tf.float32 or tf.string.
      allow_missing: whether an example may lack the feature (must be True in `parse_example`
        features).
      default_value: the padding value.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
      >>> spec = {"x": tf.io.FixedLenSequenceFeature([], tf.int64, True)}
      >>> out = tf.io.parse_single_example(ex.SerializeToString(), spec)
      >>> out['x'].numpy()
      array([1, 2])
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


@tf_export("io.SparseFeature", v1=["SparseFeature", "io.SparseFeature"])
class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature stored as index feature(s) and a value feature.

    It is parsed as one `tf.SparseTensor` of dense shape [batch..., size].

    Args:
      index_key: the name of the int64 index feature (or a list of names for several
        dimensions).
      value_key: the name of the value feature.
      dtype: the values' dtype.
      size: the dense size of the sparse dimension(s) (an int or a list).
      already_sorted: whether the indices are already sorted.
    """

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


@tf_export("io.RaggedFeature", v1=["io.RaggedFeature"])
class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype",
                          "validate"])):
    """A feature parsed as a `tf.RaggedTensor`.

    The values come from `value_key` (by default the feature's own key) and are split into
    rows by `partitions` (outermost first), read from other features: RaggedFeature.RowSplits,
    RowLengths, RowStarts, RowLimits, ValueRowIds (each naming a feature) or UniformRowLength.

    Args:
      dtype: tf.int64, tf.float32 or tf.string.
      value_key: the feature holding the values.
      partitions: a list of partition objects.
      row_splits_dtype: tf.int32 or tf.int64.
      validate: whether to validate the partitions.

    Raises:
      ValueError: for a bad dtype, row_splits_dtype or value_key.
      TypeError: for bad partitions or a non-bool validate.

    Example:
      >>> ex = tf.train.Example(features=tf.train.Features(feature={
      ...     "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
      >>> spec = {"x": tf.io.RaggedFeature(tf.int64)}
      >>> out = tf.io.parse_single_example(ex.SerializeToString(), spec)
      >>> out['x'].numpy()
      array([1, 2])
    """

    __slots__ = ()
    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32,
                validate=False):
        if value_key is not None:
            if not isinstance(value_key, str):
                raise ValueError(f"Argument `value_key` must be a string; got {value_key}")
            if not value_key:
                raise ValueError("Argument `value_key` must not be empty")
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int64, dtypes.float32, dtypes.string):
            raise ValueError("Argument `dtype` must be int64, float32, or bytes; got "
                             f"{dtype!r}")
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("Argument `row_splits_dtype` must be int32 or int64; got"
                             f"{row_splits_dtype!r}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError("Argument `partitions` must be a list or tuple. Received"
                            f"partitions={partitions} of type {type(partitions).__name__}.")
        kinds = (cls.RowSplits, cls.RowLengths, cls.RowStarts, cls.RowLimits,
                 cls.ValueRowIds, cls.UniformRowLength)
        for p in partitions:
            if not isinstance(p, kinds):
                raise TypeError("Argument `partitions` must be a list of partition objects "
                                f"{kinds}; got: {p!r}")
        if not isinstance(validate, bool):
            raise TypeError(f"Argument `validate` must be a bool; got {validate!r}")
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype,
                               validate)


# The tf.train.Example protos (classes in core/protos/example_pb.py) under TensorFlow's names.
for _name in ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
              "FeatureLists", "Example", "SequenceExample"):
    tf_export(f"train.{_name}")(getattr(example_pb, _name))


def _fmt(feature) -> str:
    """A feature as TensorFlow prints it in messages (`dtype=tf.int64`)."""
    parts = []
    for field, value in zip(feature._fields, feature):
        if field == "dtype" and value is not None:
            value = f"tf.{dtypes.as_dtype(value).name}"
        else:
            value = repr(value)
        parts.append(f"{field}={value}")
    return f"{type(feature).__name__}({', '.join(parts)})"


class ParseParams:
    """ParseExampleV2's arguments for a features dict (keys sorted, as TensorFlow does)."""

    def __init__(self, features: dict):
        if not features:
            raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes = [], [], []
        self.ragged_keys, self.ragged_value_types, self.ragged_split_types = [], [], []
        self._defaults = {}
        for key in sorted(features):
            self._add(key, features[key])

    def _add_keyed(self, keys: list, types: list, key, dt):
        """A sparse or ragged key (features may share one: a SparseFeature's value key)."""
        if key in keys:
            if types[keys.index(key)] is not dt:
                raise ValueError(f"Conflicting type {types[keys.index(key)]} vs {dt} for "
                                 f"feature {key}.")
            return False
        keys.append(key)
        types.append(dt)
        return True

    def _add_ragged(self, key, dt, splits_dt):
        if self._add_keyed(self.ragged_keys, self.ragged_value_types, key, dt):
            self.ragged_split_types.append(splits_dt)
        elif self.ragged_split_types[self.ragged_keys.index(key)] is not splits_dt:
            raise ValueError(f"Conflicting partition type for feature {key}.")

    def _add(self, key, f):
        if isinstance(f, RaggedFeature):
            self._add_ragged(key if f.value_key is None else f.value_key, f.dtype,
                             f.row_splits_dtype)
            for p in f.partitions:
                if not isinstance(p, RaggedFeature.UniformRowLength):
                    self._add_ragged(p.key, dtypes.int64, f.row_splits_dtype)
            return
        if isinstance(f, SparseFeature):
            for name, value in (("index_key", f.index_key), ("value_key", f.value_key),
                                ("dtype", f.dtype)):
                if not value:
                    raise ValueError(f"Missing {name} for SparseFeature {f}.")
            index_keys = [f.index_key] if isinstance(f.index_key, str) else f.index_key
            for k in sorted(index_keys):
                self._add_keyed(self.sparse_keys, self.sparse_types, k, dtypes.int64)
            self._add_keyed(self.sparse_keys, self.sparse_types, f.value_key,
                            dtypes.as_dtype(f.dtype))
            return
        if not isinstance(f, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Unsupported {type(f).__name__} {f} for key '{key}'")
        if not f.dtype:
            raise ValueError(f"Missing type for feature {key}. Received feature={_fmt(f)}.")
        dt = dtypes.as_dtype(f.dtype)
        if dt not in (dtypes.float32, dtypes.int64, dtypes.string):
            attr = "sparse_types" if isinstance(f, VarLenFeature) else "Tdense"
            raise InvalidArgumentError(
                None, None, f"Value for attr '{attr}' of {dt.name} is not in the list of "
                "allowed values: float, int64, string")
        if isinstance(f, VarLenFeature):
            self._add_keyed(self.sparse_keys, self.sparse_types, key, dt)
            return
        if f.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={_fmt(f)}.")
        shape = TensorShape(f.shape)
        if isinstance(f, FixedLenSequenceFeature):
            if not f.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing "
                                 "to be True.")
            shape = TensorShape([None] + shape.as_list())
        elif shape.rank and shape.as_list()[0] is None:
            raise ValueError(f"First dimension of shape for feature {key} unknown. Consider "
                             f"using FixedLenSequenceFeature. Received feature={_fmt(f)}.")
        elif not shape.is_fully_defined():
            raise ValueError(f"All dimensions of shape for feature {key} need to be known but "
                             f"received {f.shape!s}.")
        self.dense_keys.append(key)
        self.dense_types.append(dt)
        self.dense_shapes.append(shape)
        self._defaults[key] = f.default_value

    def dense_defaults(self) -> list:
        """One tensor per dense key: the default (shaped as the feature), an empty tensor for
        a required feature, or the scalar padding value of a sequence feature."""
        out = []
        for key, dt, shape in zip(self.dense_keys, self.dense_types, self.dense_shapes):
            value = self._defaults[key]
            np_dt = object if dt is dtypes.string else dt.np_dtype
            safe = re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
            if shape.rank and shape.as_list()[0] is None:  # sequence: a scalar padding value
                value = (b"" if dt is dtypes.string else 0) if value is None else value
                arr = _as_array(value, np_dt)
                if arr.size != 1:
                    raise InvalidArgumentError(None, None, f"Input to reshape is a tensor with "
                                               f"{arr.size} values, but the requested shape "
                                               "has 1")
                out.append(convert_to_tensor(arr.reshape(()), dt, name="padding_" + safe))
            elif value is None:
                out.append(convert_to_tensor(np.zeros([0], np_dt), dt, name="Const"))
            elif hasattr(value, "dtype") and hasattr(value, "shape") and \
                    not isinstance(value, np.ndarray):
                out.append(value)  # a tensor, used as it is (as TensorFlow does)
            else:
                arr = _as_array(value, np_dt)
                dims = shape.as_list()
                if arr.size != int(np.prod(dims)):
                    raise InvalidArgumentError(None, None, f"Input to reshape is a tensor with "
                                               f"{arr.size} values, but the requested shape "
                                               f"has {int(np.prod(dims))}")
                out.append(convert_to_tensor(arr.reshape(dims), dt, name="key_" + safe))
        return out


def _as_array(value, np_dt) -> np.ndarray:
    if np_dt is object:
        arr = np.asarray(value, dtype=object)
        flat = [v.encode() if isinstance(v, str) else v for v in arr.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(arr.shape)
    return np.asarray(value, dtype=np_dt)
