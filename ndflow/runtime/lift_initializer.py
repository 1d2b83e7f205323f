"""Lifting a variable's initial value out of a function being traced.

`tf.Variable(t)` inside a `tf.function`, where `t` was computed in the function graph
(`tf.Variable(tf.random.uniform([n, 1]))` on the first call), is initialized as TensorFlow's
UnliftedInitializerVariable is: the ops that compute `t` are copied out of the function
graph into a graph of their own (TF's lift_to_graph) and run once, eagerly, so the variable
holds a value before the function's real trace reads it. A value that depends on the
function's arguments cannot be lifted: the variable starts as zeros and the function's first
call assigns the value (runtime/function.py; TensorFlow guards such an initializer with a
`cond` on the variable being initialized).
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.graph import SymbolicTensor
from ndflow.core.scopes import init_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.runtime.concrete_function import OutputSlot
from ndflow.runtime.func_graph import FuncGraph
from ndflow.runtime.wrap_function import (
    UnliftableError,
    VariableHolder,
    WrappedFunction,
    _copy_subgraph,
)


def traced_initial_value(value, dtype=None):
    """A callable initial value's tensor, computed in the function graph being traced, as TF's
    UnliftedInitializerVariable calls it (its random ops take the graph's op seeds); else
    `value`."""
    if not callable(value) or not isinstance(context.get_default_graph(), FuncGraph) or \
            context.executing_eagerly():
        return value
    return convert_to_tensor(value(), dtype=dtype)


def in_function_graph(value) -> bool:
    """Whether `value` is a tensor of a function graph, with a fully defined shape."""
    return isinstance(value, SymbolicTensor) and isinstance(value.graph, FuncGraph) and \
        value.shape.is_fully_defined()


def lift_initial_value(value):
    """`value`, computed eagerly when it is a liftable tensor of a function graph; else
    `value` itself (a callable, an eager tensor or a Python value is used as given)."""
    if not isinstance(value, SymbolicTensor) or not isinstance(value.graph, FuncGraph):
        return value
    graph = value.graph
    try:
        lifted, mapping = _copy_subgraph(graph, "initializer", [], [value], [])
    except UnliftableError:
        return value
    # a capture of an outer graph's tensor (a nested function) has no value to run with
    if any(isinstance(ext, SymbolicTensor) for ext in lifted.external_captures):
        return value
    lifted.outputs = [mapping[value]]
    with init_scope():
        return WrappedFunction(lifted, VariableHolder(), OutputSlot(0, None))()
