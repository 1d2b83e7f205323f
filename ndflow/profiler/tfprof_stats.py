"""tfprof's model of a graph (TensorFlow's core/profiler/internal tfprof_stats/tfprof_node):
one `GraphNode` per op — its inputs, output shapes, the `shape` attr (a variable's, whose
element count is its parameters), op types (the op's type plus an OpLogProto's types, e.g.
`_trainable_variables`), FLOPs (from the OpLogProto) and Python call stack — and the
options (`Options`), parsed from the option dict as TensorFlow's `Options::FromProtoStr`
parses its OptionsProto, printed as its `ToString`.

Run-time statistics: TensorFlow fills times and memory from a RunMetadata's StepStats;
ndflow's Sessions never fill StepStats, so a step without them only counts as a step and
every node reports 0 runs, 0 micros and 0 bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ndflow.core import errors
from ndflow.core.shapes import TensorShape

ROOT = "_TFProfRoot"
SCOPE_PARENT = "_kTFScopeParent"
GRAPH_PARENT = "_TFGraphParent"
SHOWN = ("bytes", "micros", "params", "float_ops", "tensor_value", "device", "op_types",
         "occurrence", "input_shapes", "accelerator_micros", "cpu_micros", "peak_bytes",
         "residual_bytes", "output_bytes")
OUTPUTS = ("timeline", "stdout", "file", "pprof", "none")


class GraphNode:
    """One graph op as tfprof sees it (TFGraphNode)."""

    def __init__(self, name: str, op: str, node_id: int, shape=None, output_shapes=None,
                 device: str = "", graph_op=None):
        self.name, self.op, self.id = name, op, node_id
        self.shape = list(shape) if shape else []
        self.output_shapes = output_shapes or {}
        self.inputs: dict[int, str] = {}
        self.src_output_idx: dict[str, int] = {}
        self.op_types = {op}
        self.float_ops = 0
        self.trace = None  # [(file, lineno, function, line)], outermost first
        self.device = device
        self.graph_op = graph_op  # the graph's Operation (None for a view's parent nodes)
        self.nodes_map: dict | None = None

    def parameters(self) -> int:
        if not self.shape or any(d < 0 for d in self.shape):
            return 0
        n = 1
        for d in self.shape:
            n *= d
        return n

    def input_shapes(self) -> dict[int, list]:
        out = {}
        for idx, name in sorted(self.inputs.items()):
            shape = []
            src = self.nodes_map.get(name) if self.nodes_map is not None else None
            if src is not None and name in self.src_output_idx:
                shape = list(src.output_shapes.get(self.src_output_idx[name], []))
            out[idx] = shape
        return out


def _shape_vec(shape) -> list:
    """A shape as tfprof's int64 vector (ShapeProtoToVec): [] for an unknown rank, -1 for an
    unknown dim, [1] for a scalar."""
    if shape.dims is None:
        return []
    return [-1 if d is None else int(d) for d in shape.dims] or [1]


def nodes_from_graph(graph) -> dict[str, GraphNode]:
    """The graph's ops as GraphNodes keyed by name (TFStats::AddGraph)."""
    nodes: dict[str, GraphNode] = {}
    for op in graph.get_operations():
        if op.name in nodes:
            continue
        shape = op.attrs.get("shape")
        shape = _shape_vec(shape) if isinstance(shape, TensorShape) else None
        outs = {i: _shape_vec(t.shape) for i, t in enumerate(op.outputs)}
        node = GraphNode(op.name, op.type, len(nodes), shape, outs, op.device or "", op)
        for i, t in enumerate(op.inputs):
            node.inputs[i] = t.op.name
            node.src_output_idx[t.op.name] = t.value_index
        for j, c in enumerate(op.control_inputs):
            node.inputs[len(op.inputs) + j] = c.name
            node.src_output_idx[c.name] = 0
        nodes[op.name] = node
    for node in nodes.values():
        node.nodes_map = nodes
    return nodes


def apply_op_log(nodes: dict[str, GraphNode], op_log) -> bool:
    """Adds an OpLogProto's types, FLOPs and code traces (TFStats::AddOpLogProto); True
    when some entry has a trace."""
    has_trace = False
    if op_log is None:
        return False
    id_to_string = dict(op_log.id_to_string)
    for entry in op_log.log_entries:
        node = nodes.get(entry.name)
        if node is None:
            continue
        node.op_types.update(entry.types)
        if entry.float_ops:
            node.float_ops = entry.float_ops
        if entry.HasField("code_def"):
            has_trace = True
            if node.trace is None:
                node.trace = [(id_to_string.get(t.file_id, ""), t.lineno,
                               id_to_string.get(t.function_id, ""),
                               id_to_string.get(t.line_id, ""))
                              for t in entry.code_def.traces]
    return has_trace


@dataclass
class Options:
    """tfprof's options (tfprof_options.h), from the option dict."""

    max_depth: int = 10
    min_bytes: int = 0
    min_peak_bytes: int = 0
    min_residual_bytes: int = 0
    min_output_bytes: int = 0
    min_micros: int = 0
    min_accelerator_micros: int = 0
    min_cpu_micros: int = 0
    min_params: int = 0
    min_float_ops: int = 0
    min_occurrence: int = 0
    step: int = -1
    order_by: str = "name"
    account_type_regexes: list = field(default_factory=list)
    start_name_regexes: list = field(default_factory=list)
    trim_name_regexes: list = field(default_factory=list)
    show_name_regexes: list = field(default_factory=list)
    hide_name_regexes: list = field(default_factory=list)
    account_displayed_op_only: bool = False
    select: list = field(default_factory=list)  # sorted and unique, as TF's std::set
    output_type: str = "stdout"
    output_options: dict = field(default_factory=dict)

    _INTS = ("max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes",
             "min_output_bytes", "min_micros", "min_accelerator_micros", "min_cpu_micros",
             "min_params", "min_float_ops", "min_occurrence", "step")
    _LISTS = ("account_type_regexes", "start_name_regexes", "trim_name_regexes",
              "show_name_regexes", "hide_name_regexes")

    @classmethod
    def from_dict(cls, options: dict) -> Options:
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict of profiler options (see "
                            f"ProfileOptionBuilder), got {type(options).__name__}")
        o = cls()
        for k in cls._INTS:
            setattr(o, k, int(options.get(k, 10 if k == "max_depth" else
                                          (-1 if k == "step" else 0))))
        o.order_by = str(options.get("order_by", "name"))
        for k in cls._LISTS:
            setattr(o, k, [str(r) for r in options.get(k, [])])
        o.account_displayed_op_only = bool(options.get("account_displayed_op_only", False))
        o.select = sorted({str(s) for s in options.get("select", [])})
        output = options.get("output", "stdout")
        dump = options.get("dump_to_file", "")
        o.output_type, o.output_options = parse_output(str(output))
        if dump:
            o.output_type, o.output_options = "file", {"outfile": str(dump)}
        return o

    def has(self, shown: str) -> bool:
        return shown in self.select

    def to_string(self) -> str:
        rows = [(f"-{k}", getattr(self, k)) for k in self._INTS]
        rows.append(("-order_by", self.order_by))
        rows += [(f"-{k}", ",".join(getattr(self, k))) for k in self._LISTS]
        rows.append(("-account_displayed_op_only",
                     "true" if self.account_displayed_op_only else "false"))
        rows.append(("-select", ",".join(self.select)))
        kv = ",".join(f"{k}={v}" for k, v in sorted(self.output_options.items()))
        rows.append(("-output", f"{self.output_type}:{kv}"))
        return "".join(f"{k:<28}{v}\n" for k, v in rows)


def parse_output(spec: str) -> tuple[str, dict]:
    """`-output type:key=value,...` (tfprof_options.cc ParseOutput); InvalidArgumentError
    with TensorFlow's messages for an unknown type or option."""
    if not spec:
        return "stdout", {}
    kind, _, rest = spec.partition(":")
    if kind not in OUTPUTS:
        raise errors.InvalidArgumentError(
            None, None, f"E.g. Unknown output type: {kind}, Valid types: "
            f"{','.join(sorted(OUTPUTS))}\n")
    opts = {}
    for kv in (p for p in rest.split(",") if p):
        parts = [p for p in kv.split("=") if p]
        if len(parts) < 2:
            raise errors.InvalidArgumentError(
                None, None, "Visualize format: -output timeline:key=value,key=value,...")
        if kind in ("stdout", "none") or parts[0] != "outfile":
            raise errors.InvalidArgumentError(
                None, None, f"Unrecognized options {parts[0]} for output_type: {kind}\n")
        opts[parts[0]] = "=".join(parts[1:])
    if kind in ("timeline", "file", "pprof") and "outfile" not in opts:
        raise errors.InvalidArgumentError(
            None, None, f"Missing required output_options for {kind}\n"
            f"E.g. -output {kind}:outfile=...\n")
    return kind, opts


def _in_thousands(n: int, units: tuple) -> str:
    """tfprof's n: as it is with units[0] below 1000, else divided by the largest power of
    1000 (up to len(units) - 1) it reaches, two decimals, with that power's unit."""
    if n < 1000:
        return f"{n}{units[0]}"
    k = 1
    while k + 1 < len(units) and n >= 1000 ** (k + 1):
        k += 1
    return f"{n / float(1000 ** k):.2f}{units[k]}"


def format_number(n: int) -> str:
    return _in_thousands(n, ("", "k", "m", "b"))


def format_time(micros: int) -> str:
    return _in_thousands(micros, ("us", "ms", "sec"))


def format_memory(b: int) -> str:
    return _in_thousands(b, ("B", "KB", "MB"))


_DOC_CMD = {
    "scope": "scope: The nodes in the model graph are organized by their names, which is "
             "hierarchical like filesystem.",
    "code": "code: When python trace is available, the nodes are python lines and their are "
            "organized by the python call stack.",
    "op": "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes "
          "belonging to the same type are aggregated together.",
}
_ACC = ("accelerator execution time: Time spent executing on the accelerator. This is "
        "normally measured by the actual hardware library.")
_CPU = ("cpu execution time: The time from the start to the end of the operation. It's the "
        "sum of actual cpu run time plus the time that it spends waiting if part of "
        "computation is launched asynchronously.")
_DOC_SELECT = {
    "bytes": "requested bytes: The memory requested by the operation, accumulatively.",
    "micros": "total execution time: Sum of accelerator execution time and cpu execution "
              "time.\n" + _CPU + "\n" + _ACC,
    "params": "param: Number of parameters (in the Variable).",
    "float_ops": "flops: Number of float operations. Note: Please read the implementation "
                 "for the math behind it.",
    "tensor_value": "tensor_value: Not supported now.",
    "device": "device: which device is placed on.",
    "op_types": "op_types: The attributes of the operation, includes the Kernel name device "
                "placed on and user-defined strings.",
    "occurrence": "occurrence: The number of times it occurs",
    "input_shapes": "input shape: The shape of input tensors",
    "accelerator_micros": _ACC,
    "cpu_micros": _CPU,
    "peak_bytes": "peak bytes: The peak amount of memory that the operation is holding at "
                  "some point.",
    "residual_bytes": "residual bytes: The memory not de-allocated after the operation "
                      "finishes.",
    "output_bytes": "output bytes: The memory that is output from the operation (not "
                    "necessarilty allocated by the operation)",
}


def query_doc(cmd: str, opts: Options) -> str:
    """The report's "Doc:" block (tfprof_utils.cc QueryDoc)."""
    cmd_help = _DOC_CMD["scope" if cmd == "graph" else cmd]
    helps = [_DOC_SELECT.get(s, "Unknown select: " + s) for s in opts.select]
    return "\nDoc:\n" + cmd_help + "\n" + "\n".join(helps) + "\n\n"


def short_file(path: str) -> str:
    return os.path.basename(path)
