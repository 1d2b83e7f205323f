"""Lookup-table ops (TensorFlow's lookup_ops: the ops behind `tf.lookup` tables and Keras'
StringLookup / IntegerLookup / TextVectorization): a table is a resource made by
`HashTableV2` (initialized once: `LookupTableImportV2`, `InitializeTableV2`,
`InitializeTableFromTextFileV2`) or `MutableHashTableV2` (`LookupTableInsertV2` /
`LookupTableRemoveV2`), read by `LookupTableFindV2`, `LookupTableSizeV2` and
`LookupTableExportV2`. Kernels: kernels/lookup_ops.py. SavedModels written by TensorFlow
with such tables (their creator/initializer functions) load with these.
"""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import no_outputs, op_def, scalar_output


def _keys_shape(ctx):
    """Find: one value per key (tables of scalar values)."""
    return [ctx.shapes[1]]


def _vectors(ctx):
    producer = getattr(getattr(ctx._inputs[0], "op", None), "type", None)
    if producer == "MutableDenseHashTableV2":  # its bucket arrays, [num_buckets, 1]
        return [TensorShape([None, 1]), TensorShape([None, 1])]
    return [TensorShape([None]), TensorShape([None])]


_TABLE_ATTRS = ["container: string = ''", "shared_name: string = ''",
                "use_node_name_sharing: bool = false", "key_dtype: type", "value_dtype: type"]

HashTableV2 = op_def(
    "HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, shape=scalar_output,
    stateful=True, not_differentiable=True,
    doc="Creates an uninitialized hash table (initialized once, then read-only).")

MutableHashTableV2 = op_def(
    "MutableHashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS,
    shape=scalar_output, stateful=True, not_differentiable=True,
    doc="Creates an empty hash table that inserts and removes update.")

MutableDenseHashTableV2 = op_def(
    "MutableDenseHashTableV2", inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
    outputs=["table_handle: resource"],
    attrs=_TABLE_ATTRS + ["value_shape: shape = []", "initial_num_buckets: int = 131072",
                          "max_load_factor: float = 0.8"],
    shape=scalar_output, stateful=True, not_differentiable=True,
    doc="Creates an empty open-addressing hash table: `empty_key` and `deleted_key` mark its "
        "free and erased buckets, so neither may be used as a key.")

LookupTableFindV2 = op_def(
    "LookupTableFindV2",
    inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
    outputs=["values: Tout"], attrs=["Tin: type", "Tout: type"], shape=_keys_shape,
    stateful=True, not_differentiable=True,
    doc="The value of each key in the table, `default_value` for missing keys.")

LookupTableImportV2 = op_def(
    "LookupTableImportV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
    attrs=["Tin: type", "Tout: type"], shape=no_outputs, stateful=True, gradient_undefined=True,
    doc="Replaces the table's contents with the given keys and values.")

InitializeTableV2 = op_def(
    "InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
    attrs=["Tkey: type", "Tval: type"], shape=no_outputs, stateful=True, not_differentiable=True,
    doc="Initializes a table from keys and values.")

InitializeTableFromTextFileV2 = op_def(
    "InitializeTableFromTextFileV2", inputs=["table_handle: resource", "filename: string"],
    attrs=["key_index: int", "value_index: int", "vocab_size: int = -1",
           "delimiter: string = '\t'", "offset: int = 0"],
    shape=no_outputs, stateful=True, not_differentiable=True,
    doc="Initializes a table from a text file: one entry per line (-2: the whole line, "
        "-1: the line number, else the delimited column).")

LookupTableInsertV2 = op_def(
    "LookupTableInsertV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
    attrs=["Tin: type", "Tout: type"], shape=no_outputs, stateful=True, not_differentiable=True,
    doc="Inserts or updates keys of a mutable table.")

LookupTableRemoveV2 = op_def(
    "LookupTableRemoveV2", inputs=["table_handle: resource", "keys: Tin"],
    attrs=["Tin: type"], shape=no_outputs, stateful=True, gradient_undefined=True,
    doc="Removes keys from a mutable table.")

LookupTableSizeV2 = op_def(
    "LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"],
    shape=scalar_output, stateful=True, not_differentiable=True,
    doc="The number of entries of the table.")

LookupTableExportV2 = op_def(
    "LookupTableExportV2", inputs=["table_handle: resource"],
    outputs=["keys: Tkeys", "values: Tvalues"], attrs=["Tkeys: type", "Tvalues: type"],
    shape=_vectors, stateful=True, gradient_undefined=True,
    doc="All keys and values of the table.")
