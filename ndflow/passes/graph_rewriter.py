"""Building a pass's output graph from its input graph, op by op, in creation order.

Passes never mutate their input: they walk the input's operations in creation order (which
is a topological order and the program order of stateful ops) and emit into a fresh graph:

    rw = GraphRewriter(graph)
    for op in graph.get_operations():
        if keep(op):
            rw.copy_op(op)                       # same name, attrs, device; inputs mapped
        else:
            rw.replace_outputs(op, [other_tensor])
    return rw.graph

Every name of the input graph is reserved in the output up front, so `fresh_name` never
collides with a copied op and later passes can still use `graph.unique_name`.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.ops.constant_op import Const

# What tf.function(jit_compile=True) and jit_scope() put on their ops
# (passes/mark_for_compilation.py)
_COMPILATION_ATTRS = ("_XlaMustCompile", "_XlaCompile", "_XlaScope",
                      "_XlaSeparateCompiledGradients")


class GraphRewriter:
    """Emits a new graph; `map` takes input-graph tensors/ops to output-graph ones."""

    def __init__(self, source: Graph):
        self.source = source
        self.graph = Graph()
        self.graph.seed = source.seed
        self.graph.record_tracebacks = False  # ops keep where the user made their originals
        self.map: dict = {}
        for op in source.get_operations():
            self.graph.unique_name(op.name)

    def fresh_name(self, base: str) -> str:
        """A node name based on `base` used by no op of the input or output graph."""
        while True:
            name = self.graph.unique_name(base)
            try:
                self.graph.get_operation_by_name(name)
            except KeyError:
                return name

    def mapped(self, t: SymbolicTensor) -> SymbolicTensor:
        return self.map[t]

    def add_op(self, op_def, inputs, attrs: dict, output_specs, name: str,
               control_inputs=(), device: str = "") -> Operation:
        """Creates an op in the output graph (no scopes apply: the graph is fresh)."""
        controls = []
        for c in control_inputs:
            if c not in controls:
                controls.append(c)
        attrs = dict(attrs)
        original = self.source._by_name.get(name)  # a fused op is named after an op it replaces
        if original is not None:   # and is compiled as that op was asked to be (jit_compile)
            for key in _COMPILATION_ATTRS:
                if key in original.attrs and key not in attrs:
                    attrs[key] = original.attrs[key]
        new = self.graph.create_op(op_def, list(inputs), attrs, list(output_specs),
                                   name, controls, device or "")
        if original is not None:
            new._traceback = original._traceback
        return new

    def scalar_const(self, value, dtype, base: str, device: str = "") -> SymbolicTensor:
        """A new scalar Const of `dtype` (bfloat16 held as float32, as Const holds it)."""
        np_type = np.float32 if dtype == dtypes.bfloat16 else dtype.as_numpy_dtype
        return self.add_op(Const, [], {"value": np.asarray(value, np_type), "dtype": dtype},
                           [(dtype, TensorShape([]))], self.fresh_name(base), (),
                           device).outputs[0]

    def copy_op(self, op: Operation, inputs=None, control_inputs=None,
                name: str | None = None) -> Operation:
        """Copies `op` with its inputs and control inputs mapped (or the ones given)."""
        if inputs is None:
            inputs = [self.map[t] for t in op.inputs]
        if control_inputs is None:
            control_inputs = [self.map[c] for c in op.control_inputs]
        new = self.add_op(op.op_def, inputs, op.attrs, [(t.dtype, t.shape) for t in op.outputs],
                          name or op.name, control_inputs, op.device)
        self.map[op] = new
        self.map.update(zip(op.outputs, new.outputs))
        return new

    def replace_outputs(self, op: Operation, tensors, control_op: Operation | None = None):
        """`op` is not copied: its outputs are `tensors` and its control role `control_op`."""
        self.map.update(zip(op.outputs, tensors))
        if control_op is not None:
            self.map[op] = control_op
