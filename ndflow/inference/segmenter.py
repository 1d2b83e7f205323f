"""Segments of a frozen inference graph that an engine can take, and the converted GraphDef
in which each segment is one `OnnxEngineOp` (TF-TRT's segmenter and its TRTEngineOps).

A segment is a run of consecutive convertible ops in the graph's topological order, Consts
aside (a segment embeds the constants it reads). A contiguous run of a topological order is
convex — every path between two of its ops stays inside it — so replacing it with one op
never creates a cycle. An op the exporter cannot take ends the run and stays in ndflow, as
does a run shorter than `minimum_segment_size`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensorboard.compat.proto import graph_pb2

from ndflow.core import dtypes, logging
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph_def import shape_to_proto
from ndflow.inference.engine_op import engine_session
from ndflow.inference.onnx_export import (
    UnsupportedOpError,
    check_model,
    graph_to_onnx,
    is_convertible,
)
from ndflow.ops.graph_def_nodes import parse_tensor_name

_ENGINE_DTYPES = {dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64,
                  dtypes.bool, dtypes.int8, dtypes.uint8}
_NEVER = ("Placeholder", "NoOp", "Const")


@dataclass
class Segment:
    name: str
    ops: list
    inputs: list = field(default_factory=list)    # SymbolicTensors read from outside
    outputs: list = field(default_factory=list)   # SymbolicTensors read outside (or fetched)
    model: object = None                          # the ONNX ModelProto


def _engine_can_take(op, excluded: set) -> bool:
    if op.name in excluded or op.type in _NEVER or not is_convertible(op):
        return False
    if op.control_inputs or op.control_outputs:
        return False
    return all(t.dtype in _ENGINE_DTYPES for t in list(op.inputs) + list(op.outputs))


def _runs(graph, excluded: set) -> tuple:
    """(runs of engine-compatible ops, ops left in ndflow)."""
    runs, current, left = [], [], []
    for op in graph.get_operations():
        if op.type == "Const":
            continue
        if _engine_can_take(op, excluded):
            current.append(op)
            continue
        if op.type not in ("Placeholder", "NoOp"):
            left.append(op)
        if current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs, left


def _boundaries(seg: Segment, fetched: set) -> None:
    members = set(seg.ops)
    seen_in, seen_out = set(), set()
    for op in seg.ops:
        for t in op.inputs:
            if t.op not in members and t.op.type != "Const" and t.name not in seen_in:
                seen_in.add(t.name)
                seg.inputs.append(t)
        for t in op.outputs:
            outside = any(c not in members for c in t.consumers())
            if (outside or t.name in fetched) and t.name not in seen_out:
                seen_out.add(t.name)
                seg.outputs.append(t)


def find_segments(graph, outputs: list, minimum_segment_size: int, opset: int) -> tuple:
    """(segments with their ONNX models, ops left in ndflow). An op whose attributes the
    exporter rejects is left out and the segmentation redone."""
    excluded: set = set()
    fetched = {t.name for t in outputs}
    while True:
        runs, left = _runs(graph, excluded)
        segments, retry = [], False
        for run in runs:
            if minimum_segment_size == -1 or len(run) < minimum_segment_size:
                left.extend(run)
                continue
            seg = Segment(f"OnnxEngineOp_{len(segments):03d}", run)
            _boundaries(seg, fetched)
            try:
                seg.model = graph_to_onnx(
                    seg.inputs, seg.outputs, {}, [f"input_{i}" for i in range(len(seg.inputs))],
                    [f"output_{i}" for i in range(len(seg.outputs))], opset=opset,
                    graph_name=seg.name)
            except UnsupportedOpError as e:
                excluded.add(e.op.name if e.op is not None else "")
                retry = True
                break
            problem = engine_rejects(seg.model)
            culprit = _named_in(problem, run) if problem else None
            if culprit is not None:  # the engine lacks this op (for these types): skip it
                logging.warning(f"{culprit.name} ({culprit.type}) stays in ndflow: {problem}")
                excluded.add(culprit.name)
                retry = True
                break
            if problem:  # as TF-TRT falls back to the native segment when an engine fails
                logging.warning(f"{seg.name} ({len(run)} ops) stays in ndflow: {problem}")
                left.extend(run)
                continue
            segments.append(seg)
        if not retry:
            return segments, left


def _named_in(message: str, run: list):
    """The op of `run` whose ONNX node the message names (nodes are named node/<op name>...),
    the longest name winning; None if none is named."""
    named = [op for op in run if f"node/{op.name}" in message]
    return max(named, key=lambda op: len(op.name)) if named else None


def engine_rejects(model) -> str | None:
    """Why the engine cannot take `model` (the onnx checker's or ONNX Runtime's complaint),
    or None. Building the session here also caches it for the converted function's calls."""
    try:
        check_model(model)
        engine_session(model.SerializeToString())
    except InvalidArgumentError as e:
        return str(e)
    except Exception as e:  # ONNX Runtime's own exception types
        return f"ONNX Runtime: {type(e).__name__}: {e}"
    return None


def _tensor_key(name: str) -> str:
    op, idx = parse_tensor_name(name)
    return f"{op}:{idx}"


def converted_graph_def(graph, segments: list, precision: str) -> tuple:
    """`graph`'s GraphDef with each segment replaced by its OnnxEngineOp, and the map from a
    replaced tensor's name to the engine output carrying it."""
    gd = graph.as_graph_def()
    replaced = {op.name: seg for seg in segments for op in seg.ops}
    remap = {}
    for seg in segments:
        for j, t in enumerate(seg.outputs):
            remap[f"{t.op.name}:{t.value_index}"] = f"{seg.name}:{j}" if j else seg.name
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(gd.versions)
    out.library.CopyFrom(gd.library)
    emitted = set()
    for node in gd.node:
        seg = replaced.get(node.name)
        if seg is not None:
            if seg.name not in emitted:  # where the segment's first op was: inputs exist
                emitted.add(seg.name)
                _engine_node(out.node.add(), seg, remap, precision)
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(_rewired(i, remap, replaced) for i in node.input)
    return out, {k: v if ":" in v else f"{v}:0" for k, v in remap.items()}


def _rewired(inp: str, remap: dict, replaced: dict) -> str:
    if inp.startswith("^"):
        seg = replaced.get(inp[1:])
        return f"^{seg.name}" if seg is not None else inp
    return remap.get(_tensor_key(inp), inp)


def _engine_node(node, seg: Segment, remap: dict, precision: str) -> None:
    node.name, node.op = seg.name, "OnnxEngineOp"
    node.input.extend(remap.get(f"{t.op.name}:{t.value_index}", t.name) for t in seg.inputs)
    node.attr["Tin"].list.type.extend(t.dtype.as_datatype_enum for t in seg.inputs)
    node.attr["Tout"].list.type.extend(t.dtype.as_datatype_enum for t in seg.outputs)
    node.attr["serialized_segment"].s = seg.model.SerializeToString()
    node.attr["segment_name"].s = seg.name.encode()
    node.attr["precision_mode"].s = precision.encode()
    node.attr["output_shapes"].list.shape.extend(shape_to_proto(t.shape) for t in seg.outputs)
