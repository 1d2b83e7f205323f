"""`init_scope`: build state (optimizer slots, counters) outside any function being traced.

TensorFlow's `tf.init_scope`: leaves every `tf.function` graph under construction, so
variables created inside are eager variables (or variables of the outermost v1 graph) that
the function captures by handle; clears control dependencies and pauses gradient tapes.
Optimizers use it to create their variables lazily on the first `apply_gradients`, even
when that first call happens while a function is being traced.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ndflow.core import context
from ndflow.runtime.func_graph import FuncGraph


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Lifts to the outermost context: eager, or the innermost non-function graph."""
    stack = context.state().graph_stack
    k = len(stack)
    while k > 0 and isinstance(stack[k - 1], FuncGraph):
        k -= 1
    lifted = stack[k:]
    del stack[k:]
    try:
        with context.stop_recording():
            if context.executing_eagerly():
                yield
            else:
                graph = context.get_default_graph()
                scope = graph.get_name_scope() if not lifted else ""
                with graph.control_dependencies(None), \
                        graph.name_scope(scope + "/" if scope else None):
                    yield
    finally:
        stack.extend(lifted)
