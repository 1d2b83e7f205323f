"""Generated kernels as importable source files, shared by the backends.

numba caches machine code per source file and Triton reads a kernel's source back, so both
backends import their generated source from a file rather than exec'ing a string.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from ndflow.core.atomic_file import atomic_write


def load_module(name: str, path: str):
    """Imports the kernel file as module `name`. It is in sys.modules while it runs: a chunked
    kernel's `tramp` compiles (or loads) as the module runs, and numba records the module of
    a function by name, so a module not yet importable was recorded as `<dynamic>`, whose
    cached machine code no other process could load (it compiled every kernel again)."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def module_from_file(source: str, path: str, name: str):
    """The module of `source` from `path`, (re)written atomically when missing or not the
    expected source (a corrupt or stale file)."""
    try:
        with open(path) as f:
            ok = f.read() == source
    except (OSError, UnicodeDecodeError):
        ok = False
    if not ok:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, source.encode("utf-8"))
    return load_module(name, path)
