"""Encapsulation: each marked cluster (`_XlaCluster=<name>`, set by mark_for_compilation)
becomes ONE `_XlaClusterCall` node whose `function` attr holds the cluster's ops.

    y = relu(x @ w + b) * 2          (4 ops in cluster_0)
    ->  y = _XlaClusterCall(x, w, b, function=cluster_0, cluster_name="cluster_0")

- Inputs: the tensors the cluster reads from outside, in the order its ops first use them;
  each becomes a placeholder of the function graph, except small constants (<= 16 elements,
  e.g. a scalar another cluster holds), which are copied in (TF's
  CloneConstantsForBetterClustering) so the compiler sees their values.
- Outputs: the cluster's tensors read outside it or fetched; fetches are renamed to the call's
  outputs on the PassContext, so the caller still finds them.
- Control edges: into the cluster -> into the call; out of the cluster -> out of the call;
  between members they stay inside the function.
- The function's ops keep `_XlaAlreadyClustered`, so compiling the fallback never clusters
  them again. The call runs on the cluster's device (GPU over others, as TF picks).
- Ops are emitted in a topological order of the contracted graph that keeps creation order
  wherever it can (a cluster takes the position of its first member when its inputs allow)
  and always keeps the creation order of stateful ops (ndflow's program order).
"""

from __future__ import annotations

import heapq

import numpy as np

from ndflow.core.devices import DeviceSpec
from ndflow.core.graph import Graph, Operation
from ndflow.core.shapes import TensorShape
from ndflow.ops.array_core import Placeholder
from ndflow.ops.function_library import FunctionGraph
from ndflow.ops.xla_ops import XlaClusterCall
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.mark_for_compilation import (
    CLUSTER_ATTR,
    MUST_COMPILE_ATTR,
    program_order_edges,
)
from ndflow.passes.pass_context import PassContext

SMALL_CONSTANT_ELEMENTS = 16


def _clusters(graph: Graph) -> dict:
    out: dict = {}
    for op in graph.get_operations():
        name = op.attrs.get(CLUSTER_ATTR)
        if isinstance(name, str):
            out.setdefault(name, []).append(op)
    return out


def _emission_order(graph: Graph, unit_of: dict) -> list:
    """Units (ops, or cluster names) in a topological order, creation order first."""
    ops = graph.get_operations()
    key = {}
    deps: dict = {}
    users: dict = {}
    for op in ops:
        u = unit_of.get(op, op)
        key.setdefault(u, op._id)
        deps.setdefault(u, set())
        users.setdefault(u, set())
    order_deps: dict = {}
    for before, after in program_order_edges(ops):
        order_deps.setdefault(after, []).append(before)
    for op in ops:
        u = unit_of.get(op, op)
        for src in [t.op for t in op.inputs] + op.control_inputs + order_deps.get(op, []):
            s = unit_of.get(src, src)
            if s != u and s not in deps[u]:
                deps[u].add(s)
                users[s].add(u)
    pending = {u: len(d) for u, d in deps.items()}
    heap = [(key[u], i, u) for i, u in enumerate(deps) if pending[u] == 0]
    heapq.heapify(heap)
    order = []
    tie = len(heap)
    while heap:
        _, _, u = heapq.heappop(heap)
        order.append(u)
        for v in users[u]:
            pending[v] -= 1
            if pending[v] == 0:
                tie += 1
                heapq.heappush(heap, (key[v], tie, v))
    if len(order) != len(deps):
        raise AssertionError("Internal: clustering created a cycle between clusters")
    return order


def _call_device(members: list) -> str:
    """GPU over any other device over CPU (TF's pick); '' when no member is placed."""
    placed = [op.device for op in members if op.device]
    for kind in ("GPU", None, "CPU"):
        for d in placed:
            t = DeviceSpec.from_string(d).device_type or "CPU"
            if (kind is None and t not in ("GPU", "CPU")) or t == kind:
                return d
    return ""


def _small_constant(t) -> bool:
    """A Const small enough to copy into each cluster that reads it rather than pass it in
    (TF's CloneConstantsForBetterClustering: at most 16 elements), so the compiler sees its
    value."""
    op = t.op
    value = op.attrs.get("value")
    return op.type == "Const" and not op.control_inputs and value is not None and \
        getattr(value, "dtype", None) is not None and value.dtype != object and \
        np.size(value) <= SMALL_CONSTANT_ELEMENTS


def _build_function(name: str, members: list, inputs: list, outputs: list,
                    constants: list) -> FunctionGraph:
    fg = FunctionGraph(name)
    for op in members:
        fg.unique_name(op.name)
    mapping: dict = {}
    for t in constants:
        op = t.op
        new = fg.create_op(op.op_def, [], dict(op.attrs), [(t.dtype, t.shape)],
                           fg.unique_name(op.name), device=op.device)
        mapping[t] = new.outputs[0]
    for t in inputs:
        arg = fg.unique_name(f"{t.op.name}_{t.value_index}_arg".replace("/", "_"))
        ph = fg.create_op(Placeholder, [], {"dtype": t.dtype, "shape": TensorShape(t.shape)},
                          [(t.dtype, t.shape)], arg, device="")
        fg.arg_inputs.append(ph.outputs[0])
        mapping[t] = ph.outputs[0]
    inside = set(members)
    for op in members:
        attrs = {k: v for k, v in op.attrs.items() if k != CLUSTER_ATTR}  # not re-encapsulated
        new = fg.create_op(op.op_def, [mapping[t] for t in op.inputs], attrs,
                           [(t.dtype, t.shape) for t in op.outputs], op.name,
                           [mapping[c] for c in op.control_inputs if c in inside], op.device)
        new.gradient_override = op.gradient_override
        mapping[op] = new
        mapping.update(zip(op.outputs, new.outputs))
    fg.outputs = [mapping[t] for t in outputs]
    return fg


def encapsulate_clusters(graph: Graph, ctx: PassContext) -> Graph:
    """Replaces each `_XlaCluster` group by one `_XlaClusterCall` (see module doc)."""
    clusters = _clusters(graph)
    if not clusters:
        return graph
    unit_of = {op: name for name, members in clusters.items() for op in members}
    fetched = ctx.fetched_tensor_names()
    targets = {ctx.current_name(n) for n in ctx.targets}
    rw = GraphRewriter(graph)
    for unit in _emission_order(graph, unit_of):
        if isinstance(unit, Operation):
            rw.copy_op(unit)
            continue
        members = clusters[unit]
        inside = set(members)
        inputs, constants, outputs, controls = [], [], [], []
        for op in members:
            for t in op.inputs:
                if t.op in inside or t in inputs or t in constants:
                    continue
                (constants if _small_constant(t) else inputs).append(t)
            for c in op.control_inputs:
                if c not in inside and rw.map[c] not in controls:
                    controls.append(rw.map[c])
            for t in op.outputs:
                if t.name in fetched or any(u not in inside for u in t.consumers()):
                    outputs.append(t)
        fg = _build_function(unit, members, inputs, outputs, constants)
        call = rw.add_op(
            XlaClusterCall, [rw.map[t] for t in inputs],
            {"Tin": [t.dtype for t in inputs], "Tout": [t.dtype for t in outputs],
             "function": fg, "cluster_name": unit,
             "must_compile": any(op.attrs.get(MUST_COMPILE_ATTR) is True for op in members)},
            [(t.dtype, t.shape) for t in outputs], rw.fresh_name(unit), controls,
            _call_device(members))
        for t, new in zip(outputs, call.outputs):
            rw.map[t] = new
            if t.name in fetched:
                ctx.rename(t.name, new.name)
        for op in members:
            rw.map[op] = call
            if op.name in targets:   # a target inside runs when its cluster's call does
                ctx.rename(op.name, call.name)
    return rw.graph
