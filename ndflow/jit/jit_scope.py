"""`tf.xla.experimental.jit_scope`: ask the JIT to compile the ops built inside the scope.

    with tf.xla.experimental.jit_scope():                 # _XlaCompile=True
        y = tf.nn.relu(tf.matmul(x, w))
    with tf.xla.experimental.jit_scope(compile_ops=False):  # never compiled
        z = tf.math.exp(y)

As TensorFlow: it raises RuntimeError when executing eagerly; every op created in the default
graph inside the scope gets `_XlaCompile` (a bool, or `compile_ops(node_def)` when it is a
callable) and `_XlaSeparateCompiledGradients`; the outermost scope also sets
`_XlaScope="jit_scope_<n>"` (numbered per graph) and nested scopes inherit it, an inner
scope's values winning over an outer one's. The clustering pass
(ndflow/passes/mark_for_compilation.py) reads them: with auto-jit off only `_XlaCompile=True`
ops are compiled and differing `_XlaScope`s split clusters.

ndflow has no attr scope on its graphs, so the attrs are written when the scope exits, on
the ops created since it was entered that do not already carry them (inner scopes exit first).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from tensorboard.compat.proto import node_def_pb2

from ndflow.core import context
from ndflow.core.api_export import tf_export

_XLA_SCOPE_KEY = "__xla_scope"


@dataclass
class _ScopeCounter:
    count: int = 0
    depth: int = 0


def _node_def(op) -> node_def_pb2.NodeDef:
    return node_def_pb2.NodeDef(name=op.name, op=op.type, device=op.device,
                                input=[t.name for t in op.inputs]
                                + ["^" + c.name for c in op.control_inputs])


@tf_export("xla.experimental.jit_scope")
@contextlib.contextmanager
def jit_scope(compile_ops=True, separate_compiled_gradients=False):
    """Enables (or, with `compile_ops=False`, disables) JIT compilation of the ops built in
    the scope; `compile_ops` may be a callable taking a NodeDef and returning a bool."""
    if context.executing_eagerly():
        raise RuntimeError("xla.experimental.jit_scope is not supported when eager execution "
                           "is enabled. Try use it inside tf.function.")
    graph = context.get_default_graph()
    counters = graph.get_collection(_XLA_SCOPE_KEY)
    if counters:
        counter = counters[0]
    else:
        counter = _ScopeCounter()
        graph.add_to_collection(_XLA_SCOPE_KEY, counter)
    attrs = {"_XlaSeparateCompiledGradients": bool(separate_compiled_gradients)}
    if counter.depth == 0:
        attrs["_XlaScope"] = f"jit_scope_{counter.count}"
        counter.count += 1
    counter.depth += 1
    start = len(graph.get_operations())
    try:
        yield
    finally:
        counter.depth -= 1
        for op in graph.get_operations()[start:]:
            if "_XlaCompile" not in op.attrs:
                op.attrs["_XlaCompile"] = bool(compile_ops(_node_def(op))) \
                    if callable(compile_ops) else bool(compile_ops)
            for k, v in attrs.items():
                op.attrs.setdefault(k, v)
