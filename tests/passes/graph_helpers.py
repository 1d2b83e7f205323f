"""Shared helpers for pass tests: op counts, running a graph, and test-only ops.

Test-only OpDefs have unique `NdflowTest*` names so they never clash with real ops:
- `NdflowTestCounter` (stateful): `x + n`, where n counts the kernel's calls;
- `NdflowTestSplit2`: splits a vector into its two halves (two outputs);
- `NdflowTestFails`: a stateless op whose kernel always raises;
- `NdflowTestShape`: its input's shape (int32), statically known when the shape is.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.kernels.registry import kernel
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import REGISTRY, op_def
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext


def _split_shape(ctx):
    s = ctx.shapes[0]
    half = None if s.rank is None or s[0] is None else s[0] // 2
    return [TensorShape([half]), TensorShape([half])]


if "NdflowTestCounter" not in REGISTRY:
    Counter_ = op_def("NdflowTestCounter", inputs=["x: T"], outputs=["y: T"],
                      attrs=["T: {float, double, int32}"], shape=lambda ctx: [ctx.shapes[0]],
                      stateful=True)
    Split2 = op_def("NdflowTestSplit2", inputs=["x: T"], outputs=["a: T", "b: T"],
                    attrs=["T: {float, double, int32}"], shape=_split_shape)
    Fails = op_def("NdflowTestFails", inputs=["x: T"], outputs=["y: T"],
                   attrs=["T: {float, double, int32}"], shape=lambda ctx: [ctx.shapes[0]])

    StaticShape = op_def("NdflowTestShape", inputs=["x: T"], outputs=["y: int32"],
                         attrs=["T: {float, double, int32}"],
                         shape=lambda ctx: [TensorShape([ctx.shapes[0].rank])])
    StaticShape.constant_value = lambda t: (
        np.array(t.op.inputs[0].shape.as_list(), np.int32)
        if t.op.inputs[0].shape.is_fully_defined() else None)

    @kernel(StaticShape)
    def _static_shape(node):
        return lambda x: torch.tensor(list(x.shape), dtype=torch.int32)

    @kernel(Counter_)
    def _counter(node):
        calls = [0]

        def run(x):
            calls[0] += 1
            return x + calls[0]
        return run

    @kernel(Split2)
    def _split2(node):
        return lambda x: tuple(torch.chunk(x, 2))

    @kernel(Fails)
    def _fails(node):
        def run(x):
            raise RuntimeError("deliberate kernel failure")
        return run
else:  # re-imported under another module name
    Counter_ = REGISTRY["NdflowTestCounter"]
    Split2 = REGISTRY["NdflowTestSplit2"]
    Fails = REGISTRY["NdflowTestFails"]
    StaticShape = REGISTRY["NdflowTestShape"]


def counter(x, name=None):
    return apply_op(Counter_, [x], name=name).outputs[0]


def split2(x, name=None):
    return apply_op(Split2, [x], name=name).outputs


def fails(x, name=None):
    return apply_op(Fails, [x], name=name).outputs[0]


def static_shape(x, name=None):
    return apply_op(StaticShape, [x], name=name).outputs[0]


def op_counts(graph: Graph) -> Counter:
    return Counter(op.type for op in graph.get_operations())


def snapshot(graph: Graph) -> list:
    """Everything a pass could mutate: names, types, inputs, controls, attrs, shapes."""
    return [(op.name, op.type, [t.name for t in op.inputs], [c.name for c in op.control_inputs],
             sorted(op.attrs), [str(t.shape) for t in op.outputs], op.device)
            for op in graph.get_operations()]


def run_graph(graph: Graph, fetches, feeds=None, targets=(), ctx=None) -> list:
    """Runs `graph` through a Plan: fetch and feed by tensor name; NumPy values out."""
    feeds = feeds or {}
    feed_tensors = [graph.get_tensor_by_name(n) for n in feeds]
    plan = Plan(graph, feed_tensors, [graph.get_tensor_by_name(n) for n in fetches],
                [graph.get_operation_by_name(n) for n in targets], ctx or RuntimeContext())
    args = [torch.as_tensor(np.asarray(v, dtype=t.dtype.np_dtype))
            for v, t in zip(feeds.values(), feed_tensors)]
    return [np.asarray(v) for v in plan.run(args)]
