"""The LevelDB table format TensorFlow uses for a checkpoint's `.index` file
(tensorflow/core/lib/io: table_builder, block_builder, format).

A table is a run of data blocks holding the sorted key/value pairs, an empty metaindex block,
an index block mapping each data block's last key to its position, and a 48-byte footer.
Each block is followed by a 1-byte compression type and the masked CRC-32C of the block and
that byte. In a block, a key is stored as the length it shares with the previous key plus the
rest ("prefix compression"); every 16th key is stored whole (a restart point) and the block
ends with the restart offsets and their count, as little-endian uint32s.

No Python package reads or writes a single LevelDB table file (plyvel and leveldb bind whole
databases), so this module implements the format; CRC-32C comes from `google_crc32c`.
"""

from __future__ import annotations

import struct

import google_crc32c

from ndflow.core import errors
from ndflow.kernels import proto_wire

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_LENGTH = 48  # two block handles of at most 20 bytes each, padded, then the magic
BLOCK_TRAILER_LENGTH = 5
NO_COMPRESSION = 0
SNAPPY_COMPRESSION = 1
RESTART_INTERVAL = 16
BLOCK_SIZE = 262144  # TensorFlow's table::Options block_size


def masked_crc32c(data: bytes) -> int:
    """TensorFlow's crc32c::Mask(crc32c::Value(data))."""
    return mask_crc(google_crc32c.value(data))


def mask_crc(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def unmask_crc(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def put_varint(value: int) -> bytes:
    out = bytearray()
    proto_wire.write_varint(out, value)
    return bytes(out)


def get_varint(data, pos: int, limit: int | None = None) -> tuple[int, int]:
    """(value, position after it); ValueError when the varint runs past `limit`."""
    limit = len(data) if limit is None else limit
    result = shift = 0
    while pos < limit and shift <= 63:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise ValueError("bad varint")


class _BlockBuilder:
    """Prefix-compressed sorted entries with restart points (block_builder.cc)."""

    def __init__(self):
        self.buffer = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.counter < RESTART_INTERVAL:
            limit = min(len(self.last_key), len(key))
            while shared < limit and self.last_key[shared] == key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buffer))
            self.counter = 0
        self.buffer += put_varint(shared) + put_varint(len(key) - shared) + \
            put_varint(len(value))
        self.buffer += key[shared:] + value
        self.last_key = key
        self.counter += 1

    def size_estimate(self) -> int:
        return len(self.buffer) + 4 * len(self.restarts) + 4

    def empty(self) -> bool:
        return not self.buffer

    def finish(self) -> bytes:
        tail = b"".join(struct.pack("<I", r) for r in self.restarts)
        return bytes(self.buffer) + tail + struct.pack("<I", len(self.restarts))


def _handle(offset: int, size: int) -> bytes:
    return put_varint(offset) + put_varint(size)


def shortest_separator(start: bytes, limit: bytes) -> bytes:
    """A short key k with start <= k < limit (the bytewise comparator's
    FindShortestSeparator), the index key between two data blocks."""
    common = 0
    while common < min(len(start), len(limit)) and start[common] == limit[common]:
        common += 1
    if common < min(len(start), len(limit)):
        byte = start[common]
        if byte < 0xFF and byte + 1 < limit[common]:
            return start[:common] + bytes([byte + 1])
    return start


def short_successor(key: bytes) -> bytes:
    """A short key >= key (FindShortSuccessor), the index key after the last data block."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def build_table(items) -> bytes:
    """The table file's bytes for `items`, (key bytes, value bytes) pairs in strictly
    increasing key order (bytewise)."""
    out = bytearray()
    index = _BlockBuilder()
    block = _BlockBuilder()
    previous = None

    def write_block(contents: bytes) -> bytes:
        offset = len(out)
        out.extend(contents)
        kind = bytes([NO_COMPRESSION])
        out.extend(kind + struct.pack("<I", masked_crc32c(contents + kind)))
        return _handle(offset, len(contents))

    pending = None  # the handle of a flushed block whose index entry awaits the next key
    for key, value in items:
        if previous is not None and key <= previous:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after "
                             f"{previous!r}")
        if pending is not None:
            index.add(shortest_separator(previous, key), pending)
            pending = None
        previous = key
        block.add(key, value)
        if block.size_estimate() >= BLOCK_SIZE:
            pending = write_block(block.finish())
            block = _BlockBuilder()
    if not block.empty():
        pending = write_block(block.finish())
    if pending is not None:
        index.add(short_successor(previous), pending)
    metaindex_handle = write_block(_BlockBuilder().finish())
    index_handle = write_block(index.finish())
    footer = metaindex_handle + index_handle
    footer += b"\0" * (FOOTER_LENGTH - 8 - len(footer)) + struct.pack("<Q", TABLE_MAGIC)
    out.extend(footer)
    return bytes(out)


def _corrupt(filename: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"{what} in file {filename}: the checkpoint "
                                            "index is corrupted or truncated")


def _decode_handle(data: bytes, pos: int) -> tuple[int, int, int]:
    """(offset, size, position after) of the block handle at pos."""
    offset, pos = get_varint(data, pos)
    size, pos = get_varint(data, pos)
    return offset, size, pos


def _block_entries(block: bytes, filename: str):
    """The (key, value) pairs of one block, in order."""
    if len(block) < 4:
        raise _corrupt(filename, "block too short")
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise _corrupt(filename, "bad restart count in block")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = get_varint(block, pos, limit)
        unshared, pos = get_varint(block, pos, limit)
        value_length, pos = get_varint(block, pos, limit)
        if shared > len(key) or pos + unshared + value_length > limit:
            raise _corrupt(filename, "bad entry in block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + value_length]
        pos += value_length


def read_table(data: bytes, filename: str) -> list[tuple[bytes, bytes]]:
    """All (key, value) pairs of a table file's bytes, checksums verified; DataLossError
    naming `filename` when it is not an intact table."""
    if len(data) < FOOTER_LENGTH:
        raise _corrupt(filename, "file too short to be a table")
    footer_start = len(data) - FOOTER_LENGTH
    (magic,) = struct.unpack_from("<Q", data, len(data) - 8)
    if magic != TABLE_MAGIC:
        raise _corrupt(filename, "not an sstable (bad magic number)")
    try:
        _, _, pos = _decode_handle(data, footer_start)  # metaindex: TensorFlow writes it empty
        offset, size, _ = _decode_handle(data, pos)
        index = _read_block_at(data, offset, size, filename)
        items = []
        for _, handle in _block_entries(index, filename):
            offset, size, _ = _decode_handle(handle, 0)
            items.extend(_block_entries(_read_block_at(data, offset, size, filename),
                                        filename))
    except ValueError:
        raise _corrupt(filename, "bad varint") from None
    return items


def _read_block_at(data: bytes, offset: int, size: int, filename: str) -> bytes:
    end = offset + size
    if end + BLOCK_TRAILER_LENGTH > len(data) - FOOTER_LENGTH:
        raise _corrupt(filename, "block handle past the end of the table")
    contents = data[offset:end]
    kind = data[end]
    (stored,) = struct.unpack_from("<I", data, end + 1)
    if masked_crc32c(contents + bytes([kind])) != stored:
        raise _corrupt(filename, "block checksum mismatch")
    if kind == SNAPPY_COMPRESSION:
        raise errors.UnimplementedError(None, None, f"Snappy-compressed table blocks are not "
                                                    f"supported (file {filename})")
    if kind != NO_COMPRESSION:
        raise _corrupt(filename, f"bad block compression type {kind}")
    return contents
