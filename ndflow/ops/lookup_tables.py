"""`tf.lookup` tables: `StaticHashTable` (filled once by an initializer, lookup_initializers.py),
`StaticVocabularyTable` (a vocabulary's ids, out-of-vocabulary keys hashed into
`num_oov_buckets` extra ids by FarmHash Fingerprint64 as TensorFlow); the mutable
`experimental` tables are in lookup_mutable_tables.py.

A table's `resource_handle` is a resource tensor made by the table op (`HashTableV2`,
`MutableHashTableV2`, kernels/lookup_ops.py) in the outermost context: eagerly in TF2 code,
so `tf.function`s and `Dataset.map` functions capture it; in a TF1 graph, where
`tf.compat.v1.tables_initializer()` runs the initializers. `tf.saved_model.save` writes a
table as TensorFlow's resource node (its `_create_resource` / `_initialize` functions).
"""

from __future__ import annotations

import uuid

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import init_scope, name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import lookup_ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import add, where
from ndflow.ops.array_core import group, no_op
from ndflow.ops.cast import cast
from ndflow.ops.comparison import not_equal
from ndflow.ops.lookup_initializers import TABLE_INITIALIZERS, KeyValueDtypes
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.string_hash_ops import string_to_hash_bucket_fast
from ndflow.ops.string_ops import as_string


def _dense_keys(keys, key_dtype):
    """(the keys' dense values, a function giving the result the keys' structure)."""
    if isinstance(keys, SparseTensor):
        return keys.values, lambda v: SparseTensor(keys.indices, v, keys.dense_shape)
    if not isinstance(keys, Tensor):
        keys = convert_to_tensor(keys)
    if keys.dtype.base_dtype != key_dtype:
        raise TypeError(f"Dtype of argument `keys` must be {key_dtype}, received: "
                        f"{keys.dtype}")
    return keys, lambda v: v


def _shaped_as(values, keys):
    """A graph lookup's result keeps the keys' static shape."""
    if not context.executing_eagerly() and hasattr(values, "set_shape"):
        values.set_shape(keys.shape)
    return values


class LookupInterface(KeyValueDtypes):
    """A lookup table over a table resource (TF's LookupInterface/TrackableResource)."""

    def __init__(self, key_dtype, value_dtype):
        super().__init__(key_dtype, value_dtype)
        self._resource_handle = None

    def _create_resource(self):
        raise NotImplementedError

    def _initialize(self):
        """The op filling a new resource (None: tables that start empty)."""
        return None

    @property
    def resource_handle(self):
        if self._resource_handle is None:
            with init_scope():
                self._resource_handle = self._create_resource()
        return self._resource_handle

    @property
    def name(self):
        return self._table_name

    def _find(self, keys, default, name):
        with name_scope(name or f"{self.name}_Lookup"):
            return apply_op(lookup_ops.LookupTableFindV2,
                            [self.resource_handle, keys, default]).outputs[0]

    def size(self, name=None):
        """The number of entries (int64 scalar)."""
        with name_scope(name or f"{self.name}_Size"):
            return apply_op(lookup_ops.LookupTableSizeV2, [self.resource_handle]).outputs[0]

    def export(self, name=None):
        """(keys, values): every entry of the table, in no particular order."""
        with name_scope(name or f"{self.name}_Export"):
            op = apply_op(lookup_ops.LookupTableExportV2, [self.resource_handle],
                          {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype})
        return op.outputs[0], op.outputs[1]

    def __getitem__(self, keys):
        return self.lookup(keys)


def _table_op(op_def, shared_name: str, key_dtype, value_dtype, name: str):
    return apply_op(op_def, [], {"shared_name": shared_name, "key_dtype": key_dtype,
                                 "value_dtype": value_dtype}, name=name).outputs[0]


@tf_export("lookup.StaticHashTable", v1=[])
class StaticHashTable(LookupInterface):
    """A hash table filled once by `initializer`, then read-only; `default_value` (a
    scalar of the value type) for missing keys."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._initializer = initializer
        self._is_anonymous = experimental_is_anonymous
        self._shared_name = f"hash_table_{uuid.uuid4()}"
        self._name = name or "hash_table"
        self._table_name = None
        with init_scope():
            self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        if self._default_value.shape.rank not in (None, 0):
            raise ValueError(f"Shapes {self._default_value.shape} and () are incompatible")
        self.resource_handle  # noqa: B018 - created now, as TF's
        self._init_op = self._initialize()

    def _create_resource(self):
        handle = _table_op(lookup_ops.HashTableV2, self._shared_name, self._key_dtype,
                           self._value_dtype, self._name)
        self._table_name = None if context.executing_eagerly() else \
            handle.op.name.split("/")[-1]
        return handle

    def _initialize(self, **overrides):
        return self._initializer.initialize(self, **overrides)

    @property
    def default_value(self):
        return self._default_value

    def lookup(self, keys, name=None):
        """The value of each key (`default_value` for missing ones), shaped as `keys`;
        a SparseTensor of keys gives a SparseTensor of values."""
        dense, rebuild = _dense_keys(keys, self._key_dtype)
        return rebuild(_shaped_as(self._find(dense, self._default_value, name), dense))


@tf_export(v1=["lookup.StaticHashTable"])
class StaticHashTableV1(StaticHashTable):
    """TF1's StaticHashTable: in a graph, `initializer` (or `tables_initializer()`) must
    run before lookups."""

    @property
    def initializer(self):
        return self._init_op


@tf_export("lookup.StaticVocabularyTable", v1=[])
class StaticVocabularyTable(LookupInterface):
    """Vocabulary ids (int64) from `initializer` (its values must be int64 ids 0..n-1);
    a key outside the vocabulary gets `n + Fingerprint64(key as a string) %
    num_oov_buckets`, as TensorFlow. Without an initializer every key is hashed."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if name:
            name = name.rstrip("/")
        if initializer:
            lookup_key_dtype = dtypes.as_dtype(lookup_key_dtype or initializer.key_dtype)
            supported = (dtypes.int64, dtypes.string)
            if initializer.key_dtype not in supported:
                raise TypeError(f"Invalid `key_dtype`, expected one of {supported}, but got "
                                f"{initializer.key_dtype}.")
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                kind = "integer" if lookup_key_dtype.is_integer else "non-integer"
                raise TypeError(f"Invalid `key_dtype`, expected {kind} but got "
                                f"{initializer.key_dtype}.")
            if initializer.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {dtypes.int64} but got "
                                f"{initializer.value_dtype}.")
            self._table = StaticHashTableV1(initializer, -1, name=None,
                                            experimental_is_anonymous=experimental_is_anonymous)
            name = name or self._table.name
        else:
            lookup_key_dtype = dtypes.string
            self._table = None
            name = name or "hash_bucket"
        if not lookup_key_dtype.is_integer and lookup_key_dtype != dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got "
                            f"{lookup_key_dtype}")
        self._num_oov_buckets = int(num_oov_buckets)
        self._table_name = None if name is None else name.split("/")[-1]
        super().__init__(lookup_key_dtype, dtypes.int64)

    @property
    def resource_handle(self):
        return None if self._table is None else self._table.resource_handle

    def _create_resource(self):
        return None if self._table is None else self._table._create_resource()

    def _initialize(self, **overrides):
        if self._table is not None:
            return self._table._initialize(**overrides)
        return no_op()

    def size(self, name=None):
        """Vocabulary size + num_oov_buckets."""
        with name_scope(name or f"{self.name}_Size"):
            n = self._table.size() if self._table is not None else \
                convert_to_tensor(0, dtype=dtypes.int64)
            return add(n, convert_to_tensor(self._num_oov_buckets, dtype=dtypes.int64))

    def lookup(self, keys, name=None):
        """Each key's id (int64), shaped as `keys` (sparse keys: a SparseTensor)."""
        dense, rebuild = _dense_keys(keys, self._key_dtype)
        if self._table is not None and self._table.key_dtype == dtypes.int64:
            dense = cast(dense, dtypes.int64)
        with name_scope(name or f"{self.name}_Lookup"):
            text = dense if dense.dtype == dtypes.string else as_string(dense)
            buckets = string_to_hash_bucket_fast(text, self._num_oov_buckets, name="hash_bucket")
            if self._table is None:
                return rebuild(buckets)
            ids = self._table.lookup(dense)
            buckets = add(buckets, self._table.size())
            ids = where(not_equal(ids, self._table.default_value), ids, buckets)
        return rebuild(ids)


@tf_export(v1=["lookup.StaticVocabularyTable"])
class StaticVocabularyTableV1(StaticVocabularyTable):
    """TF1's `StaticVocabularyTable`: known keys map to their ids, others to hash buckets.

    The same as `tf.lookup.StaticVocabularyTable`, plus an `initializer` property: in a graph,
    the op to run (e.g. through `tf.compat.v1.tables_initializer()`) before the first lookup.

    Args:
      initializer: a table initializer of string or int64 keys and int64 values.
      num_oov_buckets: how many buckets out-of-vocabulary keys hash to; they get ids
        from `size()` on.
      lookup_key_dtype: optional key dtype (the initializer's by default).
      name: optional name.

    Example:
      >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [0, 1], value_dtype=tf.int64)
      >>> table = tf.compat.v1.lookup.StaticVocabularyTable(init, num_oov_buckets=1)
      >>> table.lookup(tf.constant(["a", "z"])).numpy()
      array([0, 2])
    """
    @property
    def initializer(self):
        if self._table is not None:
            return self._table._init_op
        return no_op()


@tf_export(v1=["initializers.tables_initializer", "tables_initializer"])
def tables_initializer(name="init_all_tables"):
    """TF1 graphs: one op running every table initializer of the default graph (a NoOp when
    there are none); eagerly, tables are initialized when made and this returns None."""
    inits = context.get_collection(TABLE_INITIALIZERS)
    if inits:
        return group(*inits, name=name)
    return no_op(name=name)



@tf_export(v1=["initialize_all_tables"])
def initialize_all_tables(name="init_all_tables"):
    """Deprecated TF1 name of `tables_initializer`."""
    return tables_initializer(name)
