"""Host kernels of DecodeProtoV2 and EncodeProto on the `protobuf` package's descriptors,
with TF's checks and messages. The wire format itself is kernels/proto_wire.py; requests of
numeric fields only run over the whole batch in numba (kernels/proto_wire_numba.py), which
hands anything unusual back to that reference reader.

`descriptor_source` is TF's: "local://" (or "") is the process's default descriptor pool (in
ndflow the Python one: the protos imported so far, e.g. tensorflow.Example; TF's holds its
C++-linked protos; ndflow's own TF protos are always in it), "bytes://<serialized
FileDescriptorSet>", or a file holding one.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.descriptor import FieldDescriptor as FD
from google.protobuf.message import DecodeError, EncodeError
from tensorboard.compat.proto import types_pb2

from ndflow.core import dtypes
from ndflow.core.errors import DataLossError, InvalidArgumentError

# TF's protos that ndflow builds (tensorflow.Example, ...): in the local pool, as TF's C++-linked
# pool holds them, whichever of ndflow's areas has been imported so far
from ndflow.core.protos import (  # noqa: F401, E402
    checkpoint_state_pb,
    example_pb,
    queue_runner_pb,
    saved_model_pb,
    server_pb,
    snapshot_pb,
    tensor_bundle_pb,
    tfprof_pb,
)
from ndflow.kernels import proto_wire as wire
from ndflow.kernels import proto_wire_numba as fast
from ndflow.kernels.registry import host_kernel
from ndflow.ops import proto_ops

# proto_utils::IsCompatibleType: the tensor types each field type reads into / writes from.
_COMPATIBLE = {
    FD.TYPE_DOUBLE: ("float64",), FD.TYPE_FLOAT: ("float32", "float64"),
    FD.TYPE_INT64: ("int64",), FD.TYPE_UINT64: ("uint64",), FD.TYPE_INT32: ("int32", "int64"),
    FD.TYPE_FIXED64: ("uint64",), FD.TYPE_FIXED32: ("uint32", "uint64"),
    FD.TYPE_BOOL: ("bool",), FD.TYPE_STRING: ("string",), FD.TYPE_GROUP: ("string",),
    FD.TYPE_MESSAGE: ("string",), FD.TYPE_BYTES: ("string",),
    FD.TYPE_UINT32: ("uint32", "uint64"), FD.TYPE_ENUM: ("int32",),
    FD.TYPE_SFIXED32: ("int32", "int64"), FD.TYPE_SFIXED64: ("int64",),
    FD.TYPE_SINT32: ("int32", "int64"), FD.TYPE_SINT64: ("int64",)}
_CPP_TYPE = {FD.CPPTYPE_INT32: "int32", FD.CPPTYPE_INT64: "int64", FD.CPPTYPE_UINT32: "uint32",
             FD.CPPTYPE_UINT64: "uint64", FD.CPPTYPE_DOUBLE: "double",
             FD.CPPTYPE_FLOAT: "float", FD.CPPTYPE_BOOL: "bool", FD.CPPTYPE_ENUM: "enum",
             FD.CPPTYPE_STRING: "string", FD.CPPTYPE_MESSAGE: "message"}


def _text(value) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _dt_name(dtype) -> str:
    """TF's DataType enum name, "DT_FLOAT"."""
    return types_pb2.DataType.Name(dtypes.as_dtype(dtype).as_datatype_enum)


def _invalid(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


# -- descriptor pools --------------------------------------------------------------------------

def _pool_from_set(data: bytes):
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    pool = descriptor_pool.DescriptorPool()
    pending = list(fds.file)
    done: set = set()
    while pending:  # files after the files they import
        ready = [f for f in pending if all(d in done for d in f.dependency)] or pending[:1]
        for f in ready:
            pool.AddSerializedFile(f.SerializeToString())
            done.add(f.name)
            pending.remove(f)
    return pool


@functools.lru_cache(maxsize=32)
def _pool_for(source: bytes):
    if source in (b"", b"local://"):
        return descriptor_pool.Default()
    try:
        if source.startswith(b"bytes://"):
            return _pool_from_set(source[len(b"bytes://"):])
        with open(source, "rb") as f:
            return _pool_from_set(f.read())
    except (OSError, DecodeError, TypeError, ValueError, KeyError):
        # TF's message names the source for both a bad file and bad bytes.
        raise _invalid("Source does not represent serialized file descriptor set proto. This "
                       "may be due to a missing dependency on the file containing "
                       f'REGISTER_DESCRIPTOR_POOL("{_text(source)}", ...);') from None


def _message_descriptor(attrs):
    source = attrs["descriptor_source"]
    pool = _pool_for(source.encode("utf-8", "surrogateescape") if isinstance(source, str)
                     else bytes(source))
    message_type = _text(attrs["message_type"])
    try:
        return pool, pool.FindMessageTypeByName(message_type), message_type
    except KeyError:
        raise _invalid(f"No descriptor found for message type {message_type}") from None


def _find_field(pool, desc, name: str, message_type: str):
    field = desc.fields_by_name.get(name)
    if field is None:  # TF also accepts an extension by its full name
        field = next((e for e in pool.FindAllExtensions(desc) if e.full_name == name), None)
    if field is None:
        raise _invalid(f"Unknown field: {name} in message type {message_type}")
    return field


# -- DecodeProtoV2 -----------------------------------------------------------------------------

class _Field:
    """One requested field: its output slot, schema and default (cast to the output type)."""

    __slots__ = ("index", "number", "type", "repeated", "dtype", "default")

    def __init__(self, index: int, fd, dtype):
        self.index, self.number, self.type = index, fd.number, fd.type
        self.repeated, self.dtype = fd.is_repeated, dtype
        if fd.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP):
            default = b""
        elif fd.is_repeated:
            default = b"" if dtype is dtypes.string else 0
        elif fd.type == FD.TYPE_ENUM:
            default = fd.default_value if isinstance(fd.default_value, int) else 0
        else:
            default = fd.default_value
        if isinstance(default, str):
            default = default.encode("utf-8", "surrogateescape")
        self.default = default


def _collect(buf: bytes, by_number: dict) -> tuple[dict, dict]:
    """One message read as TF's Collect does: (field number -> values for the output,
    field number -> count for `sizes`). A singular field keeps its last value; a packed run
    for one counts once but, as in TF (it writes the run with stride 0 and then fills from
    the unmoved index), leaves the output at the default unless a plain value came first."""
    found: dict = {}
    counts: dict = {}
    pos, end = 0, len(buf)
    while pos < end:
        try:
            tag, pos = wire.read_varint(buf, pos, end)
        except wire.Truncated:
            tag = 0
        if tag == 0 or tag > 0xFFFFFFFF or tag & 7 == wire.EGROUP:
            raise DataLossError(None, None, "CountFields: Failed to consume entire buffer")
        number, wtype = tag >> 3, tag & 7
        field = by_number.get(number)
        if field is None:
            try:
                pos = wire.skip_field(buf, pos, end, wtype, number)
            except wire.Truncated:
                raise DataLossError(None, None, "Failed skipping unrequested field") from None
            continue
        values = found.setdefault(number, [])
        schema = wire.WIRE_TYPE[field.type]
        if wtype == wire.LEN and schema != wire.LEN:  # a packed run
            try:
                n, pos = wire.read_varint(buf, pos, end)
            except wire.Truncated:
                raise DataLossError(None, None,
                                    "CollectField: Failed reading packed size") from None
            if n > end - pos:
                raise DataLossError(None, None,
                                    "ReadPackedValues: Skipping packed field failed")
            if n:
                got = wire.read_packed(buf, pos, pos + n, field.type)
                if field.repeated:
                    values.extend(got)
                    counts[number] = counts.get(number, 0) + len(got)
                else:
                    counts[number] = min(1, counts.get(number, 0) + len(got))
                    if values and got:
                        values[:] = got[-1:]
            pos += n
        elif wtype != schema:
            try:
                pos = wire.skip_field(buf, pos, end, wtype, number)
            except wire.Truncated:
                raise DataLossError(None, None,
                                    "CollectField: Failed skipping malformed field") from None
        else:
            try:
                value, pos = wire.read_value(buf, pos, end, field.type, number)
            except wire.Truncated:
                raise DataLossError(None, None,
                                    "ReadValue: Failed skipping field when counting") from None
            if field.repeated:
                values.append(value)
                counts[number] = counts.get(number, 0) + 1
            else:
                values[:] = [value]
                counts[number] = 1
    return found, counts


def _reserialize(cls, buf: bytes, binary: bool) -> bytes:
    message = cls()
    try:
        if binary:
            message.ParseFromString(buf)
        else:
            text_format.Parse(buf.decode("utf-8"), message)
    except (DecodeError, text_format.ParseError, UnicodeDecodeError, ValueError):
        kind = "binary" if binary else "text"
        raise DataLossError(None, None, f"Unable to parse {kind} protobuf") from None
    try:
        return message.SerializeToString()
    except EncodeError:
        raise DataLossError(None, None,
                            "Unable to reserialize text proto as binary") from None


def _output(values: list, count: int, field: _Field, shape) -> object:
    dtype = field.dtype
    if dtype is dtypes.string:
        out = np.empty(len(values) * count, dtype=object)
        for i, vals in enumerate(values):
            out[i * count:(i + 1) * count] = list(vals) + [field.default] * (count - len(vals))
        return out.reshape(shape)
    if field.type == FD.TYPE_FLOAT:  # values are float32 bits
        bits = np.full((len(values), count), np.float32(field.default).view(np.uint32))
        for i, vals in enumerate(values):
            if vals:
                bits[i, :len(vals)] = vals
        out = bits.view(np.float32).astype(dtype.np_dtype, copy=False)
    else:
        out = np.full((len(values), count), field.default, dtype=dtype.np_dtype)
        for i, vals in enumerate(values):
            if vals:
                out[i, :len(vals)] = vals
    return torch.from_numpy(np.ascontiguousarray(out).reshape(shape))


_KIND = {FD.TYPE_DOUBLE: fast.FIXED8_KIND, FD.TYPE_FIXED64: fast.FIXED8_KIND,
         FD.TYPE_SFIXED64: fast.FIXED8_KIND, FD.TYPE_FLOAT: fast.FIXED4_KIND,
         FD.TYPE_FIXED32: fast.FIXED4_KIND, FD.TYPE_SFIXED32: fast.FIXED4_KIND}


_MAX_WORDS = 1 << 27   # the scan's value buffer (a word per byte and field): at most 1 GB


def _joined(flat) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The messages' concatenation (uint8), their starts and lengths."""
    items = flat.tolist() if isinstance(flat, np.ndarray) else list(flat)
    try:
        data = b"".join(items)
    except TypeError:
        items = [bytes(b) for b in items]
        data = b"".join(items)
    lens = np.fromiter(map(len, items), np.int64, len(items))
    return np.frombuffer(data, np.uint8), np.cumsum(lens) - lens, lens


def _decode_fast(flat, fields: list, by_number: dict):
    """(sizes [n, fields], outputs [n, count]) of numeric fields read by the numba scan;
    None without numba or where the scan bails (the reference reader then runs)."""
    kernels = fast.kernels()
    if kernels is None:
        return None
    decode = kernels[0]
    buf, starts, lens = _joined(flat)
    uniq = list(by_number.values())
    if len(uniq) * buf.size > _MAX_WORDS:
        return None
    slot = {f.number: u for u, f in enumerate(uniq)}
    numbers = np.array([f.number for f in uniq], np.int64)
    kinds = np.array([_KIND.get(f.type, fast.VARINT_KIND) for f in uniq], np.int64)
    repeated = np.array([f.repeated for f in uniq], np.bool_)
    n = len(lens)
    counts = np.zeros((n, len(uniq)), np.int64)
    filled = np.zeros((n, len(uniq)), np.int64)
    first = np.zeros((n, len(uniq)), np.int64)
    words = np.empty((len(uniq), buf.size + 1), np.uint64)  # a value takes a byte or more
    if decode(buf, starts, lens, numbers, kinds, repeated, counts, filled, first,
              words) != fast.OK:
        return None
    laid = {}
    for u in range(len(uniq)):
        count = max(1, int(counts[:, u].max(initial=0)))
        if (filled[:, u] == count).all():   # every message has `count` values: in place
            laid[u] = (words[u, :n * count].reshape(n, count), None)
        else:
            at = np.minimum(first[:, u:u + 1] + np.arange(count), buf.size)
            laid[u] = (words[u][at], np.arange(count) < filled[:, u:u + 1])
    outs = [_typed(*laid[slot[f.number]], f) for f in fields]
    return counts[:, [slot[f.number] for f in fields]].astype(np.int32), outs


def _typed(raw: np.ndarray, kept, field: _Field) -> np.ndarray:
    """Words of field `field`'s values (where `kept`, else its default; None: all kept) as
    its output type, as _output makes them."""
    dtype, ftype = field.dtype.np_dtype, field.type
    if ftype == FD.TYPE_FLOAT:
        bits = raw.astype(np.uint32)
        if kept is not None:
            bits = np.where(kept, bits, np.float32(field.default).view(np.uint32))
        return bits.view(np.float32).astype(dtype, copy=False)
    if ftype == FD.TYPE_DOUBLE:
        values = raw.view(np.float64)
    elif ftype == FD.TYPE_FIXED64:
        values = raw
    elif ftype == FD.TYPE_SFIXED64:
        values = raw.view(np.int64)
    elif ftype == FD.TYPE_FIXED32:
        values = raw.astype(np.uint32)
    elif ftype == FD.TYPE_SFIXED32:
        values = raw.astype(np.uint32).view(np.int32)
    else:
        values = wire._convert_varints(ftype, raw)
    if kept is None:
        return values.astype(dtype)
    out = np.full(raw.shape, field.default, dtype=dtype)
    out[kept] = values[kept]
    return out


@host_kernel(proto_ops.DecodeProtoV2)
def _decode_proto(node):
    attrs = node.attrs
    pool, desc, message_type = _message_descriptor(attrs)
    names = [_text(n) for n in attrs["field_names"]]
    types = list(attrs["output_types"])
    if len(names) != len(types):
        raise _invalid("field_names and output_types attributes must have the same length")
    fields = []
    for i, (name, dtype) in enumerate(zip(names, types)):
        fd = _find_field(pool, desc, name, message_type)
        if dtypes.as_dtype(dtype).name not in _COMPATIBLE[fd.type]:
            raise _invalid(f"Unexpected output type for {fd.full_name}: "
                           f"{_CPP_TYPE[fd.cpp_type]} to {_dt_name(dtype)}")
        fields.append(_Field(i, fd, dtypes.as_dtype(dtype)))
    message_format = _text(attrs["message_format"])
    if message_format not in ("binary", "text"):
        raise _invalid("format must be one of binary or text")
    binary, sanitize = message_format == "binary", bool(attrs["sanitize"])
    cls = message_factory.GetMessageClass(desc)
    by_number = {f.number: f for f in fields}
    numeric = all(wire.WIRE_TYPE[f.type] in (wire.VARINT, wire.I64, wire.I32) for f in fields)

    def decode(bufs):
        bufs = np.asarray(bufs, dtype=object)
        flat = bufs.reshape(-1)
        if flat.size < 1:
            raise _invalid("Bufs argument must contain at least one value")
        if not binary or sanitize:
            flat = [_reserialize(cls, bytes(b), binary) for b in flat]
        quick = _decode_fast(flat, fields, by_number) if numeric else None
        if quick is not None:
            sizes, outs = quick
            shape = bufs.shape
            return (torch.from_numpy(sizes.reshape(shape + (len(fields),))),
                    *[torch.from_numpy(o.reshape(shape + (o.shape[1],))) for o in outs])
        read = [_collect(bytes(b), by_number) for b in flat]
        found = [r[0] for r in read]
        sizes = np.array([[r[1].get(f.number, 0) for f in fields] for r in read],
                         dtype=np.int32).reshape(bufs.shape + (len(fields),))
        outs = [torch.from_numpy(sizes)]
        for f in fields:
            per_message = [m.get(f.number, []) for m in found]
            count = max([1] + [int(n) for n in sizes.reshape(-1, len(fields))[:, f.index]])
            outs.append(_output(per_message, count, f, bufs.shape + (count,)))
        return tuple(outs)
    return decode


# -- EncodeProto -------------------------------------------------------------------------------

def _shape_str(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _as_numpy(t):
    return np.asarray(t, dtype=object) if not isinstance(t, torch.Tensor) else t.cpu().numpy()


@host_kernel(proto_ops.EncodeProto)
def _encode_proto(node):
    attrs = node.attrs
    pool, desc, message_type = _message_descriptor(attrs)
    names = [_text(n) for n in attrs["field_names"]]
    fds = [_find_field(pool, desc, name, message_type) for name in names]
    order = sorted(range(len(fds)), key=lambda i: fds[i].number)
    types = [dtypes.as_dtype(t) for t in attrs["Tinput_types"]]
    numeric = all(wire.WIRE_TYPE[fd.type] in (wire.VARINT, wire.I64, wire.I32) for fd in fds)

    def encode(sizes, *values):
        if len(values) != len(fds):
            raise _invalid("Length of inputs list must match field_names")
        arrays = [_as_numpy(v) for v in values]
        prefix = None
        for i, (fd, a, dtype) in enumerate(zip(fds, arrays, types)):
            if dtype.name not in _COMPATIBLE[fd.type]:
                raise _invalid(f"Incompatible type for field {names[i]}.  Saw dtype: "
                               f"{_dt_name(dtype)[3:].lower()} but field type is: "
                               f"{wire.TYPE_NAME[fd.type]}")
            if a.ndim < 2:
                raise _invalid(f"Invalid shape for field {names[i]}.  Saw shape "
                               f"{_shape_str(a.shape)} but it should be at least a matrix.")
            if prefix is None:
                prefix = a.shape[:-1]
            elif a.shape[:-1] != prefix:
                raise _invalid("Values must match up to the last dimension")
        sizes = sizes.cpu().numpy()
        expected = tuple(prefix) + (len(fds),)
        if sizes.shape != expected:
            raise _invalid("sizes should be batch_size + [len(field_names)].  Saw: "
                           f"{_shape_str(sizes.shape)} but expected: {_shape_str(expected)}")
        count = int(np.prod(prefix))
        sizes = sizes.reshape(count, len(fds))
        flat = [a.reshape(count, a.shape[-1]) for a in arrays]
        for i, a in enumerate(flat):
            if not np.any(sizes[:, i] > a.shape[1]):
                continue
            for m in range(count):
                if sizes[m, i] > a.shape[1]:
                    raise _invalid("Size to write must not be larger than value tensor; but "
                                   f"saw: {sizes[m, i]} > {a.shape[1]} at message {m} "
                                   f"field {i}")
        if numeric:
            quick = _encode_fast(sizes, flat, fds, order)
            if quick is not None:
                return quick.reshape(prefix)
        out = np.empty(count, dtype=object)
        for m in range(count):
            buf = bytearray()
            for i in order:
                n = int(sizes[m, i])
                if n:  # TF writes a negative size's packed tag with no values
                    fd = fds[i]
                    wire.write_field(buf, fd.type, fd.number, fd.GetOptions().packed,
                                     list(flat[i][m, :max(n, 0)]))
            out[m] = bytes(buf)
        return out.reshape(prefix)
    return encode


def _words(ftype: int, a: np.ndarray) -> np.ndarray:
    """The uint64 words the numba writer writes for values `a` of a field of type `ftype`
    (proto_wire._scalar_bytes over an array: 32-bit kinds keep the low 32 bits, a float
    field's doubles round to float)."""
    if ftype == FD.TYPE_FLOAT:
        return a.astype("<f4").view(np.uint32).astype(np.uint64)
    if ftype == FD.TYPE_DOUBLE:
        return a.astype("<f8").view(np.uint64)
    if ftype == FD.TYPE_BOOL:
        return (a != 0).astype(np.uint64)
    if ftype in (FD.TYPE_UINT32, FD.TYPE_FIXED32, FD.TYPE_SFIXED32):
        return a.astype(np.uint32).astype(np.uint64)
    if ftype in (FD.TYPE_INT32, FD.TYPE_ENUM):  # negative: sign-extended to ten bytes
        return a.astype(np.int32).astype(np.int64).view(np.uint64)
    if ftype == FD.TYPE_SINT32:
        s = a.astype(np.int32)
        return ((s << np.int32(1)) ^ (s >> np.int32(31))).view(np.uint32).astype(np.uint64)
    if ftype == FD.TYPE_SINT64:
        s = a.astype(np.int64)
        return ((s << np.int64(1)) ^ (s >> np.int64(63))).view(np.uint64)
    return a.astype(np.int64 if a.dtype.kind == "i" else np.uint64).view(np.uint64)


def _encode_fast(sizes: np.ndarray, flat: list, fds: list, order: list):
    """The messages (an object array of bytes) written by the numba writer; None without
    numba."""
    kernels = fast.kernels()
    if kernels is None:
        return None
    encode = kernels[1]
    count = sizes.shape[0]
    words = [_words(fds[i].type, flat[i]).reshape(-1) for i in order]
    width = np.array([flat[i].shape[1] for i in order], np.int64)
    base = np.concatenate([[0], np.cumsum([w.size for w in words])[:-1]]).astype(np.int64)
    numbers = np.array([fds[i].number for i in order], np.int64)
    kinds = np.array([_KIND.get(fds[i].type, fast.VARINT_KIND) for i in order], np.int64)
    packed = np.array([fds[i].GetOptions().packed for i in order], np.bool_)
    sizes = np.ascontiguousarray(sizes[:, order], dtype=np.int64)
    words = np.concatenate(words) if words else np.zeros(0, np.uint64)
    offsets = np.zeros(count + 1, np.int64)
    encode(sizes, words, base, width, numbers, kinds, packed, offsets,
           np.zeros(0, np.uint8), False)
    buf = np.empty(int(offsets[-1]), np.uint8)
    encode(sizes, words, base, width, numbers, kinds, packed, offsets, buf, True)
    data = buf.tobytes()
    out = np.empty(count, dtype=object)
    out[:] = [data[s:e] for s, e in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    return out
