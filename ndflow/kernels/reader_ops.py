"""Kernels of the TF1 reader ops (ops/io_readers.py), as TensorFlow's ReaderBase: a reader
works through one file (work unit) at a time, taking the next name from a string queue
(kernels/queue_ops.py) when the current one is done; a closed, empty queue ends reading with
the queue's OutOfRangeError. Files are read whole on first use (ndflow.core.file_io); the
TFRecord framing (length, masked CRC-32C, data, masked CRC-32C) is checked here, as
ndflow.data (a higher layer) may not be imported by kernels.
"""

from __future__ import annotations

import gzip
import struct
import threading
import zlib

import google_crc32c
import numpy as np
import torch

from ndflow.core.errors import DataLossError, InvalidArgumentError, UnimplementedError
from ndflow.core.file_io import GFile
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.shared_resources import creator_kernel
from ndflow.ops import io_readers as ops


def _masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _read_file(path: str) -> bytes:
    with GFile(path, "rb") as f:
        return f.read()


def _decompress(data: bytes, kind: str, path: str) -> bytes:
    try:
        if kind == "GZIP":
            return gzip.decompress(data)
        if kind == "ZLIB":
            return zlib.decompress(data)
    except (OSError, zlib.error, EOFError) as e:
        raise DataLossError(None, None, f"Error decompressing {path}: {e}") from None
    if kind:
        raise InvalidArgumentError(None, None, f"Unsupported compression type: {kind}")
    return data


def _tfrecords(path: str, kind: str):
    """(offset, record) of each record of a TFRecord file."""
    data = _decompress(_read_file(path), kind, path)
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise DataLossError(None, None, f"truncated record at {pos}' failed with "
                                f"{path}")
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if _masked_crc(header) != crc:
            raise DataLossError(None, None, f"corrupted record at {pos}")
        end = pos + 12 + length
        if end + 4 > len(data):
            raise DataLossError(None, None, f"truncated record at {pos}' failed with {path}")
        record = data[pos + 12:end]
        if _masked_crc(record) != struct.unpack("<I", data[end:end + 4])[0]:
            raise DataLossError(None, None, f"corrupted record at {pos}")
        yield pos, record
        pos = end + 4


def _lines(path: str, skip: int):
    data = _read_file(path)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, line in enumerate(lines):
        if i < skip:
            continue
        yield f"{i + 1}", line[:-1] if line.endswith(b"\r") else line


def _fixed(path: str, a: dict):
    data = _decompress(_read_file(path), a["encoding"].upper(), path)
    header, footer, size = a["header_bytes"], a["footer_bytes"], a["record_bytes"]
    hop = a["hop_bytes"] or size
    end = len(data) - footer
    index, pos = 0, header
    while pos + size <= end:
        yield f"{index}", data[pos:pos + size]
        index, pos = index + 1, pos + hop


class Reader:
    """One reader's progress: the current file's record iterator and its counters."""

    def __init__(self, kind: str, attrs: dict):
        self.kind = kind
        self.attrs = attrs
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.work = None
        self.records = None
        self.produced = 0
        self.completed = 0

    def _records_of(self, work: str):
        a = self.attrs
        if self.kind == "TFRecordReader":
            return ((f"{work}:{off}", rec) for off, rec in _tfrecords(work,
                                                                       a["compression_type"]))
        if self.kind == "TextLineReader":
            return ((f"{work}:{n}", line) for n, line in _lines(work, a["skip_header_lines"]))
        if self.kind == "FixedLengthRecordReader":
            return ((f"{work}:{n}", rec) for n, rec in _fixed(work, a))
        if self.kind == "WholeFileReader":
            return iter([(work, _read_file(work))])
        return iter([(work, work.encode("utf-8", "surrogateescape"))])  # IdentityReader

    def next_record(self, queue, allow_end: bool):
        """The next (key, value); None when the queue ends and `allow_end` (a read_up_to
        holding records already)."""
        while True:
            if self.records is not None:
                rec = next(self.records, None)
                if rec is not None:
                    self.produced += 1
                    return rec[0].encode("utf-8", "surrogateescape"), rec[1]
                self.records, self.work = None, None
                self.completed += 1
            try:
                (element,) = queue.dequeue(1, False, None)
            except Exception:
                if allow_end:
                    return None
                raise
            work = element[0]
            work = work.item() if hasattr(work, "item") else work
            self.work = work.decode("utf-8", "surrogateescape") if isinstance(work, bytes) \
                else str(work)
            self.records = self._records_of(self.work)


def _register(op_def, factory):
    kernel(op_def)(factory)
    host_kernel(op_def)(factory)


def _reader_kernel(kind: str):
    def factory(node):
        a = node.attrs
        return creator_kernel(node, "reader", ops.ANONYMOUS_PREFIX, lambda _: Reader(kind, a))
    return factory


_register(ops.TFRecordReaderV2, _reader_kernel("TFRecordReader"))
_register(ops.TextLineReaderV2, _reader_kernel("TextLineReader"))
_register(ops.FixedLengthRecordReaderV2, _reader_kernel("FixedLengthRecordReader"))
_register(ops.WholeFileReaderV2, _reader_kernel("WholeFileReader"))
_register(ops.IdentityReaderV2, _reader_kernel("IdentityReader"))


def _strings(values: list):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _read(node):
    def run(reader, queue):
        with reader.lock:
            key, value = reader.next_record(queue, False)
        return np.array(key, dtype=object), np.array(value, dtype=object)
    return run


def _read_up_to(node):
    def run(reader, queue, n):
        n = int(n)
        if n <= 0:
            raise InvalidArgumentError(None, None, f"num_records must be positive, got {n}")
        keys, values = [], []
        with reader.lock:
            while len(keys) < n:
                rec = reader.next_record(queue, bool(keys))
                if rec is None:
                    break
                keys.append(rec[0])
                values.append(rec[1])
        return _strings(keys), _strings(values)
    return run


_register(ops.ReaderReadV2, _read)
_register(ops.ReaderReadUpToV2, _read_up_to)
_register(ops.ReaderNumRecordsProducedV2,
          lambda node: lambda r: torch.tensor(r.produced, dtype=torch.int64))
_register(ops.ReaderNumWorkUnitsCompletedV2,
          lambda node: lambda r: torch.tensor(r.completed, dtype=torch.int64))


def _unsupported(node):
    def run(reader, *state):
        raise UnimplementedError(None, None, f"{reader.kind} does not support "
                                 "SerializeState/RestoreState in ndflow")
    return run


_register(ops.ReaderSerializeStateV2, _unsupported)
_register(ops.ReaderRestoreStateV2, _unsupported)


def _reset(node):
    def run(reader):
        with reader.lock:
            reader.reset()
    return run


_register(ops.ReaderResetV2, _reset)
