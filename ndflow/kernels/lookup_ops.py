"""Kernels of the lookup-table ops (ops/lookup_ops.py), with TensorFlow's errors.

A table handle's runtime value is the `LookupTable` itself: one per (container,
shared_name) in the runtime context when the op names one, else one per kernel. Keys and
values are kept as Python scalars (bytes for strings), so string tables (host kernels, NumPy
object arrays) and numeric ones (ATen tensors) share one implementation.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from ndflow.kernels.dense_table_layout import DenseLayout
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import lookup_ops as ops


class LookupTable:
    """A hash table: `mutable` ones accept inserts and removals; the others are initialized
    once (again only with the same contents)."""

    def __init__(self, name: str, key_dtype, value_dtype, mutable: bool):
        self.name = name
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.mutable = mutable
        self.initialized = mutable
        self.data: dict = {}
        self.lock = threading.Lock()
        self.reserved: dict = {}  # key -> its role (a dense table's empty_key/deleted_key)
        self.dense = None  # a dense table's DenseLayout (its export/import bucket arrays)

    def __repr__(self):
        return f"<LookupTable {self.name} {self.key_dtype.name}->{self.value_dtype.name}>"


def _type_name(dt) -> str:
    return {dtypes.float32: "float", dtypes.float64: "double"}.get(dt, dt.name)


def _flat(x) -> list:
    """A tensor's elements as Python scalars (bytes for strings)."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().reshape(-1).tolist()
    return np.asarray(x, dtype=object).reshape(-1).tolist()


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _tensor(values: list, shape: tuple, dtype):
    if dtype is dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    return torch.tensor(values, dtype=dtype.torch_dtype).reshape(shape)


def _check_types(table: LookupTable, key_dtype, value_dtype=None) -> None:
    if key_dtype is not None and key_dtype is not table.key_dtype:
        raise InvalidArgumentError(None, None, f"Key must be type {_type_name(table.key_dtype)}"
                                   f" but got {_type_name(key_dtype)}")
    if value_dtype is not None and value_dtype is not table.value_dtype:
        raise InvalidArgumentError(None, None, f"Value must be type "
                                   f"{_type_name(table.value_dtype)} but got "
                                   f"{_type_name(value_dtype)}")


def _table_kernel(mutable: bool):
    def factory(node):
        a = node.attrs
        shared = a["shared_name"] or (node.name if a["use_node_name_sharing"] else "")
        key_dtype, value_dtype = a["key_dtype"], a["value_dtype"]
        if not shared:  # anonymous: the kernel's own table
            own = LookupTable(node.name, key_dtype, value_dtype, mutable)
            return lambda: own
        ctx, key = node.ctx, ("lookup_table", a["container"], shared)

        def run():
            with ctx._lock:
                table = ctx.resources.get(key)
                if table is None:
                    table = ctx.resources[key] = LookupTable(shared, key_dtype, value_dtype,
                                                             mutable)
            return table
        return run
    return factory


kernel(ops.HashTableV2)(_table_kernel(False))
kernel(ops.MutableHashTableV2)(_table_kernel(True))


def _dense_table_kernel(node):
    """MutableDenseHashTableV2: a mutable table refusing its two marker keys (TF's open
    addressing needs them; here the entries live in a dict as the other tables')."""
    make = _table_kernel(True)(node)

    def run(empty_key, deleted_key):
        empty, deleted = _flat(empty_key), _flat(deleted_key)
        if empty == deleted:
            raise InvalidArgumentError(None, None, "Empty and deleted keys cannot be equal")
        table = make()
        empty = tuple(empty) if len(empty) > 1 else empty[0]
        deleted = tuple(deleted) if len(deleted) > 1 else deleted[0]
        table.reserved = {empty: "empty_key", deleted: "deleted_key"}
        if table.dense is None:
            table.dense = DenseLayout(empty, deleted, node.attrs["initial_num_buckets"],
                                      node.attrs["max_load_factor"])
        return table
    return run


kernel(ops.MutableDenseHashTableV2)(_dense_table_kernel)
host_kernel(ops.MutableDenseHashTableV2)(_dense_table_kernel)


def _check_not_reserved(table: LookupTable, keys: list) -> None:
    if table.reserved:
        for k in keys:
            role = table.reserved.get(k)
            if role is not None:
                raise InvalidArgumentError(None, None, f"Using the {role} as a table key is "
                                           "not allowed")


def _initialize(table: LookupTable, keys: list, values: list) -> None:
    """A read-only table's one initialization (TF's InitializableLookupTable)."""
    entries: dict = {}
    for k, v in zip(keys, values):
        if k in entries and entries[k] != v:
            raise FailedPreconditionError(
                None, None, f"HashTable has different value for same key. Key {k!r} has "
                f"{entries[k]!r} and trying to add value {v!r}")
        entries[k] = v
    with table.lock:
        if table.initialized:
            if entries != table.data:
                raise FailedPreconditionError(
                    None, None, "Table was already initialized with different data.")
            return
        table.data = entries
        table.initialized = True


def _keys_values(node, keys, values, key_attr: str, value_attr: str):
    if _shape(keys) != _shape(values):
        raise InvalidArgumentError(None, None, f"Expected shape {list(_shape(keys))} for value, "
                                   f"got {list(_shape(values))}")
    return node.attrs[key_attr], node.attrs[value_attr], _flat(keys), _flat(values)


def _import_kernel(key_attr: str, value_attr: str, replace: bool):
    def factory(node):
        def run(table, keys, values):
            kd, vd, ks, vs = _keys_values(node, keys, values, key_attr, value_attr)
            _check_types(table, kd, vd)
            if table.mutable and replace:   # import into a mutable table replaces it
                with table.lock:
                    table.data = table.dense.entries(ks, vs) if table.dense is not None \
                        else dict(zip(ks, vs))
                return None
            _initialize(table, ks, vs)
            return None
        return run
    return factory


for _op, _args in ((ops.LookupTableImportV2, ("Tin", "Tout", True)),
                   (ops.InitializeTableV2, ("Tkey", "Tval", False))):
    kernel(_op)(_import_kernel(*_args))
    host_kernel(_op)(_import_kernel(*_args))


def _find(node):
    out_dtype = node.attrs["Tout"]

    def run(table, keys, default):
        _check_types(table, node.attrs["Tin"], out_dtype)
        if not table.initialized:
            raise FailedPreconditionError(None, None, "Table not initialized.")
        defaults = _flat(default)
        shape = _shape(keys)
        flat_keys = _flat(keys)
        _check_not_reserved(table, flat_keys)
        with table.lock:
            data = table.data
            if len(defaults) == 1:   # map: the per-key loop runs in C (1M keys: 3x faster)
                values = list(map(data.get, flat_keys, itertools.repeat(defaults[0])))
            elif _shape(default) == shape:  # a default per key (mutable tables)
                values = list(map(data.get, flat_keys, defaults))
            else:
                raise InvalidArgumentError(None, None, "Expected shape [] or "
                                           f"{list(shape)} for default value, got "
                                           f"{list(_shape(default))}")
        return _tensor(values, shape, out_dtype)
    return run


kernel(ops.LookupTableFindV2)(_find)
host_kernel(ops.LookupTableFindV2)(_find)


def _insert(node):
    def run(table, keys, values):
        kd, vd, ks, vs = _keys_values(node, keys, values, "Tin", "Tout")
        _check_types(table, kd, vd)
        if not table.mutable:
            raise FailedPreconditionError(None, None, "Table is read-only: it is initialized "
                                          "once (use a MutableHashTable to insert)")
        _check_not_reserved(table, ks)
        with table.lock:
            if table.dense is not None:
                table.dense.grow_for(len(table.data) + len(ks))
            table.data.update(zip(ks, vs))
        return None
    return run


kernel(ops.LookupTableInsertV2)(_insert)
host_kernel(ops.LookupTableInsertV2)(_insert)


def _remove(node):
    def run(table, keys):
        _check_types(table, node.attrs["Tin"])
        _check_not_reserved(table, _flat(keys))
        with table.lock:
            for k in _flat(keys):
                table.data.pop(k, None)
        return None
    return run


kernel(ops.LookupTableRemoveV2)(_remove)
host_kernel(ops.LookupTableRemoveV2)(_remove)


@kernel(ops.LookupTableSizeV2)
def _size(node):
    return lambda table: torch.tensor(len(table.data), dtype=torch.int64)


_ZERO = {dtypes.string: b"", dtypes.bool: False, dtypes.float32: 0.0, dtypes.float64: 0.0}


def _export(node):
    kd, vd = node.attrs["Tkeys"], node.attrs["Tvalues"]

    def run(table):
        _check_types(table, kd, vd)
        with table.lock:
            if table.dense is not None:  # TensorFlow's bucket arrays, [num_buckets, 1]
                keys, values = table.dense.buckets(table.data, _ZERO.get(vd, 0))
                return _tensor(keys, (len(keys), 1), kd), _tensor(values, (len(values), 1), vd)
            keys, values = list(table.data), list(table.data.values())
        return _tensor(keys, (len(keys),), kd), _tensor(values, (len(values),), vd)
    return run


kernel(ops.LookupTableExportV2)(_export)
host_kernel(ops.LookupTableExportV2)(_export)

_WHOLE_LINE, _LINE_NUMBER = -2, -1


def _text_file_init(node):
    a = node.attrs
    key_index, value_index, vocab_size = a["key_index"], a["value_index"], a["vocab_size"]
    delimiter, offset = a["delimiter"], a["offset"]
    delimiter = delimiter.decode() if isinstance(delimiter, bytes) else delimiter

    def column(line: str, number: int, index: int, dtype, path: str):
        if index == _LINE_NUMBER:
            return number + offset
        text = line if index == _WHOLE_LINE else None
        if text is None:
            cols = line.split(delimiter)
            if index >= len(cols):
                raise InvalidArgumentError(None, None, f"Invalid number of columns in {path} "
                                           f"line {number} ({line}) for column index {index}")
            text = cols[index]
        if dtype is dtypes.string:
            return text.encode()
        try:
            return int(text) if dtype.is_integer else float(text)
        except ValueError:
            raise InvalidArgumentError(None, None, f"Field {text} in line {number} is not a "
                                       f"valid {dtype.name}.") from None

    def run(table, filename):
        path = _flat(filename)[0]
        path = path.decode() if isinstance(path, bytes) else str(path)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise NotFoundError(None, None, f"{path}; {e.strerror or e}") from None
        if vocab_size > 0:
            if len(lines) < vocab_size:
                raise InvalidArgumentError(None, None, f"Invalid vocab_size in {path}: "
                                           f"expected {vocab_size} but got {len(lines)}")
            lines = lines[:vocab_size]
        keys = [column(ln, i, key_index, table.key_dtype, path) for i, ln in enumerate(lines)]
        values = [column(ln, i, value_index, table.value_dtype, path)
                  for i, ln in enumerate(lines)]
        _initialize(table, keys, values)
        return None
    return run


kernel(ops.InitializeTableFromTextFileV2)(_text_file_init)
host_kernel(ops.InitializeTableFromTextFileV2)(_text_file_init)
