"""The public namespaces (`tf.*`, `tf.compat.v1.*`, `tf.keras.*`), served lazily (PEP 562).

`import ndflow` imports the execution base (core, ops, kernels, autodiff, runtime); every
other area (keras, train, data, distribute, checkpoint, saved_model, ...) is imported on
first use. The namespaces come from the generated index of the `tf_export`/`keras_export`
declarations, ndflow/core/api_index.json (`python -m ndflow.tools.gen_api_index` writes it,
tests/test_api_index.py keeps it equal to the declarations):

    "names": {"nn.relu": "ndflow.ops.nn_activation:relu", "compat.v1.nn.relu": ..., ...}
    "ops":   {"Conv2D": "ndflow.ops.nn_conv", ...}   OpDefs registered outside the base
    "gradients": {"Conv2D": "ndflow.ops.nn_grad", ...}   their gradients' modules
    "composites": {"concat": "ndflow.ops.ragged_math", ...}   ops/composite_dispatch.py's
    "kernels": {"Conv2D": ["ndflow.kernels.nn_conv"], ...}  the kernel modules of each op

A namespace module's `__getattr__` (set here when the namespace module is imported) imports
the declaring module of a name it lacks, takes the declared object (the declaration's current
object: dispatch wrappers replace declared APIs) and sets it, so a later access is a plain
attribute. A namespace path is the implementation package of that name where one exists
(`tf.keras` is ndflow.keras, `tf.data` ndflow.data), else a module made here (`tf.nn`,
`tf.compat.v1`); a finder first on `sys.meta_path` installs either however it is imported.
`op_def.lookup` asks `load_op` for an op name it lacks (graph import needs every op by name),
backprop asks `load_gradient` for an op without a gradient, ops/composite_dispatch.py asks
for a RaggedTensor implementation it lacks, and the kernel registry asks `load_kernels` for
an op whose kernel it lacks: `import ndflow` imports no op family or kernel module that
nothing in the base imports, each loads at its public name's or op's first use.

This module is ndflow's one mechanism for loading lazily: it imports modules of any layer by
names read from the index (`importlib.import_module` of a variable, which tests/test_layering.py
cannot place in a layer and so does not check); no other module defers an ndflow import.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import json
import sys
from pathlib import Path
from types import ModuleType

from ndflow.core import api_export

ROOT = "ndflow"
INDEX_FILE = Path(__file__).with_name("api_index.json")
# Public paths that are modules rather than declarations.
MODULE_ENTRIES = {"compat.v2": ROOT, "raw_ops": "ndflow.kernels.raw_ops",
                  "compat.v1.raw_ops": "ndflow.kernels.raw_ops"}

# The namespace modules made (or taken from the implementation packages) so far, by dotted
# path ('' is the top-level package).
NAMESPACES: dict[str, ModuleType] = {}


@functools.cache
def index() -> dict:
    """The index: 'names' (path -> 'module:attribute'), 'ops' (op name -> module), and derived
    from them 'namespaces' (path -> the names and sub-namespaces it holds)."""
    data = json.loads(INDEX_FILE.read_text(encoding="utf-8"))
    namespaces: dict[str, set] = {"": set()}
    for path in list(data["names"]) + list(MODULE_ENTRIES):
        parts = path.split(".")
        for i in range(len(parts)):
            namespaces.setdefault(".".join(parts[:i]), set()).add(parts[i])
    data["namespaces"] = namespaces
    return data


# -- declarations by path ----------------------------------------------------------------------

_POSITIONS: dict[str, int] = {}   # public path -> position of its declaration in EXPORTS
_SEEN = [0]                       # how many declarations _POSITIONS has taken in


def declared(path: str):
    """The object declared at public path `path` (v1 paths under 'compat.v1.'), or KeyError
    when no imported module declares it."""
    exports = api_export.EXPORTS
    for i in range(_SEEN[0], len(exports)):
        e = exports[i]
        for p in e.v2:
            _POSITIONS.setdefault(p, i)
        for p in e.v1:
            _POSITIONS.setdefault(f"compat.v1.{p}", i)
    _SEEN[0] = len(exports)
    return exports[_POSITIONS[path]].obj


def public(path: str):
    """The object at public path `path` ('math.add', 'compat.v1.debugging.assert_equal'),
    its declaring module imported first; KeyError for a path ndflow does not have."""
    return _load(path)


def _load(path: str):
    """The object at public path `path`, its declaring module imported first."""
    module = MODULE_ENTRIES.get(path)
    if module is not None:
        return importlib.import_module(module)
    if path in index()["namespaces"]:
        return namespace(path)
    importlib.import_module(index()["names"][path].partition(":")[0])
    return declared(path)


# -- namespace modules ---------------------------------------------------------------------------

def _getattr(path: str, name: str):
    full = f"{path}.{name}" if path else name
    if full not in index()["names"] and full not in index()["namespaces"] \
            and full not in MODULE_ENTRIES:
        raise AttributeError(f"module 'tf{'.' if path else ''}{path}' has no attribute {name!r}")
    value = _load(full)
    module = NAMESPACES[path]
    setattr(module, name, value)
    if full in index()["names"]:
        module.__dict__.setdefault("_tf_exported", set()).add(name)   # see api_dispatch
    return value


def _dir(path: str) -> list[str]:
    module = NAMESPACES[path]
    return sorted(index()["namespaces"].get(path, set()) |
                  {n for n in module.__dict__ if n.startswith("_")})


def _install(module: ModuleType, path: str) -> None:
    """Makes `module` the namespace at `path`: names it lacks come from the index, and the
    implementation submodules it holds are taken off its attributes (they stay importable by
    their module names), so its attributes are the public names only."""
    module.__dict__["__getattr__"] = functools.partial(_getattr, path)
    module.__dict__["__dir__"] = functools.partial(_dir, path)
    NAMESPACES[path] = module
    public = index()["namespaces"].get(path, set())
    for name, value in list(vars(module).items()):
        if isinstance(value, ModuleType) and name not in public and not name.startswith("_"):
            delattr(module, name)


def install_finder() -> None:
    """Puts the namespace finder first on `sys.meta_path` (once): every namespace module is
    served from the index however it is first imported. ndflow/__init__.py calls it first."""
    if not any(isinstance(f, _NamespaceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _NamespaceFinder())


def install_root(module: ModuleType) -> None:
    """Serves the top-level namespace from the index (ndflow/__init__.py calls it last)."""
    _install(module, "")


def namespace(path: str) -> ModuleType:
    """The namespace module at dotted `path` ('nn', 'compat.v1', 'keras.layers')."""
    if path not in NAMESPACES:
        importlib.import_module(f"{ROOT}.{path}")   # the finder below installs it
    return NAMESPACES[path]


class _NamespaceFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of namespace paths: the implementation module of that name where
    one exists (its loader wrapped to install it as the namespace once executed), else a
    namespace module of its own."""

    def find_spec(self, fullname, path=None, target=None):
        prefix = f"{ROOT}."
        if not fullname.startswith(prefix):
            return None
        ns_path = fullname[len(prefix):]
        if ns_path not in index()["namespaces"]:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path) if path else None
        if spec is not None and spec.loader is not None:
            spec.loader = _InstallingLoader(spec.loader, ns_path)
            return spec
        return importlib.machinery.ModuleSpec(fullname, _NamespaceLoader(ns_path),
                                              is_package=True)


class _NamespaceLoader(importlib.abc.Loader):
    """A namespace with no implementation module (`tf.nn`, `tf.compat.v1`)."""

    def __init__(self, path: str):
        self.path = path

    def create_module(self, spec):
        return ModuleType(spec.name, f"`tf.{self.path}`: served from ndflow's tf_export "
                                     "declarations (ndflow/core/lazy_api.py).")

    def exec_module(self, module):
        _install(module, self.path)


class _InstallingLoader(importlib.abc.Loader):
    """An implementation module's own loader, then `_install` (`tf.keras` is ndflow.keras)."""

    def __init__(self, loader, path: str):
        self.loader = loader
        self.path = path

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _install(module, self.path)

    def __getattr__(self, name):   # get_source, get_filename, ...: the module's own loader
        return getattr(self.loader, name)


# -- ops by name --------------------------------------------------------------------------------

def load_op(name: str) -> bool:
    """Imports the module registering op `name` where that is outside the base; whether the
    index knows one (op_def.lookup retries then)."""
    return load_entry("ops", name)


def load_gradient(name: str) -> bool:
    """Imports the module giving op `name` its gradient where that is outside the base;
    whether there was one to import (backprop looks again then)."""
    return load_entry("gradients", name)


def load_entry(section: str, key: str) -> bool:
    """Imports the module that registers `key` in the registry the index's `section` lists
    ("ops", "gradients", "composites": ops/composite_dispatch.py's implementations); whether
    there was one not imported yet (the registry looks again then)."""
    return _load_module(index().get(section, {}).get(key))


def load_all_ops() -> None:
    """Imports every module registering ops or gradients (a listing of all registered ops)."""
    for module in sorted(set(index()["ops"].values()) |
                         set(index().get("gradients", {}).values())):
        _load_module(module)


def load_module(module: str) -> None:
    """Imports `module` (by its name, given by a lower layer that leaves it for first use:
    core/context.py's hook providers)."""
    _load_module(module)


def _load_module(module: str | None) -> bool:
    if module is None or module in sys.modules:
        return False
    importlib.import_module(module)
    return True


# -- kernels by op name -------------------------------------------------------------------------

def load_kernels(name: str) -> bool:
    """Imports the kernel modules registering op `name`'s kernels that are not imported yet;
    whether there were any (kernels/registry.py looks again then)."""
    missing = [m for m in index().get("kernels", {}).get(name, ()) if m not in sys.modules]
    for module in missing:
        importlib.import_module(module)
    return bool(missing)


def load_all_kernels() -> None:
    """Imports every kernel module (a listing of all registered kernels)."""
    for module in sorted({m for ms in index().get("kernels", {}).values() for m in ms}):
        if module not in sys.modules:
            importlib.import_module(module)
