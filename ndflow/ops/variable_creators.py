"""Variable creators (`tf.variable_creator_scope`): how distribution strategies make their
variables (a MirroredVariable per `tf.Variable(...)` inside `strategy.scope()`).

Each thread has its own stack of creators, innermost last; `tf.Variable(...)` goes through
them (ops/variables.py's metaclass), each creator receiving the next one and the
constructor's arguments, as TensorFlow's VariableMetaclass does.
"""

from __future__ import annotations

import contextlib
import threading

from ndflow.core.api_export import tf_export

_creators = threading.local()


def variable_creator_stack() -> list:
    """This thread's creators, innermost last (strategies copy it into replica threads)."""
    stack = getattr(_creators, "stack", None)
    if stack is None:
        stack = _creators.stack = []
    return stack


def set_variable_creator_stack(stack: list) -> None:
    _creators.stack = list(stack)


@tf_export("variable_creator_scope")
@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """`tf.Variable(...)` inside calls `variable_creator(next_creator, **kwargs)`."""
    stack = variable_creator_stack()
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.pop()


def create_through(stack: list, base, kwargs: dict):
    """`base(**kwargs)` wrapped by each creator of `stack`, the innermost called first."""
    creator = base
    for fn in stack:
        creator = (lambda f, nxt: lambda **kw: f(nxt, **kw))(fn, creator)
    return creator(**kwargs)
