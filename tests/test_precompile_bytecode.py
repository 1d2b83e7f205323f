"""`python -m ndflow.precompile` byte-compiles ndflow's modules first (ndflow/precompile.py):
every module then has its bytecode cache, which processes read even where
PYTHONDONTWRITEBYTECODE=1 keeps imports from writing it."""

import importlib.util
import os

import ndflow
from ndflow import precompile


def test_every_module_has_its_bytecode_after_precompile():
    root = os.path.dirname(os.path.abspath(ndflow.__file__))
    one = importlib.util.cache_from_source(os.path.join(root, "core", "versions.py"))
    if os.path.exists(one):
        os.remove(one)       # written again below, whatever this process's settings
    assert precompile.compile_bytecode(1) >= 0.0
    sources = [os.path.join(d, f) for d, _, files in os.walk(root) for f in files
               if f.endswith(".py")]
    missing = [s for s in sources if not os.path.exists(importlib.util.cache_from_source(s))]
    assert len(sources) > 1000 and not missing, missing[:10]
