"""Tensors saved in slices (partitioned variables), as TensorFlow's TensorBundle stores them
(tensor_bundle.cc `AddSlice`, saved_tensor_slice_util.cc, tensor_slice.cc).

A variable saved in parts has one entry under its full name holding its dtype, full shape
and the `TensorSliceProto` of every saved slice, but no data; each slice's data is an entry
of its own under `EncodeTensorNameSlice(name, slice)`: OrderedCode's
WriteNumIncreasing(0), WriteString(name), WriteNumIncreasing(rank), then for each dimension
WriteSignedNumIncreasing(start) and WriteSignedNumIncreasing(length) (-1 for a whole
dimension). Reading a region (the whole tensor, or another partitioning's part) copies the
intersection of each saved slice with it, and is an error unless the slices cover it.

A slice is written here as a tuple of (start, length) pairs, length -1 for a whole
dimension; TensorFlow's text form ("7 2 3,2:0,2": full shape, then start,length per
dimension, "-" for a whole one) is what `Variable.SaveSliceInfo.spec` gives.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import errors
from ndflow.core.protos.tensor_bundle_pb import TensorSliceProto

FULL = -1  # a whole dimension's length (TensorSlice::kFullExtent)


# -- OrderedCode (tensorflow/core/lib/strings/ordered_code.cc) -------------------------------
def _num_increasing(value: int) -> bytes:
    """WriteNumIncreasing: a length byte, then the value big-endian without leading zeros."""
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _string(value: bytes) -> bytes:
    """WriteString: \\x00 -> \\x00\\xff, \\xff -> \\xff\\x00, terminated by \\x00\\x01."""
    out = bytearray()
    for byte in value:
        out += b"\x00\xff" if byte == 0 else b"\xff\x00" if byte == 0xFF else bytes([byte])
    return bytes(out) + b"\x00\x01"


# Header bits of the first two bytes of a signed number's encoding, by encoding length
_HEADER = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0),
           (0xFE, 0), (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)]


def _signed_num_increasing(value: int) -> bytes:
    """WriteSignedNumIncreasing: n bytes hold values in [-2^(7n-1), 2^(7n-1))."""
    magnitude = ~value if value < 0 else value
    if magnitude < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = (magnitude.bit_length() + 1 + 6) // 7  # sign bit + payload, 7 bits a byte
    buf = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big"))  # sign-extended
    begin = 10 - length
    buf[begin] ^= _HEADER[length][0]
    buf[begin + 1] ^= _HEADER[length][1]
    return bytes(buf[begin:])


def encode_tensor_name_slice(name: str, extents) -> bytes:
    """The bundle key of the slice `extents` ((start, length) pairs) of tensor `name`."""
    out = _num_increasing(0) + _string(name.encode()) + _num_increasing(len(extents))
    for start, length in extents:
        out += _signed_num_increasing(start) + _signed_num_increasing(length)
    return out


# -- slices ----------------------------------------------------------------------------------
def slice_proto(extents) -> TensorSliceProto:
    """A TensorSliceProto: start left out when 0, no length for a whole dimension."""
    proto = TensorSliceProto()
    for start, length in extents:
        extent = proto.extent.add()
        if start:
            extent.start = start
        if length != FULL:
            extent.length = length
    return proto


def extents_of(proto, full_shape) -> tuple:
    """(start, length) pairs of a TensorSliceProto, whole dimensions as (0, FULL)."""
    out = [(e.start, e.length if e.WhichOneof("has_length") else FULL) for e in proto.extent]
    return tuple(out) if out else tuple((0, FULL) for _ in full_shape)


def _bounds(extents, full_shape) -> list:
    return [(s, d if n == FULL else s + n) for (s, n), d in zip(extents, full_shape)]


def parse_spec(spec: str) -> tuple[list[int], tuple]:
    """(full shape, extents) of a slice spec string ("7 2 3,2:0,2"; "-" whole dims)."""
    *dims, slices = spec.split(" ")
    extents = []
    for part in slices.split(":"):
        if part == "-":
            extents.append((0, FULL))
        else:
            start, length = part.split(",")
            extents.append((int(start), int(length)))
    return [int(d) for d in dims], tuple(extents)


def format_spec(full_shape, offsets, shape) -> str:
    """TensorFlow's SaveSliceInfo.spec: the full shape, then "start,length" per dim."""
    return " ".join([str(int(d)) for d in full_shape] +
                    [":".join(f"{int(o)},{int(n)}" for o, n in zip(offsets, shape))])


def check_slice(name: str, full_shape, extents) -> None:
    """InvalidArgumentError unless `extents` lies inside `full_shape`."""
    if len(extents) != len(full_shape) or any(
            s < 0 or (n != FULL and (n < 0 or s + n > d)) for (s, n), d in
            zip(extents, full_shape)):
        raise errors.InvalidArgumentError(None, None, f"Slice {list(extents)} of tensor "
                                          f"{name!r} does not fit its shape "
                                          f"{list(full_shape)}")


def assemble(name: str, full_shape, stored, region, read) -> np.ndarray:
    """The values of `region` (extents) of tensor `name`, copied from the `stored` slices
    (extents) that intersect it; `read(extents)` gives a stored slice's array. Error (as
    TensorFlow's) unless the stored slices cover every element of the region."""
    want = _bounds(region, full_shape)
    out, covered = None, np.zeros([hi - lo for lo, hi in want], dtype=bool)
    for extents in stored:
        have = _bounds(extents, full_shape)
        cut = [(max(a, c), min(b, d)) for (a, b), (c, d) in zip(want, have)]
        if any(lo >= hi for lo, hi in cut) and covered.size:
            continue
        data = read(extents)
        if out is None:
            out = np.empty(covered.shape, dtype=data.dtype)
        src = tuple(slice(lo - c, hi - c) for (lo, hi), (c, _) in zip(cut, have))
        dst = tuple(slice(lo - a, hi - a) for (lo, hi), (a, _) in zip(cut, want))
        out[dst] = data[src]
        covered[dst] = True
    if out is None or not covered.all():
        raise errors.NotFoundError(None, None, f"Requested slice {list(region)} of tensor "
                                   f"{name!r} (shape {list(full_shape)}) is not fully covered "
                                   "by the slices saved in the checkpoint")
    return out
