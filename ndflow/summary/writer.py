"""TF2's summary writers and the thread-local summary state (default writer, default step,
recording condition): `tf.summary.create_file_writer`, `create_noop_writer`,
`SummaryWriter.as_default/set_as_default/flush/close`, `record_if`,
`should_record_summaries`, `tf.summary.experimental.get_step/set_step`, `tf.summary.flush`.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np
from tensorboard.compat.proto import event_pb2, summary_pb2

from ndflow.core import context, dtypes, errors
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.script_ops import numpy_function
from ndflow.summary import writer_docs
from ndflow.summary.event_file import EventFileWriter


class _SummaryState(threading.local):
    def __init__(self):
        self.writer = None
        self.step = None
        self.is_recording = True  # bool, callable -> bool, or a bool tensor


STATE = _SummaryState()


@tf_export("summary.SummaryWriter", v1=[])
class SummaryWriter:
    """The interface of summary writers (TF2's abstract `tf.summary.SummaryWriter`)."""

    def set_as_default(self, step=None):
        """Makes this writer the current thread's default (and `step` its default step)."""
        self.as_default(step).__enter__()

    def as_default(self, step=None):
        """A context manager making this writer the default; restores the previous writer
        (and step) and flushes on exit."""
        return _SummaryContextManager(self, step)

    def init(self):
        """Nothing to do: file writers open their file when created."""

    def flush(self):
        """Writes pending events to disk."""

    def close(self):
        """Flushes and closes the writer."""

    def write_event(self, event: event_pb2.Event) -> None:
        """Appends an `Event` (what the summary functions call)."""


class _SummaryContextManager:
    def __init__(self, writer, step):
        self._writer, self._step = writer, step
        self._old_writer = self._old_step = None

    def __enter__(self):
        self._old_writer = STATE.writer
        STATE.writer = self._writer
        if self._step is not None:
            self._old_step = STATE.step
            STATE.step = self._step
        return self._writer

    def __exit__(self, exc_type, *exc):
        try:
            STATE.writer.flush()
        except Exception:
            if exc_type is None:  # a flush error must not hide the error leaving the block
                raise
        finally:
            STATE.writer = self._old_writer
            if self._step is not None:
                STATE.step = self._old_step
        return False


class FileSummaryWriter(SummaryWriter):
    """A writer appending to one TF2-named event file (`...<host>.<pid>.<n>.v2`)."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = logdir
        self._file = EventFileWriter(
            logdir, 10 if max_queue is None else max_queue,
            120.0 if flush_millis is None else float(flush_millis) / 1000.0,
            ".v2" if filename_suffix is None else filename_suffix, v2_name=True)
        self._closed = False

    def __repr__(self):
        return f"<FileSummaryWriter logdir={self._logdir!r}>"

    @property
    def path(self) -> str:
        """The event file's path."""
        return self._file.path

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self):
        # Eagerly only, as TF: a function traced with a closed writer fails when it runs.
        if self._closed and context.executing_eagerly():
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def set_as_default(self, step=None):
        self._check_open()
        super().set_as_default(step)

    def as_default(self, step=None):
        self._check_open()
        return super().as_default(step)

    def write_event(self, event: event_pb2.Event) -> None:
        if self._closed:
            # TF: the writer's resource is gone (a function using it, run after close()).
            raise errors.NotFoundError(None, None, f"The summary writer for "
                                       f"{self._logdir!r} was closed: {self._file.path}")
        self._file.add_event(event)

    def write_summary(self, tag: str, tensor_proto, step: int, metadata, wall_time: float):
        value = summary_pb2.Summary.Value(tag=tag, tensor=tensor_proto, metadata=metadata)
        self.write_event(event_pb2.Event(wall_time=wall_time, step=int(step),
                                         summary=summary_pb2.Summary(value=[value])))

    def flush(self):
        if not self._closed:
            self._file.flush()

    def close(self):
        if not self._closed:
            self._closed = True
            self._file.close()

    def __del__(self):
        # As TF's writer resource: dropping the last reference flushes and closes the file.
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass


class NoopSummaryWriter(SummaryWriter):
    """A writer that writes nothing (`tf.summary.create_noop_writer`)."""

    def write_summary(self, *args, **kwargs):
        return None


@tf_export("summary.create_file_writer", v1=[])
def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False, experimental_mesh=None):
    """A summary writer for an event file in `logdir` (created with its parents):
    `max_queue` pending events at most (default 10), flushed every `flush_millis` ms
    (default 120000) by a background thread, file name ending `filename_suffix` (".v2")."""
    if logdir is None:
        raise ValueError("logdir cannot be None")
    return FileSummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


@tf_export("summary.create_noop_writer", v1=[])
def create_noop_writer():
    """A summary writer that does nothing (to disable summaries without changing code)."""
    return NoopSummaryWriter()


def default_writer():
    return STATE.writer


@tf_export("summary.experimental.get_step", v1=[])
def get_step():
    """The default step (`set_step` or a writer's `as_default(step)`), or None."""
    return STATE.step


@tf_export("summary.experimental.set_step", v1=[])
def set_step(step):
    """Sets the default step (an int, a tensor or a `tf.Variable`, read when a summary is
    written) for this thread."""
    STATE.step = step


@tf_export("summary.record_if", v1=[])
@contextlib.contextmanager
def record_if(condition):
    """Summaries are written inside only where `condition` (a bool, a bool tensor or a
    callable returning one) holds."""
    old = STATE.is_recording
    STATE.is_recording = condition
    try:
        yield
    finally:
        STATE.is_recording = old


def recording_condition():
    """The current condition evaluated now: a Python bool, or a bool tensor in a graph."""
    cond = STATE.is_recording
    if callable(cond):
        cond = cond()
    if isinstance(cond, bool):
        return cond
    t = convert_to_tensor(cond)
    if context.executing_eagerly():
        return bool(t.numpy())
    return t


@tf_export("summary.should_record_summaries", v1=[])
def should_record_summaries():
    """Whether summaries are written here: a default writer is set and `record_if` holds."""
    if STATE.writer is None or isinstance(STATE.writer, NoopSummaryWriter):
        return convert_to_tensor(False)
    return convert_to_tensor(recording_condition())


@tf_export("summary.flush", v1=[])
def flush(writer=None, name=None):
    """Flushes `writer` (default: the default writer) to disk; in a graph, an op that
    flushes each time it runs."""
    writer = STATE.writer if writer is None else writer
    if writer is None:
        return None
    if context.executing_eagerly():
        writer.flush()
        return None

    def flush_now():
        writer.flush()
        return np.bool_(True)
    return numpy_function(flush_now, [], dtypes.bool, stateful=True, name=name or "flush")


__all__ = ["SummaryWriter", "FileSummaryWriter", "NoopSummaryWriter", "create_file_writer",
           "create_noop_writer", "get_step", "set_step", "record_if", "should_record_summaries",
           "flush", "STATE", "default_writer", "recording_condition"]


attach(globals(), writer_docs.DOCS)
