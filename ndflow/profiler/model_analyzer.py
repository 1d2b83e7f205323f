"""`tf.compat.v1.profiler` (tfprof): `profile`, `advise`, `Profiler` and the result protos.

    g = tf.function(model).get_concrete_function(tf.TensorSpec([1, 28, 28, 1])).graph
    opts = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    flops = tf.compat.v1.profiler.profile(g, cmd="op", options=opts)
    print(flops.total_float_ops)

The report (options, "Doc:", "Profile:" and the rows) is printed or written as TensorFlow's
tfprof writes it; 'scope'/'graph' return a GraphNodeProto, 'op'/'code' a
MultiGraphNodeProto. Times and memory are 0: TensorFlow fills them from a RunMetadata's
StepStats, which ndflow's Sessions do not record. 'timeline' and 'pprof' outputs are not
written (a note goes to stderr).
"""

from __future__ import annotations

import sys

from ndflow.core import errors
from ndflow.core.api_export import tf_export
from ndflow.core.file_io import GFile
from ndflow.core.protos import tfprof_pb
from ndflow.profiler import tfprof_logger
from ndflow.profiler.option_builder import ProfileOptionBuilder
from ndflow.profiler.tfprof_advisor import ALL_ADVICE, run_advisor
from ndflow.profiler.tfprof_code_view import CodeView
from ndflow.profiler.tfprof_multi_views import OpView
from ndflow.profiler.tfprof_stats import (
    GraphNode,
    Options,
    apply_op_log,
    nodes_from_graph,
    query_doc,
)
from ndflow.profiler.tfprof_views import GraphView, ScopeView

for _proto in ("GraphNodeProto", "MultiGraphNodeProto", "AdviceProto", "OpLogProto"):
    tf_export(v1=[f"profiler.{_proto}"])(getattr(tfprof_pb, _proto))

_DEFAULT_PROFILE_OPTIONS = 0
_DEFAULT_ADVISE_OPTIONS = 0
_VIEWS = {"scope": ScopeView, "graph": GraphView, "op": OpView, "code": CodeView}


class _Stats:
    """The nodes of one or more graphs, their op logs and steps (TFStats)."""

    def __init__(self):
        self.nodes: dict[str, GraphNode] = {}
        self.has_trace = False
        self.steps: set[int] = set()
        self.id_to_string: dict[int, str] = {}

    def add_graph(self, graph) -> None:
        if graph is None:
            return
        for name, node in nodes_from_graph(graph).items():
            if name not in self.nodes:
                node.id = len(self.nodes)
                self.nodes[name] = node
        for node in self.nodes.values():
            node.nodes_map = self.nodes

    def add_op_log(self, op_log) -> None:
        for k, v in op_log.id_to_string.items():
            self.id_to_string.setdefault(k, v)
        self.has_trace |= apply_op_log(self.nodes, op_log)

    def add_run_meta(self, step: int, run_meta) -> None:
        if run_meta is None or not run_meta.HasField("step_stats"):
            sys.stderr.write(f"Invalid RunMetadata for step {step}\n")
        self.steps.add(step)

    def show(self, cmd: str, opts: Options):
        proto_type = (tfprof_pb.MultiGraphNodeProto if cmd in ("op", "code")
                      else tfprof_pb.GraphNodeProto)
        if opts.step >= 0 and opts.step not in self.steps:
            sys.stderr.write(f"Options -step={opts.step} not found.\nAvailable steps: "
                             + "".join(f"{s} " for s in sorted(self.steps)) + "\n")
            return proto_type(), None
        prefix = query_doc(cmd, opts) + "Profile:\n"
        if cmd == "code" and not self.has_trace:
            sys.stderr.write("No code trace information\n")
            return proto_type(), None
        # the views recurse along name scopes, inputs and call stacks: one frame per level
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * len(self.nodes) + 1000))
        try:
            view = _VIEWS[cmd](self.nodes)
            if cmd in ("op", "code"):
                root, text = view.show(opts)
            else:
                root = view.show(opts)
                text = root.formatted_str
        finally:
            sys.setrecursionlimit(limit)
        return root.proto, prefix + text

    def serialize(self) -> bytes:
        profile = tfprof_pb.ProfileProto()
        for k, v in self.id_to_string.items():
            profile.id_to_string[k] = v
        for node in self.nodes.values():
            pn = profile.nodes[node.id]
            pn.name, pn.op, pn.id, pn.float_ops = node.name, node.op, node.id, node.float_ops
            pn.shape.extend(node.shape)
            pn.op_types.extend(sorted(node.op_types))
            for idx, name in node.inputs.items():
                pn.inputs[idx] = self.nodes[name].id if name in self.nodes else -1
            for idx, shape in node.output_shapes.items():
                pn.output_shapes[idx].int64_values.extend(shape)
            for name, idx in node.src_output_idx.items():
                if name in self.nodes:
                    pn.src_output_index[self.nodes[name].id] = idx
            if node.graph_op is not None:
                for key, value in node.graph_op.node_def.attr.items():
                    pn.attrs[key].MergeFrom(value)
        profile.has_trace = self.has_trace
        profile.steps.extend(sorted(self.steps))
        return profile.SerializeToString()


def _report(cmd: str, opts: Options, stats: _Stats):
    """Shows `cmd` and writes its report where `opts.output` says (RunProfile)."""
    if cmd not in _VIEWS:
        raise errors.InvalidArgumentError(None, None, f"unknown cmd: {cmd}\n")
    stdout = opts.output_type == "stdout"
    if stdout:
        sys.stdout.write("\n=========================Options=============================\n"
                         + opts.to_string()
                         + "\n==================Model Analysis Report======================\n")
    if cmd == "code" and opts.account_displayed_op_only:
        sys.stderr.write("Note: code view ignores account_displayed_op_only\n")
    proto, text = stats.show(cmd, opts)
    if text is not None:
        if stdout:
            sys.stdout.write(text)
        elif opts.output_type == "file":
            with GFile(opts.output_options["outfile"], "w") as f:
                f.write(text)
        elif opts.output_type in ("timeline", "pprof"):
            sys.stderr.write(f"ndflow's profiler does not write {opts.output_type} "
                             "output\n")
    if stdout:
        sys.stdout.write("\n======================End of Report==========================\n")
        sys.stdout.flush()
    return proto


def _options(options) -> Options:
    return Options.from_dict(options)


@tf_export(v1=["profiler.profile"])
def profile(graph=None, run_meta=None, op_log=None, cmd="scope",
            options=_DEFAULT_PROFILE_OPTIONS):
    """Profiles `graph` (default: the default graph in graph mode) in the `cmd` view
    ('scope', 'graph', 'op' or 'code'); returns GraphNodeProto or MultiGraphNodeProto."""
    graph = tfprof_logger.default_graph(graph)
    if options == _DEFAULT_PROFILE_OPTIONS:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    if cmd not in _VIEWS:
        raise errors.InvalidArgumentError(None, None, f"unknown cmd: {cmd}\n")
    op_log = tfprof_logger.merge_default_with_oplog(graph, op_log, run_meta,
                                                    add_trace=cmd == "code")
    opts = _options(options)
    stats = _Stats()
    stats.add_graph(graph)
    if run_meta is not None and run_meta.HasField("step_stats"):
        stats.add_run_meta(0, run_meta)
    stats.add_op_log(op_log)
    return _report(cmd, opts, stats)


@tf_export(v1=["profiler.advise"])
def advise(graph=None, run_meta=None, options=_DEFAULT_ADVISE_OPTIONS):
    """Runs the advisor's checkers on `graph`; returns an AdviceProto."""
    graph = tfprof_logger.default_graph(graph)
    if options == _DEFAULT_ADVISE_OPTIONS:
        options = ALL_ADVICE.copy()
    op_log = tfprof_logger.merge_default_with_oplog(graph, None, run_meta, add_trace=True)
    stats = _Stats()
    stats.add_graph(graph)
    if run_meta is not None and run_meta.HasField("step_stats"):
        stats.add_run_meta(0, run_meta)
    stats.add_op_log(op_log)
    return run_advisor(stats, options)


@tf_export(v1=["profiler.Profiler"])
class Profiler:
    """TensorFlow's multi-step profiler: `add_step` each profiled run, then the
    `profile_*` views, `advise` and `serialize_to_string`."""

    def __init__(self, graph=None, op_log=None):
        graph = tfprof_logger.default_graph(graph)
        self._coverage = 0.0
        self._graph = graph
        self._stats = _Stats()
        self._stats.add_graph(graph)
        self._stats.add_op_log(tfprof_logger.merge_default_with_oplog(graph, op_log=op_log))

    def add_step(self, step, run_meta):
        """Adds the statistics of one run (`run_meta`: a RunMetadata) as step `step`."""
        op_log = tfprof_logger.merge_default_with_oplog(self._graph, run_meta=run_meta)
        self._stats.add_graph(self._graph)
        self._stats.add_run_meta(int(step), run_meta)
        self._stats.add_op_log(op_log)
        self._coverage = 0.0

    def _profile(self, cmd, options):
        return _report(cmd, _options(options), self._stats)

    def profile_python(self, options):
        """The code view (Python call stacks): a MultiGraphNodeProto."""
        return self._profile("code", options)

    def profile_operations(self, options):
        """The op view (op types): a MultiGraphNodeProto."""
        return self._profile("op", options)

    def profile_name_scope(self, options):
        """The scope view (name scopes): a GraphNodeProto."""
        return self._profile("scope", options)

    def profile_graph(self, options):
        """The graph view (inputs and outputs): a GraphNodeProto."""
        return self._profile("graph", options)

    def advise(self, options):
        """Runs the checkers named in `options` (all when empty); an AdviceProto."""
        return run_advisor(self._stats, options or ALL_ADVICE.copy())

    def serialize_to_string(self):
        """The profile as a serialized ProfileProto."""
        return self._stats.serialize()

    def _write_profile(self, filename):
        with GFile(filename, "wb") as f:
            f.write(self.serialize_to_string())
