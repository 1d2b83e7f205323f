"""Event files as TensorFlow writes them: `events.out.tfevents.<secs>.<host>[.<pid>.<n>]<suffix>`,
TFRecord framing (length, masked CRC-32C of the length, the serialized `Event`, masked CRC of
the data), a first `file_version: "brain.Event:2"` event.

Records are written by the `tensorboard` package's asynchronous writer (a queue drained by a
background thread); the record framing is ours, because tensorboard's RecordWriter computes
CRC-32C in pure Python (~3 MB/s, 36 us for a 100-byte event) while `google_crc32c` is C
(0.4 us). Events wait in the caller's queue as in TensorFlow's summary file writer and go to
the thread in blobs (see EventFileWriter). Every open writer is closed at interpreter exit,
so a program that never calls `close()` still leaves complete files.
"""

from __future__ import annotations

import atexit
import errno
import itertools
import os
import socket
import struct
import threading
import time

import google_crc32c
from tensorboard.compat.proto import event_pb2
from tensorboard.summary.writer.event_file_writer import _AsyncWriter

from ndflow.core import errors

_MASK_DELTA = 0xA282EAD8
_file_counter = itertools.count()  # TF2's per-process writer counter in file names
_OPEN_WRITERS: set = set()  # closed at exit; a writer leaves it when closed
_open_lock = threading.Lock()


def masked_crc32c(data: bytes) -> int:
    """TFRecord's checksum: CRC-32C rotated right by 15 bits plus a constant."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One TFRecord: the framing TensorFlow's RecordWriter writes around `data`."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


class _BlobWriter:
    """tensorboard's RecordWriter interface over a binary file, given whole blobs of
    framed records. An OSError on the writer thread (a full disk) is kept in `error` for
    the writing thread to raise, not left to kill the thread with a traceback."""

    def __init__(self, file):
        self._file = file
        self.error: OSError | None = None

    def write(self, blob: bytes) -> None:
        """Writes and flushes: a blob is handed on only when TF would flush (a full queue,
        flush_secs passed)."""
        if self.error is None:
            try:
                self._file.write(blob)
                self._file.flush()
            except OSError as e:
                self.error = e

    def flush(self) -> None:
        if self.error is None:
            try:
                self._file.flush()
            except OSError as e:
                self.error = e

    def close(self) -> None:
        self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed


_ERRNO_ERRORS = {errno.ENOENT: errors.NotFoundError, errno.EACCES: errors.PermissionDeniedError,
                 errno.EPERM: errors.PermissionDeniedError,
                 errno.EROFS: errors.PermissionDeniedError,
                 errno.ENOSPC: errors.ResourceExhaustedError,
                 errno.EDQUOT: errors.ResourceExhaustedError,
                 errno.ENOTDIR: errors.FailedPreconditionError}


def io_error(path: str, e: OSError) -> errors.OpError:
    """TensorFlow's error class for an OSError on `path` ("<path>; <strerror>")."""
    cls = _ERRNO_ERRORS.get(e.errno, errors.UnknownError)
    return cls(None, None, f"{path}; {os.strerror(e.errno) if e.errno else e}")


def make_log_dir(logdir: str) -> None:
    """Creates `logdir` and its parents; TensorFlow's error classes when that fails
    (a missing parent that cannot be created: NotFoundError; a file in the way:
    FailedPreconditionError; no permission: PermissionDeniedError)."""
    if not isinstance(logdir, (str, bytes, os.PathLike)) or not os.fspath(logdir):
        raise ValueError(f"logdir cannot be None or empty, got {logdir!r}")
    path = os.fsdecode(os.fspath(logdir))
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise errors.FailedPreconditionError(None, None, f"{path} is not a directory") from None
    except NotADirectoryError as e:
        blocker = _first_non_directory(path)
        raise errors.FailedPreconditionError(
            None, None, f"{blocker or e.filename or path} is not a directory") from None
    except OSError as e:
        raise io_error(e.filename or path, e) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied")


def _first_non_directory(path: str) -> str | None:
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        prefix = os.sep.join(parts[:i])
        if os.path.exists(prefix) and not os.path.isdir(prefix):
            return prefix
    return None


class EventFileWriter:
    """Appends `Event` protos to a new event file in `logdir`; the file is written by the
    `tensorboard` package's asynchronous writer thread.

    As TensorFlow's summary file writer, events are queued (framed, with their CRCs) and
    handed on once more than `max_queue` are waiting, `flush_secs` have passed since the
    last hand-off, or at `flush()`/`close()`; the writer thread writes them and flushes the
    file at most every `flush_secs`. Handing the thread blobs of records rather than single
    events keeps the cost of a summary off the training loop (one queue hand-off per
    `max_queue` events instead of one per event).

    `v2_name=True` names the file as TF2's summary writers do (pid and a per-process counter
    before the suffix); TF1's FileWriter names it `events.out.tfevents.<secs>.<host><suffix>`.
    """

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120.0,
                 filename_suffix: str = "", v2_name: bool = True):
        make_log_dir(logdir)
        self.logdir = os.fsdecode(os.fspath(logdir))
        now = time.time()
        name = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}"
        if v2_name:
            name += f".{os.getpid()}.{next(_file_counter)}"
        self.path = os.path.join(self.logdir, name + (filename_suffix or ""))
        try:
            file = open(self.path, "wb")  # noqa: SIM115 - owned by the async writer
        except OSError as e:
            raise io_error(self.path, e) from None
        self._records = _BlobWriter(file)
        self._max_queue, self._flush_secs = max(int(max_queue), 1), float(flush_secs)
        self._async = _AsyncWriter(self._records, 8, self._flush_secs)
        self._pending: list[bytes] = []
        self._last_handoff = time.monotonic()
        self._closed = False
        self._lock = threading.Lock()
        self.add_event(event_pb2.Event(wall_time=float(int(now)), file_version="brain.Event:2",
                                       source_metadata=event_pb2.SourceMetadata(
                                           writer="ndflow.summary")))
        self.flush()
        with _open_lock:
            _OPEN_WRITERS.add(self)

    @property
    def closed(self) -> bool:
        return self._closed

    def add_event(self, event: event_pb2.Event) -> None:
        if not isinstance(event, event_pb2.Event):
            raise TypeError(f"Expected an event_pb2.Event proto, but got {type(event)}")
        self.add_serialized(event.SerializeToString())

    def add_serialized(self, data: bytes) -> None:
        if self._closed:
            raise RuntimeError(f"The event file {self.path} is already closed")
        self._raise_write_error()
        record = encode_record(data)
        with self._lock:
            self._pending.append(record)
            if (len(self._pending) > self._max_queue
                    or time.monotonic() - self._last_handoff >= self._flush_secs):
                self._hand_off()

    def _hand_off(self) -> None:
        """Gives the queued records to the writer thread (self._lock held)."""
        if self._pending:
            self._async.write(b"".join(self._pending))
            self._pending = []
        self._last_handoff = time.monotonic()

    def _raise_write_error(self) -> None:
        """A write that failed on the writer thread (a full disk, a lost mount) as TF's
        error; the records from then on are dropped."""
        if self._records.error is not None:
            raise io_error(self.path, self._records.error)

    def flush(self) -> None:
        if self._closed:
            return
        with self._lock:
            if self._writer_thread_idle():
                # Nothing in flight: write here rather than wait for the thread to be
                # scheduled (a flush per training batch would otherwise cost a few ms).
                if self._pending:
                    self._records.write(b"".join(self._pending))
                    self._pending = []
                self._last_handoff = time.monotonic()
                self._raise_write_error()
                return
            self._hand_off()
        self._async.flush()
        self._raise_write_error()

    def _writer_thread_idle(self) -> bool:
        """Whether every blob handed to the writer thread has been written (self._lock
        held, so none can be added meanwhile)."""
        queue = getattr(self._async, "_byte_queue", None)
        return queue is not None and queue.unfinished_tasks == 0

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._hand_off()
        try:
            self._async.close()
        except OSError as e:
            raise io_error(self.path, e) from None
        finally:
            with _open_lock:
                _OPEN_WRITERS.discard(self)
        self._raise_write_error()


@atexit.register
def _close_all() -> None:
    with _open_lock:
        writers = list(_OPEN_WRITERS)
    for w in writers:
        try:
            w.close()
        except Exception:  # noqa: BLE001 - exit must not fail on one bad file
            pass
