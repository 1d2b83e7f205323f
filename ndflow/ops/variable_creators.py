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
from ndflow.ops.variable_enums import VariableAggregation, VariableSynchronization

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


# What tf.Variable's creators receive, in TF's order and with its defaults.
_CREATOR_DEFAULTS = dict(
    initial_value=None, trainable=None, validate_shape=True, caching_device=None, name=None,
    variable_def=None, dtype=None, import_scope=None, constraint=None,
    synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE,
    shape=None, experimental_enable_variable_lifting=None)


def creator_arguments(given: dict) -> dict:
    """TF's Variable._variable_call: every argument, defaults included (aggregation None is
    NONE), then the TF1 ones (`collections`, `use_resource`, ...) that were given."""
    kwargs = {name: given.get(name, default) for name, default in _CREATOR_DEFAULTS.items()}
    if kwargs["aggregation"] is None:
        kwargs["aggregation"] = VariableAggregation.NONE
    kwargs.update((k, v) for k, v in given.items() if k not in kwargs and v is not None)
    return kwargs
