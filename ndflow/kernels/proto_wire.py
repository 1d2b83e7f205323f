"""The protobuf wire format as TF's DecodeProtoV2/EncodeProto read and write it
(core/kernels/decode_proto_op.cc, encode_proto_op.cc, util/proto/decode.h): a message is read
field by field from its bytes, not parsed into a message object, so a singular field seen
twice keeps the last value (a submessage too: its last bytes, not a merge), a field whose wire
type does not match the schema is skipped, and packed runs are accepted for any repeated
scalar. Writing follows the schema: packed only for an explicit `[packed = true]`.
"""

from __future__ import annotations

import struct

import numpy as np
from google.protobuf.descriptor import FieldDescriptor as FD

from ndflow.core.errors import DataLossError

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5

# Schema type -> the wire type its values use.
WIRE_TYPE = {FD.TYPE_DOUBLE: I64, FD.TYPE_FLOAT: I32, FD.TYPE_INT64: VARINT,
             FD.TYPE_UINT64: VARINT, FD.TYPE_INT32: VARINT, FD.TYPE_FIXED64: I64,
             FD.TYPE_FIXED32: I32, FD.TYPE_BOOL: VARINT, FD.TYPE_STRING: LEN,
             FD.TYPE_GROUP: SGROUP, FD.TYPE_MESSAGE: LEN, FD.TYPE_BYTES: LEN,
             FD.TYPE_UINT32: VARINT, FD.TYPE_ENUM: VARINT, FD.TYPE_SFIXED32: I32,
             FD.TYPE_SFIXED64: I64, FD.TYPE_SINT32: VARINT, FD.TYPE_SINT64: VARINT}
TYPE_NAME = {FD.TYPE_DOUBLE: "double", FD.TYPE_FLOAT: "float", FD.TYPE_INT64: "int64",
             FD.TYPE_UINT64: "uint64", FD.TYPE_INT32: "int32", FD.TYPE_FIXED64: "fixed64",
             FD.TYPE_FIXED32: "fixed32", FD.TYPE_BOOL: "bool", FD.TYPE_STRING: "string",
             FD.TYPE_GROUP: "group", FD.TYPE_MESSAGE: "message", FD.TYPE_BYTES: "bytes",
             FD.TYPE_UINT32: "uint32", FD.TYPE_ENUM: "enum", FD.TYPE_SFIXED32: "sfixed32",
             FD.TYPE_SFIXED64: "sfixed64", FD.TYPE_SINT32: "sint32", FD.TYPE_SINT64: "sint64"}
# Floats are read as their bits ("<I"): a conversion would flush subnormals while ndflow's
# kernels run with flush-to-zero on, and TF copies them unchanged.
_FIXED = {FD.TYPE_DOUBLE: "<d", FD.TYPE_FLOAT: "<I", FD.TYPE_FIXED64: "<Q",
          FD.TYPE_FIXED32: "<I", FD.TYPE_SFIXED32: "<i", FD.TYPE_SFIXED64: "<q"}
_MASK32, _MASK64 = (1 << 32) - 1, (1 << 64) - 1


class Truncated(Exception):
    """A read past the end of the buffer or a malformed varint."""


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift >= 70:
            raise Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _MASK64, pos
        shift += 7


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _zigzag(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return (v >> 1) ^ -(v & 1)


def convert_varint(ftype: int, v: int):
    """A varint read for a field of schema type `ftype`, as TF stores it (32-bit kinds keep
    the low 32 bits)."""
    if ftype in (FD.TYPE_INT32, FD.TYPE_ENUM):
        return _signed(v, 32)
    if ftype == FD.TYPE_UINT32:
        return v & _MASK32
    if ftype == FD.TYPE_INT64:
        return _signed(v, 64)
    if ftype == FD.TYPE_SINT32:
        return _zigzag(v, 32)
    if ftype == FD.TYPE_SINT64:
        return _zigzag(v, 64)
    if ftype == FD.TYPE_BOOL:
        return v != 0
    return v  # uint64


def skip_field(buf: bytes, pos: int, end: int, wire: int, number: int) -> int:
    """The position after a field of wire type `wire` (WireFormatLite::SkipField)."""
    if wire == VARINT:
        return read_varint(buf, pos, end)[1]
    if wire in (I64, I32):
        pos += 8 if wire == I64 else 4
        if pos > end:
            raise Truncated
        return pos
    if wire == LEN:
        n, pos = read_varint(buf, pos, end)
        if n > end - pos:
            raise Truncated
        return pos + n
    if wire == SGROUP:
        while True:
            tag, pos = read_varint(buf, pos, end)
            if tag >> 3 == 0 or tag > _MASK32:
                raise Truncated
            if tag & 7 == EGROUP:
                if tag >> 3 != number:
                    raise Truncated
                return pos
            pos = skip_field(buf, pos, end, tag & 7, tag >> 3)
    raise Truncated  # END_GROUP out of place or wire types 6/7


def read_value(buf: bytes, pos: int, end: int, ftype: int, number: int):
    """One value of schema type `ftype` (its own wire type) -> (value, new position); a
    float as its 32 bits."""
    fmt = _FIXED.get(ftype)
    if fmt is not None:
        size = struct.calcsize(fmt)
        if pos + size > end:
            raise Truncated
        return struct.unpack_from(fmt, buf, pos)[0], pos + size
    wire = WIRE_TYPE[ftype]
    if wire == VARINT:
        v, pos = read_varint(buf, pos, end)
        return convert_varint(ftype, v), pos
    if wire == LEN:
        n, pos = read_varint(buf, pos, end)
        if n > end - pos:
            raise Truncated
        return bytes(buf[pos:pos + n]), pos + n
    start = pos  # a group: its bytes up to the matching end tag
    after = skip_field(buf, pos, end, SGROUP, number)
    return bytes(buf[start:after - _varint_size((number << 3) | EGROUP)]), after


def read_packed(buf: bytes, pos: int, end: int, ftype: int) -> list:
    """The values of a packed run buf[pos:end] of schema type `ftype`, with TF's errors."""
    fmt = _FIXED.get(ftype)
    if fmt is not None:
        size = struct.calcsize(fmt)
        if (end - pos) % size:
            raise DataLossError(None, None, "Illegal data length for packed fixed-size type: "
                                f"{end - pos}")
        return [v[0] for v in struct.iter_unpack(fmt, buf[pos:end])]
    if WIRE_TYPE[ftype] != VARINT:
        raise DataLossError(None, None,
                            f"TYPE_{TYPE_NAME[ftype].upper()} encountered as packed")
    if buf[end - 1] & 0x80:
        raise DataLossError(None, None, "Corrupt packed varint")
    if end - pos >= _VECTOR_MIN:
        return _convert_varints(ftype, _varints(buf[pos:end])).tolist()
    out = []
    while pos < end:
        try:
            v, pos = read_varint(buf, pos, end)
        except Truncated:
            raise DataLossError(None, None, "Corrupt packed varint") from None
        out.append(convert_varint(ftype, v))
    return out


_VECTOR_MIN = 64  # bytes: longer packed varint runs are decoded by NumPy


def _varints(run: bytes) -> np.ndarray:
    """The uint64 values of a run of varints whose last byte ends one (checked by the
    caller): each byte's low 7 bits shifted into place, OR-ed per value."""
    b = np.frombuffer(run, np.uint8)
    last = b < 0x80
    ends = np.flatnonzero(last)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if int((ends - starts).max()) >= 10:  # more than ten bytes: TF's reader gives up
        raise DataLossError(None, None, "Corrupt packed varint")
    owner = np.cumsum(last) - last
    shift = (np.arange(len(b)) - starts[owner]) * 7
    parts = (b & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    return np.bitwise_or.reduceat(parts, starts)


def _convert_varints(ftype: int, v: np.ndarray) -> np.ndarray:
    """convert_varint over an array."""
    low = (v & np.uint64(_MASK32)).astype(np.uint32)
    if ftype in (FD.TYPE_INT32, FD.TYPE_ENUM):
        return low.view(np.int32)
    if ftype == FD.TYPE_UINT32:
        return low
    if ftype == FD.TYPE_INT64:
        return v.view(np.int64)
    if ftype == FD.TYPE_SINT32:
        return ((low >> np.uint32(1)) ^ (np.uint32(0) - (low & np.uint32(1)))).view(np.int32)
    if ftype == FD.TYPE_SINT64:
        return ((v >> np.uint64(1)) ^ (np.uint64(0) - (v & np.uint64(1)))).view(np.int64)
    if ftype == FD.TYPE_BOOL:
        return v != 0
    return v


# -- writing -----------------------------------------------------------------------------------

def _varint_size(v: int) -> int:
    return max(1, (v.bit_length() + 6) // 7)


def write_varint(out: bytearray, v: int) -> None:
    v &= _MASK64
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _scalar_bytes(ftype: int, v) -> bytes:
    """One value's encoding without its tag (TF casts the tensor value to the field's C++
    type first: 32-bit kinds keep the low 32 bits, floats from doubles round)."""
    fmt = _FIXED.get(ftype)
    if fmt is not None:
        if ftype == FD.TYPE_FIXED32:
            v = int(v) & _MASK32
        elif ftype == FD.TYPE_SFIXED32:
            v = _signed(int(v), 32)
        elif ftype in (FD.TYPE_FIXED64, FD.TYPE_SFIXED64):
            v = int(v)
        else:  # a double rounds to float as C++'s cast does (out of range: inf, no error)
            return np.asarray(v).astype("<f8" if ftype == FD.TYPE_DOUBLE else "<f4").tobytes()
        return struct.pack(fmt, v)
    out = bytearray()
    v = int(v)
    if ftype in (FD.TYPE_INT32, FD.TYPE_ENUM):
        write_varint(out, _signed(v, 32))  # negative: ten bytes, sign-extended
    elif ftype == FD.TYPE_UINT32:
        write_varint(out, v & _MASK32)
    elif ftype == FD.TYPE_SINT32:
        s = _signed(v, 32)
        write_varint(out, ((s << 1) ^ (s >> 31)) & _MASK32)
    elif ftype == FD.TYPE_SINT64:
        s = _signed(v, 64)
        write_varint(out, ((s << 1) ^ (s >> 63)) & _MASK64)
    elif ftype == FD.TYPE_BOOL:
        write_varint(out, 1 if v else 0)
    else:  # int64, uint64
        write_varint(out, v)
    return bytes(out)


def write_field(out: bytearray, ftype: int, number: int, packed: bool, values) -> None:
    """`values` (a sequence for one message) written as field `number`."""
    if ftype == FD.TYPE_GROUP:
        for v in values:
            write_varint(out, (number << 3) | SGROUP)
            out += v
            write_varint(out, (number << 3) | EGROUP)
        return
    wire = WIRE_TYPE[ftype]
    if wire == LEN:
        for v in values:
            write_varint(out, (number << 3) | LEN)
            write_varint(out, len(v))
            out += v
        return
    encoded = [_scalar_bytes(ftype, v) for v in values]
    if packed:
        write_varint(out, (number << 3) | LEN)
        write_varint(out, sum(len(e) for e in encoded))
        for e in encoded:
            out += e
        return
    tag = bytearray()
    write_varint(tag, (number << 3) | wire)
    for e in encoded:
        out += tag
        out += e
