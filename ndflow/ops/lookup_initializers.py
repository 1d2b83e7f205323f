"""`tf.lookup` table initializers: `KeyValueTensorInitializer` (keys and values tensors,
TensorFlow's `LookupTableImportV2`), `TextFileInitializer` (one entry per line of a vocabulary
file, `InitializeTableFromTextFileV2`) and `TextFileIndex`. An initializer makes the op that
fills a table (tables.py runs it once: eagerly on creation, in TF1 graphs through
`tf.compat.v1.tables_initializer()`).
"""

from __future__ import annotations

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import lookup_ops
from ndflow.ops.apply import apply_op, convert_to_tensor

TABLE_INITIALIZERS = "table_initializer"  # TF's GraphKeys.TABLE_INITIALIZERS


def check_table_dtypes(table, key_dtype, value_dtype) -> None:
    """TF's TypeError when an initializer's types are not the table's."""
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype} but got "
                        f"{key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype} but got "
                        f"{value_dtype}.")


def _in_graph() -> bool:
    return not context.executing_eagerly()


def _register_init_op(op):
    """TF1 graphs: `tables_initializer()` groups these ops; eagerly the op already ran and,
    as TF's ops without outputs, the initializer (and a table's `initializer`) is None."""
    if not _in_graph():
        return None
    if op is not None:
        context.add_to_collection(TABLE_INITIALIZERS, op)
    return op


class KeyValueDtypes:
    """The key and value dtypes of a lookup table or table initializer."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype


class TableInitializerBase(KeyValueDtypes):
    """Base class of table initializers: the key and value types a table must have."""

    def initialize(self, table):
        raise NotImplementedError


@tf_export("lookup.KeyValueTensorInitializer",
           v1=["lookup.KeyValueTensorInitializer"])
class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table with `keys[i] -> values[i]` (same shapes; a key given twice with two
    values is TensorFlow's FailedPreconditionError when the table is initialized)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with name_scope(self._name):
            op = apply_op(lookup_ops.LookupTableImportV2,
                          [table.resource_handle, self._keys, self._values])
        return _register_init_op(op)


@tf_export("lookup.TextFileIndex", v1=["lookup.TextFileIndex"])
class TextFileIndex:
    """What a line gives a text-file table: `WHOLE_LINE` (the line), `LINE_NUMBER` (its
    0-based number, int64) or a value >= 0 (that column of the split line)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


@tf_export("lookup.TextFileInitializer", v1=["lookup.TextFileInitializer"])
class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file, one entry per line: the key and the value are each
    the whole line, the line number (+ `value_index_offset` for values) or a column split
    by `delimiter`. `vocab_size` lines are read (fewer lines: InvalidArgumentError)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        for what, index, dt in (("key", key_index, key_dtype),
                                ("value", value_index, value_dtype)):
            _check_index(what, index, dt)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index = int(key_index)
        self._value_index = int(value_index)
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = int(value_index_offset)
        super().__init__(key_dtype, value_dtype)

    @property
    def filename(self):
        return self._filename

    def initialize(self, table, filename=None):
        """The init op; `filename` replaces the path tensor (a SavedModel's asset path)."""
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with name_scope(self._name or "text_file_init"):
            path = convert_to_tensor(self._filename if filename is None else filename,
                                     dtypes.string, name="asset_filepath")
            op = apply_op(lookup_ops.InitializeTableFromTextFileV2, [table.resource_handle, path],
                          {"key_index": self._key_index, "value_index": self._value_index,
                           "vocab_size": -1 if self._vocab_size is None else
                           int(self._vocab_size),
                           "delimiter": self._delimiter, "offset": self._offset})
        if _in_graph() and not isinstance(self._filename, Tensor):
            context.add_to_collection("asset_filepaths", path)
        return _register_init_op(op)


def _check_index(what: str, index: int, dtype) -> None:
    """TextFileInitializer's argument checks, with TF's messages."""
    if index < -2:
        raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
        raise ValueError(f"`{what}_dtype` must be int64 for `{what}_index` "
                         f"{TextFileIndex.LINE_NUMBER}, received: {dtype}")
    if index == TextFileIndex.WHOLE_LINE and not dtype.is_integer and dtype != dtypes.string:
        raise ValueError(f"`{what}_dtype` should be either integer or string for `{what}_index`"
                         f" {TextFileIndex.WHOLE_LINE}, received: {dtype}")
