"""Loads a fixture's Python module (the calls TensorFlow ran in its generate.py, shared with the
test) under a name unique to its fixture, so two fixtures' `configs.py` never shadow each other
in one pytest process (xdist workers run many test files)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def load(fixture: str, module: str = "configs") -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{fixture}_{module}",
                                                  FIXTURES / fixture / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def expected(fixture: str, key: str | None = None):
    """The fixture's expected.json (its `key` entry when given), which its generate.py wrote
    with TensorFlow."""
    with open(FIXTURES / fixture / "expected.json") as f:
        data = json.load(f)
    return data if key is None else data[key]
