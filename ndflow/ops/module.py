"""`tf.Module`: a named container of variables and sub-modules, found by walking its
attributes (lists, tuples and dicts included) as TensorFlow's module.py does. Keras layers
and checkpoints build on it."""

from __future__ import annotations

import functools
import re

from ndflow.core import context, nest, scopes
from ndflow.core.api_export import tf_export
from ndflow.ops.variables import Variable

_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_VALID_IDENTIFIER = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")


def camel_to_snake(value: str) -> str:
    return _CAMEL_TO_SNAKE.sub(r"_\1", value).lower()


class _ModuleScope:
    """The module's name scope, re-entered exactly each time (`with module.name_scope:`)."""

    def __init__(self, scope_name: str):
        self.name = scope_name
        self._entered = []

    def __enter__(self) -> str:
        manager = scopes.name_scope(self.name if context.executing_eagerly() else
                                    self.name or None)
        self._entered.append(manager)
        return manager.__enter__()

    def __exit__(self, *exc):
        return self._entered.pop().__exit__(*exc)


@tf_export("Module")
class Module:
    """`tf.Module`: `name`, `name_scope`, and the `variables`, `trainable_variables`,
    `non_trainable_variables` and `submodules` reachable through its attributes."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name: str | None = None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not _VALID_IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid "
                             "Python identifiers (e.g. a valid class name).")
        self._name = name
        with scopes.name_scope(name) as scope_name:
            self._name_scope = _ModuleScope(scope_name)

    @property
    def name(self) -> str:
        """The module's name (its class name in snake case unless given)."""
        return self._name

    @property
    def name_scope(self) -> _ModuleScope:
        """A context manager opening the module's name scope (`with m.name_scope:`), under
        which variables created get its name as a prefix."""
        return self._name_scope

    @property
    def variables(self) -> tuple:
        """Every variable of this module and its submodules (attributes, lists, dicts),
        each once, in attribute order."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """`variables` with `trainable=True` (what an optimizer updates)."""
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        """`variables` with `trainable=False` (step counters, statistics)."""
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """Every `tf.Module` reachable from this one's attributes, recursively, each once."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive: bool = True, predicate=None, attribute_traversal_key=None,
                 with_path: bool = False, expand_composites: bool = False):
        """The values reachable from this module's attributes for which `predicate` holds,
        each once, depth first in sorted attribute order, then inside each sub-module."""
        return _walk(self, recursive, predicate or (lambda _: True), attribute_traversal_key,
                     with_path, (), {id(self)}, [])

    @classmethod
    def with_name_scope(cls, method):
        """Decorates a method to run inside the module's name scope."""
        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return method_with_name_scope

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>"


def _is_variable(obj) -> bool:
    return isinstance(obj, Variable)


def _is_module(obj) -> bool:
    return isinstance(obj, Module)


def _walk(module, recursive, predicate, key, with_path, prefix, seen, stack):
    if id(module) in stack:  # a cycle: list what is here, do not descend again
        recursive = False
    submodules = []
    attributes = vars(module)
    for name in sorted(attributes, key=key):
        if name in module._TF_MODULE_IGNORED_PROPERTIES:
            continue
        value = attributes[name]
        try:
            leaves = nest.flatten_with_tuple_paths(value)
        except Exception as cause:  # noqa: BLE001 - TF wraps any failure the same way
            raise ValueError(f"Error processing property {name!r} of {value!r}") from cause
        for path, leaf in leaves:
            path = (name,) + path
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (prefix + path, leaf) if with_path else leaf
            if recursive and _is_module(leaf):
                submodules.append((prefix + path, leaf))
    stack.append(id(module))
    for path, sub in submodules:
        yield from _walk(sub, recursive, predicate, key, with_path, path, seen, stack)
    stack.pop()
