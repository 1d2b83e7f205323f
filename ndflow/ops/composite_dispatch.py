"""Where plain ops meet composite tensors: `tf.reduce_sum(ragged, axis=1)`, `tf.concat` of
ragged tensors, a RaggedTensor's operators. The op modules cannot import the RaggedTensor
modules built on them, so those register their implementations here by name at import and
the ops call `call(name, ...)` when handed a composite (core/composite_tensor.py)."""

from __future__ import annotations

from collections.abc import Callable

_IMPLEMENTATIONS: dict[str, Callable] = {}


def register(name: str):
    """Decorator: `fn` implements `name` for composite arguments."""
    def decorate(fn):
        _IMPLEMENTATIONS[name] = fn
        return fn
    return decorate


def call(name: str, *args, **kwargs):
    fn = _IMPLEMENTATIONS.get(name)
    if fn is None:
        raise TypeError(f"{name} does not support composite tensors (RaggedTensor) in ndflow.")
    return fn(*args, **kwargs)
