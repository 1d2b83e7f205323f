"""Builds the public namespaces `tf.*` and `tf.compat.v1.*` from the `tf_export` declarations.

Called once by ndflow/__init__.py after every implementation package is imported (importing
a module runs its declarations). For each declared path the namespace modules on the way
are created (and registered in `sys.modules`, so `import ndflow.compat.v1 as v1` and
`from ndflow.nn import relu` work) or, where an implementation package of the same name
exists (`ndflow.train`, `ndflow.keras`), that package is used. Two declarations of one path
for different objects are an error. Finally the implementation modules that are not
namespaces are taken off the namespaces' attributes (`tf.ops`, `tf.train.adam`), so
`dir(tf.X)` lists TensorFlow's names only; they stay importable by their module names.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from types import ModuleType

from ndflow.core.api_export import Export

# The namespaces built, by dotted path ('' is the top-level package).
NAMESPACES: dict[str, ModuleType] = {}


def build(root: ModuleType, exports: Iterable[Export]) -> dict[str, ModuleType]:
    """Fills the namespaces under `root`; returns them by dotted path ('' is `root`)."""
    namespaces = NAMESPACES
    namespaces[""] = root
    for export in exports:
        for path in export.v2:
            _place(root, namespaces, path, export.obj)
        for path in export.v1:
            _place(root, namespaces, f"compat.v1.{path}", export.obj)
    compat = _namespace(root, namespaces, "compat")
    compat.v2 = root  # tf.compat.v2 is the TF2 API itself
    _hide_implementation_modules(namespaces)
    return namespaces


def _namespace(root: ModuleType, namespaces: dict, path: str) -> ModuleType:
    """The module for namespace `path`, created (with its parents) when needed."""
    if path in namespaces:
        return namespaces[path]
    parent_path, _, name = path.rpartition(".")
    parent = _namespace(root, namespaces, parent_path)
    full = f"{root.__name__}.{path}"
    module = sys.modules.get(full)
    if module is None and hasattr(parent, "__path__") and \
            importlib.util.find_spec(full) is not None:
        module = importlib.import_module(full)  # an implementation package of that name
    if module is None:
        module = ModuleType(full, f"`tf.{path}`: built from ndflow's tf_export declarations.")
        sys.modules[full] = module
    setattr(parent, name, module)
    namespaces[path] = module
    return module


def _place(root: ModuleType, namespaces: dict, path: str, obj) -> None:
    ns_path, _, name = path.rpartition(".")
    namespace = _namespace(root, namespaces, ns_path)
    current = namespace.__dict__.get(name, _MISSING)
    if current is not _MISSING and current is not obj and not isinstance(current, ModuleType):
        raise ValueError(f"tf.{path} is declared twice: for {current!r} and for {obj!r}")
    setattr(namespace, name, obj)
    namespace.__dict__.setdefault("_tf_exported", set()).add(name)


def _hide_implementation_modules(namespaces: dict) -> None:
    namespace_modules = {id(m) for m in namespaces.values()}
    for module in namespaces.values():
        exported = module.__dict__.get("_tf_exported", set())
        for name, value in list(vars(module).items()):
            if (isinstance(value, ModuleType) and id(value) not in namespace_modules
                    and name not in exported and not name.startswith("_")):
                delattr(module, name)


_MISSING = object()
