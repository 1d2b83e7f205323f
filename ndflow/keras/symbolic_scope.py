"""`keras.SymbolicScope`: marks the symbolic stage, when Keras traces a call on KerasTensors
to learn its output shapes and dtypes (`compute_output_spec`). Code that must not run then
(variable updates, random state advances) asks `in_symbolic_scope()`."""

from __future__ import annotations

import threading

from ndflow.core.api_export import keras_export

_STATE = threading.local()   # per thread, as Keras' global_state


def get_symbolic_scope():
    return getattr(_STATE, "scope", None)


def in_symbolic_scope() -> bool:
    return get_symbolic_scope() is not None


@keras_export("keras.SymbolicScope")
class SymbolicScope:
    """Scope to indicate the symbolic stage."""

    def __enter__(self):
        self.original_scope = get_symbolic_scope()
        _STATE.scope = self
        return self

    def __exit__(self, *args, **kwargs):
        _STATE.scope = self.original_scope
