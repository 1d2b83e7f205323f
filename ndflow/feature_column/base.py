"""The feature-column interfaces (TF's feature_column_v2 base classes), the transformation
cache that computes each column's input once, the state managers that hold a column's
variables and lookup tables, and the helpers every column uses (sparse conversion, argument
checks with TensorFlow's messages)."""

from __future__ import annotations

import abc
import collections
from collections.abc import Iterator

from ndflow.core import dtypes
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops import variable_scope as variable_scope_lib
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import where
from ndflow.ops.array_core import expand_dims, rank, shape
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, not_equal
from ndflow.ops.math import ceil
from ndflow.ops.parsing_config import VarLenFeature
from ndflow.ops.segment import segment_max
from ndflow.ops.sparse_api import reshape as sparse_reshape
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from ndflow.runtime.control_flow import cond


class FeatureColumn(abc.ABC):
    """A feature column: how one raw feature (or a combination) becomes model input.

    Columns are immutable namedtuples; `name` is unique per column and orders them."""

    @property
    @abc.abstractmethod
    def name(self):
        """The column's name (variable scopes and sorting use it)."""

    def __lt__(self, other):
        return str(self) < str(other)

    def __gt__(self, other):
        return str(self) > str(other)

    @abc.abstractmethod
    def transform_feature(self, transformation_cache, state_manager):
        """The column's intermediate value, computed once per cache."""

    @property
    @abc.abstractmethod
    def parse_example_spec(self):
        """{feature key: FixedLenFeature or VarLenFeature} for tf.io.parse_example."""

    def create_state(self, state_manager):
        """Creates the column's variables and tables (none by default)."""
        del state_manager

    @property
    def _is_v2_column(self):
        return True

    @property
    def parents(self):
        return []

    # TF's v1 (_FeatureColumn) interface: `inputs` is a transformation cache (_LazyBuilder).
    @property
    def _var_scope_name(self):
        return self.name

    @property
    def _parse_example_spec(self):
        return self.parse_example_spec

    def _transform_feature(self, inputs):
        return self.transform_feature(inputs, None)


class DenseColumn(FeatureColumn):
    """A column that yields a dense tensor [batch, *variable_shape]."""

    @property
    @abc.abstractmethod
    def variable_shape(self):
        """The TensorShape of one example's output."""

    @abc.abstractmethod
    def get_dense_tensor(self, transformation_cache, state_manager):
        """The dense output [batch, ...]."""

    @property
    def _variable_shape(self):
        return self.variable_shape

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return self._get_dense_tensor_with(inputs,
                                           ScopeStateManager(weight_collections, trainable))

    def _get_dense_tensor_with(self, inputs, state_manager):
        """The v1 functions' dense tensor, variables made by `state_manager`."""
        return self.get_dense_tensor(inputs, state_manager)


IdWeightPair = collections.namedtuple("IdWeightPair", ("id_tensor", "weight_tensor"))


class CategoricalColumn(FeatureColumn):
    """A column that yields sparse ids in [0, num_buckets) (and optional weights)."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def num_buckets(self):
        """The number of distinct ids."""

    @abc.abstractmethod
    def get_sparse_tensors(self, transformation_cache, state_manager):
        """An IdWeightPair of SparseTensors (weight_tensor None when unweighted)."""

    @property
    def _num_buckets(self):
        return self.num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return self.get_sparse_tensors(inputs, ScopeStateManager(weight_collections, trainable))


TensorSequenceLengthPair = collections.namedtuple("TensorSequenceLengthPair",
                                                  ("dense_tensor", "sequence_length"))


class SequenceDenseColumn(FeatureColumn):
    """A column that yields [batch, time, ...] plus each example's sequence length."""

    TensorSequenceLengthPair = TensorSequenceLengthPair

    @abc.abstractmethod
    def get_sequence_dense_tensor(self, transformation_cache, state_manager):
        """A TensorSequenceLengthPair."""


class StateManager:
    """Holds the variables and resources (lookup tables) of feature columns."""

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):
        raise NotImplementedError("StateManager.create_variable")

    def add_variable(self, feature_column, var):
        raise NotImplementedError("StateManager.add_variable")

    def get_variable(self, feature_column, name):
        raise NotImplementedError("StateManager.get_var")

    def add_resource(self, feature_column, name, resource):
        raise NotImplementedError("StateManager.add_resource")

    def has_resource(self, feature_column, name):
        raise NotImplementedError("StateManager.has_resource")

    def get_resource(self, feature_column, name):
        raise NotImplementedError("StateManager.get_resource")


class ScopeStateManager(StateManager):
    """The v1 functions' state: variables made by `tf.compat.v1.get_variable` in the current
    variable scope when first asked for (input_layer's `<scope>/<column>/embedding_weights`),
    added to `weight_collections`."""

    def __init__(self, weight_collections=None, trainable=True):
        self._collections = list(weight_collections) if weight_collections else None
        self._trainable = True if trainable is None else trainable
        self._variables: dict = {}
        self._resources: dict = {}

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):
        del use_resource
        if (feature_column, name) in self._variables:
            raise ValueError("Variable already exists.")
        var = variable_scope_lib.get_variable(
            name=name, shape=shape, dtype=dtype, initializer=initializer,
            trainable=bool(trainable and self._trainable), collections=self._collections)
        self._variables[(feature_column, name)] = var
        return var

    def add_variable(self, feature_column, var):
        self._variables[(feature_column, var.name)] = var

    def get_variable(self, feature_column, name):
        if (feature_column, name) not in self._variables:
            feature_column.create_state(self)
        if (feature_column, name) not in self._variables:
            raise ValueError("Variable does not exist.")
        return self._variables[(feature_column, name)]

    def add_resource(self, feature_column, name, resource):
        self._resources[(feature_column, name)] = resource

    def has_resource(self, feature_column, name):
        return (feature_column, name) in self._resources

    def get_resource(self, feature_column, name):
        if (feature_column, name) not in self._resources:
            raise ValueError("Resource does not exist.")
        return self._resources[(feature_column, name)]


def convert_to_tensor_or_sparse_tensor(value):
    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor(value.indices, value.values, value.dense_shape)
    return convert_to_tensor(value)


class FeatureTransformationCache:
    """Each raw feature (a rank-1 one becomes [batch, 1]) and each column's transformation,
    computed once: columns sharing an input share its ops."""

    def __init__(self, features):
        self._features = dict(features)
        self._feature_tensors: dict = {}

    def get(self, key, state_manager=None, training=None):
        del training
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = self._raw_feature_as_tensor(key)
            self._feature_tensors[key] = tensor
            return tensor
        if isinstance(key, str):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        if not isinstance(key, FeatureColumn):
            raise TypeError('"key" must be either a "str" or "FeatureColumn". '
                            f"Provided: {key}")
        transformed = key.transform_feature(self, state_manager)
        if transformed is None:
            raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = transformed
        return transformed

    def _raw_feature_as_tensor(self, key):
        tensor = convert_to_tensor_or_sparse_tensor(self._features[key])

        def expand(t):
            if isinstance(t, SparseTensor):
                return sparse_reshape(t, [t.dense_shape[0], 1])
            return expand_dims(t, -1)

        ndims = tensor.get_shape().ndims
        if ndims is not None:
            if ndims == 0:
                raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {tensor}")
            return tensor if ndims != 1 else expand(tensor)
        return cond(equal(1, rank(tensor)), lambda: expand(tensor), lambda: tensor)


class LazyBuilder(FeatureTransformationCache):
    """TF's v1 `_LazyBuilder`: the cache v1 columns' `_transform_feature(inputs)` read."""


def to_sparse_input_and_drop_ignore_values(input_tensor, ignore_value=None):
    """A SparseTensor of `input_tensor` (dense: without the entries equal to ignore_value:
    '' for strings, -1 for integers, 0 for floats)."""
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with name_scope(None, "to_sparse_input"):
        dtype = input_tensor.dtype
        if ignore_value is None:
            if dtype == dtypes.string:
                ignore_value = ""
            elif dtype.is_integer:
                ignore_value = -1
            else:
                ignore_value = dtype.as_numpy_dtype()
        ignore = cast(ignore_value, dtype, name="ignore_value") if dtype != dtypes.string \
            else convert_to_tensor(ignore_value, dtypes.string, name="ignore_value")
        indices = where(not_equal(input_tensor, ignore), name="indices")
        return SparseTensor(indices=indices,
                            values=gather_nd(input_tensor, indices, name="values"),
                            dense_shape=shape(input_tensor, out_type=dtypes.int64,
                                              name="dense_shape"))


def sequence_length_from_sparse_tensor(sp_tensor, num_elements=1):
    """Each example's sequence length: its last used column + 1, over num_elements."""
    with name_scope(None, "sequence_length") as scope:
        row_ids = sp_tensor.indices[:, 0]
        column_ids = sp_tensor.indices[:, 1] + 1
        seq_length = segment_max(column_ids, segment_ids=row_ids)
        seq_length = cast(ceil(cast(seq_length, dtypes.float64) / num_elements), dtypes.int64)
        # rows after the last one with values get 0
        n_pad = sp_tensor.dense_shape[:1] - shape(seq_length, out_type=dtypes.int64)[:1]
        padding = zeros(n_pad, dtype=seq_length.dtype)
        return concat([seq_length, padding], axis=0, name=scope)


def check_shape(shape_arg, key):
    """The column shape as a tuple of positive ints."""
    if not isinstance(shape_arg, (list, tuple, TensorShape)):
        shape_arg = [shape_arg]
    shape_arg = tuple(shape_arg)
    for dim in shape_arg:
        if not isinstance(dim, int):
            raise TypeError(f"shape dimensions must be integer. shape: {shape_arg}, key: {key}")
        if dim < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape_arg}, "
                             f"key: {key}")
    return shape_arg


def assert_string_or_int(dtype, prefix):
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def assert_key_is_string(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


def _nested(v) -> bool:
    return isinstance(v, (list, tuple))


def _flatten(v):
    if _nested(v):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


def _fill(shape_arg, value):
    if shape_arg:
        return tuple(_fill(shape_arg[1:], value) for _ in range(shape_arg[0]))
    return value


def _as_tuple(v):
    return tuple(_as_tuple(x) for x in v) if _nested(v) else v


def _compatible(value, shape_arg) -> bool:
    if _nested(value) != bool(shape_arg):
        return False
    if not shape_arg:
        return True
    return len(value) == shape_arg[0] and all(_compatible(v, shape_arg[1:]) for v in value)


def check_default_value(shape_arg, default_value, dtype, key):
    """numeric_column's default value as a nested tuple of `shape_arg`."""
    if default_value is None:
        return None
    if isinstance(default_value, int):
        return _fill(shape_arg, default_value)
    if isinstance(default_value, float) and dtype.is_floating:
        return _fill(shape_arg, default_value)
    if callable(getattr(default_value, "tolist", None)):
        default_value = default_value.tolist()
    if _nested(default_value):
        if not _compatible(default_value, shape_arg):
            raise ValueError("The shape of default_value must be equal to given shape. "
                             f"default_value: {default_value}, shape: {shape_arg}, key: {key}")
        flat = list(_flatten(default_value))
        if all(isinstance(v, int) for v in flat):
            return _as_tuple(default_value)
        if any(isinstance(v, float) for v in flat) and dtype.is_floating:
            return _as_tuple(default_value)
    raise TypeError("default_value must be compatible with dtype. "
                    f"default_value: {default_value}, dtype: {dtype}, key: {key}")


def normalize_feature_columns(feature_columns, column_type=FeatureColumn, kind="FeatureColumn"):
    """The columns as a list sorted by name, checked as TF's _normalize_feature_columns."""
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    for column in feature_columns:
        if not isinstance(column, column_type):
            raise ValueError(f"Items of feature_columns must be a {kind}. "
                             f"Given (type {type(column)}): {column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name: dict = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {column} and "
                             f"{by_name[column.name]}. This usually means that these columns "
                             "refer to same base feature. Either one must be discarded or a "
                             "duplicated but renamed item must be inserted in features dict.")
        by_name[column.name] = column
    return sorted(feature_columns, key=lambda c: c.name)


def verify_static_batch_size_equality(tensors, columns):
    """TF's check that every column's static batch size agrees."""
    expected, first = None, 0
    for i, t in enumerate(tensors):
        size = t.get_shape().as_list()[0] if t.get_shape().ndims else None
        if size is None:
            continue
        if expected is None:
            expected, first = size, i
        elif expected != size:
            raise ValueError("Batch size (first dimension) of each feature must be same. "
                             f"Batch size of columns ({columns[first].name}, {columns[i].name}):"
                             f" ({expected}, {size})")


class KeyedVarLenColumn:
    """Mixin of a column of one feature key (`key`, `dtype`), parsed as a VarLenFeature."""

    @property
    def name(self):
        return self.key

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}
