"""TF1's `tf.compat.v1.summary.FileWriter` (events for Session programs: serialized
summaries from `Session.run`, graphs, session logs) and `FileWriterCache`, plus TF1's public
protos under `tf.compat.v1.summary`."""

from __future__ import annotations

import threading
import time

from tensorboard.compat.proto import config_pb2, event_pb2, meta_graph_pb2, summary_pb2

from ndflow.core import context, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.versions import GIT_VERSION, VERSION
from ndflow.summary.event_file import EventFileWriter
from ndflow.summary.graph_summary import graph_def_of

tf_export(v1=["Event", "summary.Event"])(event_pb2.Event)
tf_export(v1=["SessionLog", "summary.SessionLog"])(event_pb2.SessionLog)
tf_export(v1=["Summary", "summary.Summary"])(summary_pb2.Summary)
tf_export(v1=["SummaryMetadata"])(summary_pb2.SummaryMetadata)
tf_export(v1=["HistogramProto"])(summary_pb2.HistogramProto)
tf_export(v1=["summary.SummaryDescription"])(summary_pb2.SummaryDescription)
tf_export(v1=["summary.TaggedRunMetadata"])(event_pb2.TaggedRunMetadata)


def _meta_graph_of(graph):
    """The MetaGraphDef TF's FileWriter writes beside a graph: its GraphDef, the version
    info and, for a Graph, the names in its collections of tensors and operations (the
    summaries); ndflow adds no stripped op list."""
    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.tensorflow_version = VERSION
    meta.meta_info_def.tensorflow_git_version = GIT_VERSION
    meta.graph_def.CopyFrom(graph_def_of(graph))
    if isinstance(graph, Graph):
        # collection_def is keyed by strings: other keys (tuples some libraries use) are
        # skipped, as TF's export skips collections it cannot name
        for key in sorted(k for k in graph.get_all_collection_keys() if isinstance(k, str)):
            items = graph.get_collection(key)
            if items and all(isinstance(x, (SymbolicTensor, Operation)) for x in items):
                meta.collection_def[key].node_list.value.extend(x.name for x in items)
    return meta


@tf_export(v1=["summary.FileWriter"])
class FileWriter:
    """Writes `Summary` protos and events to an event file in `logdir` for TensorBoard,
    asynchronously (at most `max_queue` pending, flushed every `flush_secs`).

    Graph mode only, as TensorFlow: under eager execution use
    `tf.summary.create_file_writer`.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if context.executing_eagerly():
            raise RuntimeError(
                "tf.summary.FileWriter is not compatible with eager execution. Use "
                "`tf.summary.create_file_writer`,or a `with v1.Graph().as_default():` context")
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) writes through TF's "
                                      "summary ops resources, which ndflow does not have")
        self._logdir = str(logdir)
        self._max_queue, self._flush_secs = max_queue, flush_secs
        self._suffix = filename_suffix or ""
        self._file = EventFileWriter(self._logdir, max_queue, flush_secs, self._suffix,
                                     v2_name=False)
        self._closed = False
        self._added_graph = False
        self._seen_tags: set = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            # TF also exports a MetaGraphDef of it then
            self.add_meta_graph(_meta_graph_of(graph if graph is not None else graph_def))

    def get_logdir(self) -> str:
        return self._logdir

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def add_event(self, event) -> None:
        """Appends an `Event` proto."""
        if self._closed:
            return  # TF drops events written after close (reopen() starts a new file)
        self._file.add_event(event)

    def _add(self, step, **fields) -> None:
        event = event_pb2.Event(wall_time=time.time(), **fields)
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def add_summary(self, summary, global_step=None) -> None:
        """Adds a `Summary` proto or its serialized bytes (what a summary op evaluates to)."""
        if isinstance(summary, bytes):
            summary = summary_pb2.Summary.FromString(summary)
        elif hasattr(summary, "numpy"):
            summary = summary_pb2.Summary.FromString(summary.numpy())
        elif not isinstance(summary, summary_pb2.Summary):
            raise TypeError(f"add_summary expects a Summary proto or its serialized bytes, "
                            f"got {type(summary).__name__}")
        else:
            summary = summary_pb2.Summary.FromString(summary.SerializeToString())
        for value in summary.value:  # TF1 keeps plugin metadata only at a tag's first value
            if value.HasField("metadata"):
                if value.tag in self._seen_tags:
                    value.ClearField("metadata")
                self._seen_tags.add(value.tag)
        self._add(global_step, summary=summary)

    def add_session_log(self, session_log, global_step=None) -> None:
        self._add(global_step, session_log=session_log)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        """Adds a `tf.Graph` (or a `GraphDef`) for the Graphs dashboard."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if self._added_graph:
            tf_logging.warning("Adding more than one graph event per run, or there was a "
                               "graph already in the logdir.")
        gd = graph_def_of(graph if graph is not None else graph_def)
        self._added_graph = True
        self._add(global_step, graph_def=gd.SerializeToString())

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        self._add(global_step, meta_graph_def=meta_graph_def.SerializeToString())

    def add_run_metadata(self, run_metadata, tag, global_step=None) -> None:
        if not isinstance(run_metadata, config_pb2.RunMetadata):
            raise TypeError(f"Expected a RunMetadata proto, got {type(run_metadata).__name__}")
        tagged = event_pb2.TaggedRunMetadata(tag=tag,
                                             run_metadata=run_metadata.SerializeToString())
        self._add(global_step, tagged_run_metadata=tagged)

    def flush(self) -> None:
        if not self._closed:
            self._file.flush()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._file.close()

    def reopen(self) -> None:
        """After `close`, continues in a new event file in the same directory."""
        if self._closed:
            self._file = EventFileWriter(self._logdir, self._max_queue, self._flush_secs,
                                         self._suffix, v2_name=False)
            self._closed = False


@tf_export(v1=["summary.FileWriterCache"])
class FileWriterCache:
    """One FileWriter per log directory, shared (TF1's FileWriterCache)."""

    _cache: dict = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=context.get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}


__all__ = ["FileWriter", "FileWriterCache"]
