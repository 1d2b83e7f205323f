"""TensorFlow's TFRecord framing, read and written as TensorFlow does.

A record is `uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)`
(little endian). The file may be compressed as a whole: "ZLIB" (a zlib stream) or "GZIP" (a
gzip stream); offsets in error messages count bytes of the uncompressed stream, as
TensorFlow's reader does.

End-of-file rules (TensorFlow 2.21's): a file that ends inside a record header is a clean end
(the partly written header is ignored); one that ends inside the data or its CRC is
`DataLossError("truncated record at N' failed with Read less bytes than requested")` (N: the
record's offset); a CRC mismatch is `DataLossError("corrupted record at N")` (N: the header's
offset, with "(Is this even a TFRecord file?)" for the file's first; or the data's offset).
"""

from __future__ import annotations

import re
import struct
import zlib

import google_crc32c
import numpy as np

from ndflow.core.errors import DataLossError, NotFoundError, PermissionDeniedError

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_U32 = struct.Struct("<I")
# zlib window bits by compression type (+16: a gzip header/trailer instead of zlib's)
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
DEFAULT_BUFFER_SIZE = 256 * 1024  # TensorFlow's TFRecordDataset default


def masked_crc32c(data) -> int:
    """TensorFlow's masked CRC-32C (rotate right by 15, add a constant) of `data`."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """`data` framed as one TFRecord."""
    length = struct.pack("<Q", len(data))
    return b"".join((length, _U32.pack(masked_crc32c(length)), data,
                     _U32.pack(masked_crc32c(data))))


def compressor(compression_type: str, level: int | None = None):
    """A zlib compressobj writing TensorFlow's stream for "ZLIB"/"GZIP" (None for "")."""
    if not compression_type:
        return None
    return zlib.compressobj(-1 if level is None else level, zlib.DEFLATED,
                            _WBITS[compression_type])


def inflate_error(e: zlib.error) -> DataLossError:
    """zlib's "Error -3 while decompressing data: ..." worded as TensorFlow's inflate error."""
    m = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(e))
    return DataLossError(None, None, f"inflate() failed with error {m[1]}: {m[2]}" if m
                         else f"inflate() failed: {e}")


class _InflatingReader:
    """`read(n)` over the decompressed stream of a zlib/gzip file (multi-member gzip too)."""

    def __init__(self, raw, compression_type: str, buffer_size: int):
        self._raw, self._wbits, self._chunk = raw, _WBITS[compression_type], buffer_size
        self._d = zlib.decompressobj(self._wbits)
        self._buf = b""
        self._pos = 0

    def _fill(self) -> bool:
        while True:
            if self._d.unconsumed_tail:
                data = self._d.unconsumed_tail
            elif self._d.eof and self._d.unused_data:  # a further gzip member
                data = self._d.unused_data
                self._d = zlib.decompressobj(self._wbits)
            else:
                data = self._raw.read(self._chunk)
                if not data:
                    return False  # a stream without its trailer ends where the data ends
            try:
                out = self._d.decompress(data, self._chunk * 4)
            except zlib.error as e:
                raise inflate_error(e) from None
            if out:
                self._buf = self._buf[self._pos:] + out
                self._pos = 0
                return True

    def read(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n:
            if not self._fill():
                break
        out = self._buf[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def close(self):
        self._raw.close()


def open_for_read(path: str, compression_type: str = "", buffer_size: int | None = None):
    """A reader with `read(n)`/`close()` over the (decompressed) bytes of `path`."""
    size = buffer_size if buffer_size and buffer_size > 0 else DEFAULT_BUFFER_SIZE
    try:
        raw = open(path, "rb", buffering=size)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise DataLossError(None, None, f"{path}; Is a directory") from None
    except PermissionError:
        raise PermissionDeniedError(None, None, f"{path}; Permission denied") from None
    return _InflatingReader(raw, compression_type, size) if compression_type else raw


def iter_records(path: str, compression_type: str = "", buffer_size: int | None = None):
    """An iterator of the records of the TFRecord file `path`, CRCs checked, as TensorFlow
    reads them; the file is opened here (a missing file fails now, as in TensorFlow)."""
    return _flat(iter_record_chunks(path, compression_type, buffer_size))


def iter_record_chunks(path: str, compression_type: str = "", buffer_size: int | None = None):
    """`iter_records` in non-empty lists of records (those whole in each read buffer); the
    records before a damaged one come out before its error."""
    size = buffer_size if buffer_size and buffer_size > 0 else DEFAULT_BUFFER_SIZE
    return _record_chunks(open_for_read(path, compression_type, buffer_size), size)


def _flat(chunks):
    for chunk in chunks:
        yield from chunk


_MIN_RUN = 8  # records of one length checked in bulk from this many on
_DELTA32 = np.uint32(_MASK_DELTA)


def _alike_run(buf: bytes, pos: int, out: list) -> int:
    """Cuts the run of records at `pos` that share one header (one length: fixed-size
    Examples) in bulk into `out`, returning the position after them: the headers are
    compared in one NumPy pass (the first's CRC checked once), the data CRCs computed in one
    `map` and masked and compared as arrays (~0.25 instead of ~1.1 us a record). A record
    whose header differs or whose CRC does not match ends the run; the per-record loop then
    reads or rejects it."""
    size = len(buf)
    if size - pos < 12:
        return pos
    length, length_crc = _HEADER.unpack_from(buf, pos)
    stride = length + 16
    k = (size - pos) // stride
    if k < _MIN_RUN or masked_crc32c(buf[pos:pos + 8]) != length_crc:
        return pos
    def field(dtype: str, at: int) -> np.ndarray:  # one header/trailer field of each record
        return np.ndarray((k,), dtype, buf, pos + at, (stride,))
    same = (field("<u8", 0) == length) & (field("<u4", 8) == length_crc)
    if not same.all():
        k = int(same.argmin())  # the first record with another header
        if k < _MIN_RUN:
            return pos
    data = [buf[p:p + length] for p in range(pos + 12, pos + 12 + k * stride, stride)]
    crcs = np.fromiter(map(google_crc32c.value, data), np.uint32, k)
    ok = (((crcs >> 15) | (crcs << 17)) + _DELTA32) == field("<u4", stride - 4)
    if not ok.all():
        k = int(ok.argmin())  # the first corrupted record
        del data[k:]
    out.extend(data)
    return pos + k * stride


def _record_chunks(f, chunk: int):
    # Records are cut from chunks of the file (one read per chunk, not two per record); a run
    # of records of one length is cut in bulk (`_alike_run`), the others in one tight loop
    # (CRC masking inlined: ~1 us a record).
    read, header_at, u32_at = f.read, _HEADER.unpack_from, _U32.unpack_from
    crc, delta = google_crc32c.value, _MASK_DELTA
    buf, pos, offset = b"", 0, 0  # offset: the stream offset of buf[pos]
    stride = 0  # the bytes of a record of the last run of one length
    try:
        while True:
            out = []
            size = len(buf)
            end = _alike_run(buf, pos, out)
            if out:
                stride = (end - pos) // len(out)
            offset += end - pos
            pos = end
            while size - pos >= 12:
                length, length_crc = header_at(buf, pos)
                c = crc(buf[pos:pos + 8])
                if (((c >> 15) | (c << 17)) + delta) & 0xFFFFFFFF != length_crc:
                    break  # (raised below, after the records before it)
                end = pos + length + 16
                if end > size:
                    break
                data = buf[pos + 12:end - 4]
                c = crc(data)
                if (((c >> 15) | (c << 17)) + delta) & 0xFFFFFFFF != u32_at(buf, end - 4)[0]:
                    break
                out.append(data)
                offset += length + 16
                pos = end
            if out:
                yield out
            if len(buf) - pos < 12:
                left = len(buf) - pos
                # records of one length: a read that ends on a record's end leaves nothing
                # to copy in front of the next one (the buffer is the read's bytes object)
                more = read(chunk // stride * stride - left if left < stride <= chunk
                            else chunk)
                if not more:
                    return  # EOF, or a header cut short: TensorFlow ends there without an error
                buf, pos = buf[pos:] + more, 0
                continue
            length, length_crc = header_at(buf, pos)
            if masked_crc32c(buf[pos:pos + 8]) != length_crc:
                hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
                raise DataLossError(None, None, f"corrupted record at {offset}{hint}")
            end = pos + length + 16
            while len(buf) < end:
                need = end - len(buf)
                more = read(need + (chunk - need) // stride * stride
                            if stride == length + 16 and need < chunk else max(chunk, need))
                if not more:
                    raise DataLossError(None, None, f"truncated record at {offset}' failed "
                                        "with Read less bytes than requested")
                buf, end, pos = buf[pos:] + more, end - pos, 0
            data = buf[pos + 12:end - 4]
            if masked_crc32c(data) != u32_at(buf, end - 4)[0]:  # TF names the data's offset
                raise DataLossError(None, None, f"corrupted record at {offset + 12}")
            offset += length + 16
            pos = end
            yield [data]
    finally:
        f.close()
