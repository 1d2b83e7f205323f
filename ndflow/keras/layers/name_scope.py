"""`keras.name_scope` and the per-thread path stack it shares with Layer: the scope names
that prefix the paths of variables layers create ("block_1/dense/kernel")."""

from __future__ import annotations

import threading

from ndflow.core.api_export import keras_export
from ndflow.core.scopes import name_scope
from ndflow.keras.layers.layer_names import op_scope

_paths = threading.local()


def path_stack() -> list:
    """This thread's open scope names, outermost first (layers push theirs while building)."""
    stack = getattr(_paths, "stack", None)
    if stack is None:
        stack = _paths.stack = []
    return stack


@keras_export("keras.name_scope")
class KerasNameScope:
    """`keras.name_scope(name)`: variables that layers create inside it get `name/` before
    their paths ("block_1/dense/kernel"), scopes nesting; ops are named under it too.
    `override_parent="/"` (or another path) replaces the enclosing scopes.

    Args:
      name: the scope's name (a string without "/").
      **kwargs: `override_parent` (see above) and other Keras arguments.

    Raises:
      ValueError: `name` is not a string or contains "/".

    Example:

    >>> with tf.keras.name_scope("block"):
    ...     layer = tf.keras.layers.Dense(2, name="proj")
    ...     layer.build((None, 3))
    >>> layer.kernel.path
    'block/proj/kernel'
    """

    def __init__(self, name, **kwargs):
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name}")
        self.name = name
        self.override_parent = kwargs.pop("override_parent", None)
        kwargs.pop("caller", None)
        kwargs.pop("deduplicate", None)
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments: {sorted(kwargs)}")
        self._saved_stack = self._ops_scope = None

    def __enter__(self):
        stack = path_stack()
        self._saved_stack = list(stack)
        if self.override_parent is not None:
            stack[:] = [p for p in self.override_parent.split("/") if p]
        stack.append(self.name)
        self._ops_scope = name_scope(op_scope(self.name))
        self._ops_scope.__enter__()
        return self

    def __exit__(self, *exc):
        self._ops_scope.__exit__(*exc)
        path_stack()[:] = self._saved_stack
        return False
