"""Where plain ops meet composite tensors: `tf.reduce_sum(ragged, axis=1)`, `tf.concat` of
ragged tensors, a RaggedTensor's operators. The op modules cannot import the RaggedTensor
modules built on them, so those register their implementations here by name at import and
the ops call `call(name, ...)` when handed a composite (core/composite_tensor.py). An
implementation whose module is not imported yet is imported then (the index's "composites",
core/lazy_api.py)."""

from __future__ import annotations

from collections.abc import Callable

from ndflow.core import lazy_api

_IMPLEMENTATIONS: dict[str, Callable] = {}


def register(name: str):
    """Decorator: `fn` implements `name` for composite arguments."""
    def decorate(fn):
        _IMPLEMENTATIONS[name] = fn
        return fn
    return decorate


def registered() -> dict[str, str]:
    """The names with an implementation so far -> the implementation's module (the index)."""
    return {name: fn.__module__ for name, fn in _IMPLEMENTATIONS.items()}


def call(name: str, *args, **kwargs):
    fn = _IMPLEMENTATIONS.get(name)
    if fn is None and lazy_api.load_entry("composites", name):
        fn = _IMPLEMENTATIONS.get(name)
    if fn is None:
        raise TypeError(f"{name} does not support composite tensors (RaggedTensor) in ndflow.")
    return fn(*args, **kwargs)
