"""`FuncGraph`: the graph a `tf.function` is traced into, plus nested-structure helpers.

A FuncGraph's inputs are placeholders: first one per tensor argument, then one per captured
value. `apply_op` calls `graph.capture(t)` when an op built in this graph uses an eager
tensor (a constant or a variable's resource handle) or a tensor of an outer graph; the
capture becomes a placeholder fed with the captured value at every call (TF's by-value
captures of tensors, by-reference captures of variables through their handle).
"""

from __future__ import annotations

from ndflow.core import context, devices
from ndflow.core.graph import Graph, Operation, SymbolicTensor
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.apply import capture_into
from ndflow.ops.array_core import Placeholder
from ndflow.ops.forward_copies import ForwardCopy


class FuncGraph(Graph):
    """A graph being (or having been) traced from a Python function."""

    def __init__(self, name: str, outer_graph: Graph | None = None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        # TF2 semantics (`t == 0` elementwise) in functions traced from eager code and in the
        # bodies of those functions' control flow; TF1 graphs keep identity.
        self.elementwise_equality = outer_graph is None or outer_graph.elementwise_equality
        self.arg_inputs: list[SymbolicTensor] = []
        self._captures: dict[int, tuple] = {}   # id(external) -> (external, placeholder)
        self._externals: dict[int, tuple] = {}  # id(placeholder) -> (placeholder, external)
        self.outputs: list[SymbolicTensor] = []
        self.structured_outputs = None
        self.variables: list = []               # variables read or written while tracing

    # -- inputs ------------------------------------------------------------------------------
    def add_placeholder(self, dtype, shape, name: str) -> SymbolicTensor:
        """A Placeholder at the graph root, outside any control-dependency scope."""
        saved_deps, saved_scope = self._control_deps, self._name_stack
        self._control_deps, self._name_stack = [], ""
        try:
            op = self.create_op(Placeholder, [], {"dtype": dtype, "shape": TensorShape(shape)},
                                [(dtype, TensorShape(shape))], self.unique_name(name),
                                device="")
        finally:
            self._control_deps, self._name_stack = saved_deps, saved_scope
        return op.outputs[0]

    def capture(self, tensor, name: str | None = None) -> SymbolicTensor:
        """The placeholder standing for `tensor` (an eager tensor or an outer-graph tensor)."""
        if isinstance(tensor, SymbolicTensor) and tensor.graph is self:
            return tensor
        entry = self._captures.get(id(tensor))
        if entry is not None:
            return entry[1]
        if not isinstance(tensor, (EagerTensor, SymbolicTensor)):
            raise TypeError(f"Cannot capture {tensor!r} in function '{self.name}'.")
        shape = tensor.shape if tensor.dtype.name != "resource" else TensorShape(())
        ph = self.add_placeholder(tensor.dtype, shape, name or "capture")
        self._captures[id(tensor)] = (tensor, ph)
        return ph

    def external_of(self, placeholder) -> Tensor | None:
        """The value `placeholder` stands for, if it is a capture (TF copies a captured
        handle's shape and dtype onto its placeholder, handle data, from it)."""
        entry = self._externals.get(id(placeholder))
        if entry is None or entry[0] is not placeholder or \
                self._captures.get(id(entry[1]), (None, None))[1] is not placeholder:
            # captures are also set directly (control flow, pruning): index them again
            self._externals = {id(ph): (ph, ext) for ext, ph in self._captures.values()}
            entry = self._externals.get(id(placeholder))
        return entry[1] if entry is not None and entry[0] is placeholder else None

    def placeholder_of(self, tensor) -> SymbolicTensor | None:
        """The placeholder standing for captured `tensor`, or None if it is not captured."""
        entry = self._captures.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    @property
    def captures(self) -> list:
        """(external value, internal placeholder) pairs, in capture order."""
        return list(self._captures.values())

    @property
    def external_captures(self) -> list:
        return [e for e, _ in self._captures.values()]

    @property
    def internal_captures(self) -> list:
        return [p for _, p in self._captures.values()]

    @property
    def inputs(self) -> list:
        return self.arg_inputs + self.internal_captures

    def __repr__(self):
        return f"FuncGraph(name={self.name}, ops={len(self._ops)})"


def function_graph(name: str) -> FuncGraph:
    """A FuncGraph to trace a function into, in the current context: the outer graph's seed
    and device scope, or eagerly the global seed and the eager device."""
    outer = None if context.executing_eagerly() else context.get_default_graph()
    fg = FuncGraph(name, outer)
    if outer is not None:
        fg.seed = outer.seed
        fg._device_stack = [devices.DeviceSpec.from_string(outer._current_device())]
    else:
        fg.seed = context.state().seed
        if context.eager_device():
            fg._device_stack = [devices.DeviceSpec.from_string(context.eager_device())]
    return fg


class TraceRecorder:
    """Stands in for the tapes while tracing: records which variables the function uses."""

    __slots__ = ("graph",)

    def __init__(self, graph: FuncGraph):
        self.graph = graph

    def record(self, op) -> None:
        pass

    def variable_accessed(self, var) -> None:
        if not any(v is var for v in self.graph.variables):
            self.graph.variables.append(var)

    def watch(self, tensor) -> None:
        pass


class tracing_scope:  # noqa: N801 - used like a function: `with tracing_scope(fg):`
    """Builds ops into `graph` with outer tapes hidden (a fresh tape stack for the trace)."""

    def __init__(self, graph: FuncGraph):
        self.graph = graph
        self._scope = None

    def __enter__(self):
        st = context.state()
        self._saved = (st.tapes, st.recording_paused)
        st.tapes = [TraceRecorder(self.graph)]
        st.recording_paused = 0
        self._scope = context.graph_scope(self.graph)
        self._scope.__enter__()
        return self.graph

    def __exit__(self, *exc):
        self._scope.__exit__(*exc)
        st = context.state()
        st.tapes, st.recording_paused = self._saved
        return False


def inline_graph(fg: FuncGraph, args: list, outputs: list, other: dict | None = None) -> list:
    """Copies `fg`'s ops into the default graph with its inputs bound; returns `outputs` mapped.

    Argument placeholders take `args`; capture placeholders take their external values
    (captured again by the current graph when it is itself a FuncGraph; `other` maps traced
    variable arguments to the call's, whose handles replace theirs). The copied ops are
    recorded on the active tapes, so tapes and `tf.gradients` see through function calls;
    their gradient functions see `fg`'s tensors as the copies (ops/forward_copies.py).
    """
    g = context.get_default_graph()

    def bind(t):
        return t if isinstance(t, SymbolicTensor) and t.graph is g else capture_into(g, t)

    mapping: dict = {}
    for ph, t in zip(fg.arg_inputs, args):
        mapping[ph] = bind(t)
    for ext, ph in fg.captures:
        mapping[ph] = bind(other.get(id(ext), ext) if other else ext)
    tapes = context.active_tapes()
    for var in fg.variables:
        var = other.get(id(var), var) if other else var
        for tape in tapes:
            tape.variable_accessed(var)
    copies = ForwardCopy(fg, mapping)
    # the scope of the copies: the function's name, less the leading underscores an op name
    # may not start with (`_helper`, a lambda's `_lambda_`)
    with g.name_scope(fg.name.lstrip("_") or "function"):
        for op in fg.get_operations():
            if op.type == "Placeholder" and op.outputs[0] in mapping:
                continue
            new = g.create_op(op.op_def, [mapping[t] for t in op.inputs], op.attrs,
                              [(t.dtype, t.shape) for t in op.outputs], g.unique_name(op.name),
                              [mapping[c] for c in op.control_inputs], op.device or None)
            new.forward_copy = copies.of(op)
            mapping[op] = new
            mapping.update(zip(op.outputs, new.outputs))
            for tape in tapes:
                tape.record(new)
    return [mapping[t] for t in outputs]


# -- nested structures -----------------------------------------------------------------------

def is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def is_tensor_like(x) -> bool:
    return isinstance(x, Tensor)


def is_operation(x) -> bool:
    return isinstance(x, Operation)
