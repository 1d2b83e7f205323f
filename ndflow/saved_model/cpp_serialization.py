"""Protobuf messages serialized as TensorFlow's C++ serializes them deterministically, for the
SavedModel fingerprint (whose hashes are over those bytes).

The Python runtime's deterministic output differs only in map entry order: C++ sorts keys
ascending (std::string order: "inputs" before "inputs_1"; integers numerically), the Python
runtime puts a key after the keys it is a prefix of and orders integer keys otherwise. So
messages with maps somewhere inside are written field by field here, map entries sorted;
everything else is the runtime's own bytes.
"""

from __future__ import annotations

import functools

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.internal.encoder import _VarintBytes

_LENGTH_DELIMITED = 2
_VARINT = 0
_MASK64 = (1 << 64) - 1
_VARINT_TYPES = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64,
                           FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
                           FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_ENUM})


def _tag(number: int, wire_type: int) -> bytes:
    return _VarintBytes((number << 3) | wire_type)


def _delimited(number: int, payload: bytes) -> bytes:
    return _tag(number, _LENGTH_DELIMITED) + _VarintBytes(len(payload)) + payload


def _is_repeated(field) -> bool:
    # protobuf 7 dropped `label` for `is_repeated`; older releases only have `label`
    repeated = getattr(field, "is_repeated", None)
    return repeated if repeated is not None else \
        field.label == FieldDescriptor.LABEL_REPEATED


def _is_map(field) -> bool:
    return (field.type == FieldDescriptor.TYPE_MESSAGE
            and field.message_type.GetOptions().map_entry)


@functools.cache
def _has_maps(descriptor) -> bool:
    """Whether messages of this type can hold a map field at any depth."""
    seen, stack = set(), [descriptor]
    while stack:
        d = stack.pop()
        if d.full_name in seen:
            continue
        seen.add(d.full_name)
        for f in d.fields:
            if f.type == FieldDescriptor.TYPE_MESSAGE:
                if _is_map(f):
                    return True
                stack.append(f.message_type)
    return False


def _map_item(number: int, field, value) -> bytes:
    """Field `number` (1: key, 2: value) of a map entry; C++ writes both even when default."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _delimited(number, serialize(value))
    if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return _delimited(number, value.encode() if isinstance(value, str) else bytes(value))
    if field.type in _VARINT_TYPES:
        return _tag(number, _VARINT) + _VarintBytes(int(value) & _MASK64)
    raise TypeError(f"map entries of type {field.type} are not serialized here")


def serialize(message) -> bytes:
    """`message` as C++'s deterministic serialization writes it."""
    if not _has_maps(message.DESCRIPTOR):
        return message.SerializeToString(deterministic=True)
    out = []
    for field, value in message.ListFields():   # in field-number order, as C++
        if _is_map(field):
            key_f = field.message_type.fields_by_name["key"]
            value_f = field.message_type.fields_by_name["value"]
            for key in sorted(value):
                out.append(_delimited(field.number, _map_item(1, key_f, key)
                                      + _map_item(2, value_f, value[key])))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if _is_repeated(field) else [value]
            out.extend(_delimited(field.number, serialize(v)) for v in items)
        else:   # scalars: the runtime's bytes for this field alone
            alone = type(message)()
            if _is_repeated(field):
                getattr(alone, field.name).extend(value)
            else:
                setattr(alone, field.name, value)
            out.append(alone.SerializeToString(deterministic=True))
    return b"".join(out)
