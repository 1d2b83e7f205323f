"""The object tree Keras 3's saving walks, reproduced on ndflow's models: which objects own
weights in a `.weights.h5` file and at which path.

Keras visits the model, then (for Sequential and Functional models) their `layers`, then every
attribute of the object in `dir()` order, public names before private ones, skipping what a
bare `Layer` already has. A layer or an optimizer found there is saved at
`<parent path>/<attribute>`; one found in a list, tuple or dict at
`<parent path>/<attribute>/<snake_case class name>[_n]` (nested containers as
`container[_n]`). Every object is saved once, at the first path it is met. Its own variables
go in `<path>/vars/0..n-1`, the group carrying the object's name as attribute `name`.
"""

from __future__ import annotations

import functools

from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.optimizers.base_optimizer import Optimizer, to_snake_case

_SEQUENTIAL = ("ndflow.keras.sequential", "Sequential")
_FUNCTIONAL = ("ndflow.keras.functional", "Functional")

# ndflow's own bookkeeping on models that Keras' models do not have (or skip): Sequential's
# list with the InputLayer and its inner functional graph, Functional's ordered layers and
# nodes (Keras skips its `operations` / `_operations`).
_EXTRA_SKIPS = {
    "Layer": set(),
    "Sequential": {"_functional", "_layers_list"},
    "Functional": {"_functional_layers", "_nodes", "operations", "_operations"},
}


def is_saveable(obj) -> bool:
    """An object that owns saved variables (Keras' `KerasSaveable` with variables)."""
    return isinstance(obj, (Layer, Optimizer))


def object_kind(obj) -> str:
    """"Sequential", "Functional" or "Layer" (any other layer or model)."""
    for cls in type(obj).__mro__:
        key = (cls.__module__, cls.__name__)
        if key == _SEQUENTIAL:
            return "Sequential"
        if key == _FUNCTIONAL:
            return "Functional"
    return "Layer"


@functools.cache
def _bare_layer_names() -> frozenset:
    """What `dir()` shows on a bare Layer (Keras' skip set for layers and models)."""
    probe = Layer(name="ndflow_saving_probe")  # an explicit name takes no automatic name
    return frozenset(dir(probe))


def _name_key(name: str) -> str:
    return f"~{name}" if name.startswith("_") else name


def children(obj) -> list:
    """(attribute name, value) pairs in the order Keras' saving visits them."""
    if isinstance(obj, Optimizer):
        inner = getattr(obj, "inner_optimizer", None)   # a LossScaleOptimizer's
        return [("inner_optimizer", inner)] if isinstance(inner, Optimizer) else []
    if not isinstance(obj, Layer):
        return []
    kind = object_kind(obj)
    out = [("layers", obj.layers)] if kind != "Layer" else []
    skip = _bare_layer_names() | _EXTRA_SKIPS[kind]
    for name in sorted(dir(obj), key=_name_key):
        if name.startswith("__") or name in skip:
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 - Keras skips attributes that fail to read
            continue
        out.append((name, value))
    return out


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _unique(name: str, used: dict) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def walk(root):
    """Yields (path, object) for every saveable object under `root` (itself first, at ""),
    each once, in the order Keras saves them."""
    visited: set = set()

    def visit(obj, path):
        if id(obj) in visited:
            return
        visited.add(id(obj))
        yield path, obj
        for name, child in children(obj):
            if is_saveable(child):
                yield from visit(child, _join(path, name))
            elif isinstance(child, (list, tuple, dict)):
                yield from visit_container(child, _join(path, name), set())

    def visit_container(container, path, seen_containers):
        if id(container) in seen_containers:
            return
        seen_containers.add(id(container))
        used: dict = {}
        items = container.values() if isinstance(container, dict) else container
        for item in list(items):
            if is_saveable(item):
                yield from visit(item, _join(path, _unique(to_snake_case(
                    type(item).__name__), used)))
            elif isinstance(item, (list, tuple, dict)):
                yield from visit_container(item, _join(path, _unique("container", used)),
                                           seen_containers)

    yield from visit(root, "")
