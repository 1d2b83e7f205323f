"""Graphs for TensorBoard's Graphs dashboard: `tf.summary.graph` (an Event's `graph_def`) and
`tf.summary.trace_on` / `trace_export` / `trace_off`, which record the `tf.function` graphs
run in between and write them as TF2 does: a `RunMetadata` (each function's traced graph as
`pre_optimization_graph`, the graph after ndflow's pass pipeline — mixed-precision casts,
fused ops — as `post_optimization_graph`) in a string tensor summary of plugin
"graph_run_metadata_graph"."""

from __future__ import annotations

import threading
import time

import numpy as np
from tensorboard.compat.proto import config_pb2, event_pb2, graph_pb2, summary_pb2

from ndflow.core import context, dtypes, tf_logging
from ndflow.core.api_export import tf_export
from ndflow.core.graph import Graph
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.core.scopes import inside_function
from ndflow.ops.apply import convert_to_tensor
from ndflow.profiler import profiler_api
from ndflow.runtime import concrete_function
from ndflow.summary.summary_ops import summary_tag, write_summary
from ndflow.summary.writer import STATE, NoopSummaryWriter, recording_condition


def graph_def_of(graph_data) -> graph_pb2.GraphDef:
    """A GraphDef from an ndflow Graph (or FuncGraph) or a GraphDef."""
    if isinstance(graph_data, graph_pb2.GraphDef):
        return graph_data
    if isinstance(graph_data, Graph):
        return graph_data.as_graph_def(add_shapes=True)
    raise ValueError("Argument 'graph_data' is not tf.Graph or tf.compat.v1.GraphDef. "
                     f"Received graph_data={graph_data} of type {type(graph_data).__name__}.")


@tf_export("summary.graph", v1=[])
def graph(graph_data):
    """Writes a graph (a `tf.Graph` or `GraphDef`) to the default writer, for the Graphs
    dashboard; eager only, as TF."""
    if not context.executing_eagerly():
        raise ValueError("graph() cannot be invoked inside a graph context.")
    writer = STATE.writer
    if writer is None or isinstance(writer, NoopSummaryWriter) or not recording_condition():
        return _bool(False)
    gd = graph_def_of(graph_data)
    writer.write_event(event_pb2.Event(wall_time=time.time(), step=0,
                                       graph_def=gd.SerializeToString()))
    return _bool(True)


@tf_export(v1=["summary.initialize"])
def initialize(graph=None, session=None):
    """TF1's summary initialization for graph mode: ndflow's writers open their files when
    created, so this only writes `graph` (a Graph or GraphDef), when given, to the default
    writer at step 0."""
    if context.executing_eagerly():
        return
    writer = STATE.writer
    if writer is None:
        raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")
    if graph is not None and not isinstance(writer, NoopSummaryWriter):
        writer.write_event(event_pb2.Event(wall_time=time.time(), step=0,
                                           graph_def=graph_def_of(graph).SerializeToString()))


def _bool(value: bool):
    return convert_to_tensor(value)


class _Trace:
    def __init__(self, graph: bool, profiler: bool):
        self.graph, self.profiler = graph, profiler
        self.functions: dict = {}

    def __call__(self, fn) -> None:
        self.functions.setdefault(id(fn), fn)


_trace_lock = threading.Lock()
_trace: _Trace | None = None


def _eager_outside_function(in_function: str, in_graph: str) -> bool:
    """Whether tracing can start or export here; else TF's warning (inside a tf.function,
    or in TF1 graph mode)."""
    if inside_function():
        tf_logging.warning(in_function)
        return False
    if not context.executing_eagerly():
        tf_logging.warning(in_graph)
        return False
    return True


@tf_export("summary.trace_on", v1=[])
def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """Starts recording the graphs of the `tf.function`s called from now on; with
    `profiler=True` (and a `profiler_outdir`) the run metadata instead, and profiles into
    `profiler_outdir` (tf.profiler.experimental.start). As TensorFlow, `profiler=True`
    without a directory only warns: nothing is recorded, and `trace_export` then fails to
    stop the profiler that never ran."""
    global _trace
    if not _eager_outside_function("Cannot enable trace inside a tf.function.",
                                   "Must enable trace in eager mode."):
        return
    with _trace_lock:
        if _trace is not None:
            tf_logging.warning("Trace already enabled")
            return
        record = bool(graph) and not profiler
        if profiler:
            if profiler_outdir is None:
                tf_logging.warning("No `profiler_outdir` passed to trace_on(). Profiler won't "
                                   "be enabled.")
            else:
                record = True   # TF's run metadata holds the functions' graphs
                profiler_api.start(profiler_outdir)
        _trace = _Trace(bool(graph), bool(profiler))
        if record:
            concrete_function.CALL_OBSERVERS.append(_trace)


@tf_export("summary.trace_off", v1=[])
def trace_off():
    """Stops the current trace and discards what it recorded (and stops the profiler a
    `profiler=True` trace started, logging a failure to, as TensorFlow)."""
    global _trace
    with _trace_lock:
        if _trace is None:
            return
        if _trace in concrete_function.CALL_OBSERVERS:
            concrete_function.CALL_OBSERVERS.remove(_trace)
        profiling, _trace = _trace.profiler, None
    if profiling:
        try:
            profiler_api.stop()
        except Exception as e:  # noqa: BLE001 - TensorFlow logs a failure to stop
            tf_logging.warning(f"Error while stopping profiler: {e}")


def _tensor_name(t) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def function_graph_def(graph) -> graph_pb2.GraphDef:
    """A function's traced graph as TF's runtime shows an instantiated function: each input
    placeholder an `_Arg` (index, T, its shape), each output read by a `_Retval` named after
    TF's output argument ("identity", "identity_1", ...)."""
    gd = graph.as_graph_def()
    nodes = {n.name: n for n in gd.node}
    for i, t in enumerate(graph.inputs):
        node = nodes.get(t.op.name)
        if node is None or node.op != "Placeholder":
            continue
        shape = node.attr["shape"].shape if "shape" in node.attr else None
        node.op = "_Arg"
        node.ClearField("attr")
        node.attr["index"].i = i
        node.attr["_user_specified_name"].s = node.name.encode()
        if shape is not None:
            node.attr["_output_shapes"].list.shape.add().CopyFrom(shape)
        node.attr["T"].type = t.dtype.as_datatype_enum
    for i, t in enumerate(graph.outputs):
        ret = gd.node.add(name=f"identity{'_' + str(i) if i else ''}_RetVal", op="_Retval",
                          input=[_tensor_name(t)])
        ret.attr["index"].i = i
        ret.attr["T"].type = t.dtype.as_datatype_enum
    return gd


def run_metadata_of(functions, optimized=None) -> config_pb2.RunMetadata:
    """A RunMetadata with each function's traced graph (as `function_graph_def`) and its
    optimized graph (computed, or the GraphDefs in `optimized`, one per function)."""
    meta = config_pb2.RunMetadata()
    for i, fn in enumerate(functions):
        entry = meta.function_graphs.add()
        entry.pre_optimization_graph.CopyFrom(function_graph_def(fn.graph))
        post = optimized[i] if optimized is not None else graph_def_of(fn.optimized_graph())
        entry.post_optimization_graph.CopyFrom(post)
    return meta


def _write_run_metadata_as(plugin: str, name, run_metadata, step):
    md = summary_pb2.SummaryMetadata()
    md.plugin_data.plugin_name = plugin
    md.plugin_data.content = b"1"
    data = np.array(run_metadata.SerializeToString(), dtype=object)
    return write_summary(summary_tag(name), data, step, md,
                         lambda a: ndarray_to_tensor_proto(a, dtypes.string))


def write_run_metadata_graphs(name, run_metadata, step):
    """Writes `run_metadata` as TF2's trace_export does (plugin "graph_run_metadata_graph":
    TensorBoard's Graphs dashboard lists it under tag `name`)."""
    return _write_run_metadata_as("graph_run_metadata_graph", name, run_metadata, step)


def write_run_metadata(name, run_metadata, step):
    """Writes `run_metadata` as TF2's `run_metadata` does (plugin "graph_run_metadata": the
    profiled run's metadata, which TensorBoard's Graphs dashboard lists under tag `name`)."""
    return _write_run_metadata_as("graph_run_metadata", name, run_metadata, step)


@tf_export("summary.trace_export", v1=[])
def trace_export(name, step=None, profiler_outdir=None):
    """Writes what was recorded since `trace_on` as summary `name` at `step` (the graphs,
    plugin "graph_run_metadata_graph"; with the profiler on, the run metadata, plugin
    "graph_run_metadata"), stops the profiler trace_on started (which writes its profile)
    and stops tracing. As TensorFlow, a failure to stop the profiler raises and leaves the
    trace on."""
    if not _eager_outside_function("Cannot export trace inside a tf.function.",
                                   "Can only export trace while executing eagerly."):
        return
    with _trace_lock:
        if _trace is None:
            raise ValueError("Must enable trace before export through tf.summary.trace_on.")
        functions = list(_trace.functions.values())
        graph, profiler = _trace.graph, _trace.profiler
    if graph and not profiler:
        write_run_metadata_graphs(name, run_metadata_of(functions), step)
    else:
        write_run_metadata(name, run_metadata_of(functions), step)
    if profiler:
        if profiler_outdir:
            tf_logging.warning("Ignoring `profiler_outdir` passed to trace_export(). Please "
                               "pass it to trace_on() instead.")
        profiler_api.stop()
    trace_off()


__all__ = ["graph", "initialize", "trace_on", "trace_off", "trace_export", "graph_def_of",
           "function_graph_def", "run_metadata_of", "write_run_metadata_graphs",
           "write_run_metadata"]
