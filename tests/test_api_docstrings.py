"""Issue 55 outside tf.keras: every public callable or class that ndflow exports from outside
ndflow/keras (each distinct object the generated API index names) has a docstring, and every
`>>>` example in those docstrings runs as a doctest with `tf` being ndflow, `tnp`
`tf.experimental.numpy` and `np` numpy, so the examples stay true.
tests/keras/test_keras_docstrings.py does the same for ndflow/keras."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests.doc_examples import run_examples

INDEX = Path(tf.__file__).resolve().parent / "core" / "api_index.json"

# Objects ndflow exports as they are, whose docstrings are their makers' to give: NumPy's
# scalar types under tf.experimental.numpy (NumPy's docstrings, whose examples print NumPy's
# reprs). The protobuf messages (ConfigProto, ...) get theirs from core/proto_docs.py.
FOREIGN_PACKAGES = ("numpy",)


def _objects():
    """(public path, module, object) for each distinct non-keras callable or class exported."""
    names = json.loads(INDEX.read_text(encoding="utf-8"))["names"]
    seen = {}
    for path, target in sorted(names.items(), key=lambda kv: (kv[0].startswith("compat"), kv[0])):
        module, attr = target.split(":")
        if not attr or module.startswith("ndflow.keras"):
            continue
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        if inspect.ismodule(obj) or not (callable(obj) or inspect.isclass(obj)):
            continue
        seen.setdefault(id(obj), (path, module, obj))
    return list(seen.values())


OBJECTS = _objects()


def _foreign(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] in FOREIGN_PACKAGES


def test_every_public_object_outside_keras_has_a_docstring():
    assert len(OBJECTS) > 1500   # the index was read (tf.* and tf.compat.v1.* outside keras)
    missing = [f"{path} ({module})" for path, module, obj in OBJECTS
               if not (obj.__doc__ or "").strip() and not _foreign(obj)]
    assert not missing, f"no docstring: {missing}"


EXAMPLES = [(path, obj.__doc__) for path, _, obj in OBJECTS
            if ">>>" in (obj.__doc__ or "") and not _foreign(obj)]


@pytest.mark.parametrize("path,doc", EXAMPLES, ids=[p for p, _ in EXAMPLES])
def test_docstring_example_runs(path, doc):
    assert run_examples(path, doc, {"tf": tf, "tnp": tf.experimental.numpy, "np": np}) == 0
