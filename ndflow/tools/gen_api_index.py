"""Writes ndflow/core/api_index.json, the index the lazy namespaces serve `tf.*` from.

    python -m ndflow.tools.gen_api_index           # rewrite the index
    python -m ndflow.tools.gen_api_index --check   # exit 1 when it is out of date

Every module that declares public names (`tf_export`/`keras_export` in its source) is imported
and each declaration's paths are indexed: `"nn.relu": "ndflow.ops.nn_activation:relu"` (v2
paths as they are, v1 paths under `compat.v1.`), the value naming the module whose import makes
the declaration and the attribute it binds the object to (empty where it binds none: an object
made in a loop). tests/test_api_index.py keeps the checked-in index equal to the declarations.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import ndflow  # noqa: F401 - the base, as a program's `import ndflow as tf` imports it
from ndflow.core import api_export, lazy_api
from ndflow.kernels import registry
from ndflow.ops import composite_dispatch, op_def

# The ops and modules of the base (the registry index leaves them out): taken before any area
# is imported, which holds where this module is imported by a fresh process (`python -m`, the
# index test).
BASE_OPS = frozenset(op_def.REGISTRY)
BASE_MODULES = frozenset(sys.modules)

PACKAGE_DIR = Path(lazy_api.__file__).resolve().parent.parent
MARKERS = ("tf_export(", "keras_export(")
# Modules that mention the markers without declaring anything (the declaration machinery and
# the tools themselves).
NOT_DECLARING = {"ndflow.core.api_export", "ndflow.core.lazy_api", "ndflow.tools.gen_api_index"}


def declaring_modules(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The modules whose source declares public names, by dotted name."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(m in text for m in MARKERS):
            continue
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name not in NOT_DECLARING:
            out.append(name)
    return out


def import_all() -> list[api_export.Export]:
    """Imports every declaring module; returns every declaration made."""
    for name in declaring_modules():
        importlib.import_module(name)
    return list(api_export.EXPORTS)


def _attribute(module_name: str, obj) -> str:
    """The name `module_name` binds `obj` (or the API a dispatch wrapper wraps) to, or ''."""
    module = sys.modules.get(module_name)
    if module is None:
        return ""
    candidates = []
    o = obj
    while o is not None and len(candidates) < 8:
        candidates.append(o)
        o = getattr(o, "__wrapped__", None) or getattr(o, "_ragged_dispatch_of", None)
    ids = {id(c) for c in candidates}
    for c in candidates:
        name = getattr(c, "__name__", None)
        if isinstance(name, str) and id(vars(module).get(name)) in ids:
            return name
    for name, value in vars(module).items():
        if id(value) in ids and not name.startswith("__"):
            return name
    return ""


def build_index(exports: list[api_export.Export]) -> dict[str, str]:
    """Public path (v1 paths under `compat.v1.`) -> 'module:attribute'."""
    index: dict[str, str] = {}
    for e in exports:
        value = f"{e.module}:{_attribute(e.module, e.obj)}"
        for path in list(e.v2) + [f"compat.v1.{p}" for p in e.v1]:
            index.setdefault(path, value)
    return dict(sorted(index.items()))


def import_families(package_dir: Path = PACKAGE_DIR) -> None:
    """Imports every module of ndflow/ops (op families, their gradients, composites)."""
    for path in sorted((package_dir / "ops").rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))


def registry_index() -> dict[str, dict[str, str]]:
    """For what is registered outside the base, the module whose import defines it: "ops"
    (op name -> the module defining the OpDef: an op family, or an area's module as
    checkpoint's SaveV2), "gradients" (op name -> the module defining its gradient),
    "composites" (composite_dispatch's implementations by name -> their module)."""
    ops = {n: d.module for n, d in op_def.REGISTRY.items() if n not in BASE_OPS and d.module}
    grads = {n: d.grad_module for n, d in op_def.REGISTRY.items()
             if d.grad_fn is not None and d.grad_module not in BASE_MODULES}
    composites = {n: m for n, m in composite_dispatch.registered().items()
                  if m not in BASE_MODULES}
    return {section: dict(sorted(entries.items())) for section, entries in
            (("ops", ops), ("gradients", grads), ("composites", composites))}


def kernel_index(package_dir: Path = PACKAGE_DIR) -> dict[str, list[str]]:
    """Op name -> the kernel modules (ndflow/kernels/*.py, then the runtime's: If/While,
    compiled clusters, BatchFunction) outside the base whose import registers its kernels:
    each module is imported in turn and credited with what the registry gained (a module
    another imports is credited with nothing: its importer registers it all). Taken before
    any area is imported, since areas import kernel modules."""
    kernels, host = registry.kernels_so_far()

    def keys() -> set:
        return set(kernels) | set(host)

    owners: dict[str, set] = {}
    for path in [*sorted((package_dir / "kernels").glob("*.py")),
                 *sorted((package_dir / "runtime").glob("*.py"))]:
        name = f"ndflow.{path.parent.name}.{path.stem}"
        if path.stem == "__init__" or name in sys.modules:
            continue
        before = keys()
        importlib.import_module(name)
        for key in keys() - before:
            op = key[0] if isinstance(key, tuple) else key
            owners.setdefault(op.name, set()).add(name)
    return {op: sorted(ms) for op, ms in sorted(owners.items())}


def generate() -> dict:
    """The index: the kernel modules of each op (ndflow/ops imported first), then every
    declaring module imported, its declarations; what is registered outside the base."""
    import_families()   # ops only import ops and core: the kernel modules are still to come
    kernels = kernel_index()
    names = build_index(import_all())
    return {"names": names, **registry_index(), "kernels": kernels}


def render(index: dict) -> str:
    return json.dumps(index, indent=0, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the index is current")
    args = parser.parse_args(argv)
    text = render(generate())
    current = lazy_api.INDEX_FILE.read_text() if lazy_api.INDEX_FILE.exists() else ""
    if args.check:
        if text != current:
            print(f"{lazy_api.INDEX_FILE} is out of date: run python -m ndflow.tools.gen_api_index")
            return 1
        return 0
    lazy_api.INDEX_FILE.write_text(text)
    print(f"wrote {lazy_api.INDEX_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
