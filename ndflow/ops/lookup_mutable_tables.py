"""`tf.lookup.experimental.MutableHashTable` and `DenseHashTable`: tables that `insert` and
`remove`/`erase` update (scalar values), on the `MutableHashTableV2` /
`MutableDenseHashTableV2` resources (kernels/lookup_ops.py). Their contents are
checkpointed as TensorFlow's: `_serialize_to_tensors` gives "-keys"/"-values" (the exported
entries; a dense table's bucket arrays), saved by `tf.train.Checkpoint` under
`<path>/.ATTRIBUTES/table-keys` and by a TF1 Saver under `<name>-keys` (a table made in a
graph with `checkpoint=True` joins the SAVEABLE_OBJECTS collection that a Saver saves).
"""

from __future__ import annotations

import uuid

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.scopes import init_scope, name_scope
from ndflow.ops import lookup_ops
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.lookup_tables import LookupInterface, _shaped_as, _table_op


@tf_export("lookup.experimental.MutableHashTable", v1=["lookup.experimental.MutableHashTable"])
class MutableHashTable(LookupInterface):
    """A table that `insert` and `remove` update; missing keys read `default_value` (or
    per-key `dynamic_default_values`). Scalar values."""

    _legacy_saveable_name = "table"  # its checkpoint attribute, as TensorFlow names it

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype)
        with init_scope():
            self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        if self._default_value.shape.rank not in (None, 0):
            raise NotImplementedError(
                "MutableHashTable: ndflow's tables hold scalar values; the default value "
                f"has shape {self._default_value.shape}")
        self._name = name
        self._checkpoint = checkpoint
        self._is_anonymous = experimental_is_anonymous
        self._shared_name = f"{type(self).__name__}_{uuid.uuid4()}"
        self._table_name = None
        self.resource_handle  # noqa: B018 - created now, as TF's
        if checkpoint and not context.executing_eagerly():  # saved by a TF1 Saver()
            context.add_to_collection(GraphKeys.SAVEABLE_OBJECTS, self)

    def _create_resource(self):
        handle = _table_op(lookup_ops.MutableHashTableV2, self._shared_name, self._key_dtype,
                           self._value_dtype, self._name)
        self._table_name = None if context.executing_eagerly() else \
            handle.op.name.split("/")[-1]
        return handle

    @property
    def default_value(self):
        return self._default_value

    def _keys_values(self, keys, values):
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        return keys, values

    def insert(self, keys, values, name=None):
        """Adds or updates `keys[i] -> values[i]`; the op (None eagerly)."""
        keys, values = self._keys_values(keys, values)
        with name_scope(name or f"{self.name}_lookup_table_insert"):
            op = apply_op(lookup_ops.LookupTableInsertV2, [self.resource_handle, keys, values])
        return None if context.executing_eagerly() else op

    def remove(self, keys, name=None):
        """Removes `keys` (absent ones are ignored); the op (None eagerly)."""
        if getattr(keys, "dtype", self._key_dtype) != self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype}, got "
                            f"{keys.dtype}.")
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        with name_scope(name or f"{self.name}_lookup_table_remove"):
            op = apply_op(lookup_ops.LookupTableRemoveV2, [self.resource_handle, keys])
        return None if context.executing_eagerly() else op

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The value of each key, `default_value` (or the key's dynamic default) if absent."""
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        default = self._default_value if dynamic_default_values is None else \
            convert_to_tensor(dynamic_default_values, dtype=self._value_dtype)
        return _shaped_as(self._find(keys, default, name), keys)

    def _serialize_to_tensors(self):
        keys, values = self.export()
        return {"-keys": keys, "-values": values}

    def _restore_from_tensors(self, restored):
        with name_scope(f"{self.name}_table_restore"):
            return apply_op(lookup_ops.LookupTableImportV2,
                            [self.resource_handle, restored["-keys"], restored["-values"]])


@tf_export("lookup.experimental.DenseHashTable", v1=["lookup.experimental.DenseHashTable"])
class DenseHashTable(MutableHashTable):
    """TensorFlow's open-addressing table: `empty_key` and `deleted_key` (two different
    values of the key type) are reserved and may not be inserted or looked up. `export`
    gives the entries (TensorFlow's gives its whole bucket array)."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        self._initial_num_buckets = initial_num_buckets
        with init_scope():
            self._empty_key = convert_to_tensor(empty_key, dtype=key_dtype, name="empty_key")
            self._deleted_key = convert_to_tensor(deleted_key, dtype=key_dtype,
                                                  name="deleted_key")
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint,
                         experimental_is_anonymous)

    def _create_resource(self):
        attrs = {"shared_name": self._shared_name, "key_dtype": self._key_dtype,
                 "value_dtype": self._value_dtype}
        if self._initial_num_buckets is not None:
            attrs["initial_num_buckets"] = int(self._initial_num_buckets)
        handle = apply_op(lookup_ops.MutableDenseHashTableV2,
                          [self._empty_key, self._deleted_key], attrs,
                          name=self._name).outputs[0]
        self._table_name = None if context.executing_eagerly() else \
            handle.op.name.split("/")[-1]
        return handle

    def insert_or_assign(self, keys, values, name=None):
        return self.insert(keys, values, name)

    def erase(self, keys, name=None):
        return self.remove(keys, name)
