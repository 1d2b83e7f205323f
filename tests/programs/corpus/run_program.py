"""Runs one program of the corpus and prints its final metrics.

    python run_program.py PROGRAM.py ndflow       # ndflow's venv: the test
    python run_program.py PROGRAM.py tensorflow   # TF 2.21's venv: generate_fixture.py

The programs import TensorFlow and Keras as their authors wrote (`import tensorflow as tf`,
`from tensorflow import keras`, `import keras`, `from keras import layers`, ...). Under
`ndflow` those imports get ndflow and ndflow.keras (and their submodules) — the program's
code runs unchanged; under `tensorflow` they get the real TensorFlow 2.21 and Keras 3.
Either way `keras.utils.set_random_seed(SEED)` first seeds Python's `random`, NumPy's global
generator and the backend's, so the two runs start from the same seeds; then the program's
`main()` runs in the current directory (run it in a scratch one: programs write checkpoints
and data files there) and its metrics are printed as one JSON line after MARKER.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import json
import os
import sys

MARKER = "CORPUS-METRICS "
SEED = 1337


class _AliasLoader(importlib.abc.Loader):
    """Loads `tensorflow[.x]` / `keras[.x]` as the ndflow module already imported."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _NdflowAliases(importlib.abc.MetaPathFinder):
    """`tensorflow[.x]` is `ndflow[.x]`; `keras[.x]` is `ndflow.keras[.x]`."""

    PREFIXES = (("keras", "ndflow.keras"), ("tensorflow", "ndflow"))

    def find_spec(self, fullname, path=None, target=None):
        for alias, real in self.PREFIXES:
            if fullname == alias or fullname.startswith(alias + "."):
                module = importlib.import_module(real + fullname[len(alias):])
                return importlib.util.spec_from_loader(fullname, _AliasLoader(module))
        return None


def use_ndflow() -> None:
    import ndflow  # noqa: F401 - builds every namespace module
    sys.meta_path.insert(0, _NdflowAliases())


def run(path: str, backend: str) -> dict:
    if backend == "ndflow":
        use_ndflow()
    elif backend != "tensorflow":
        raise SystemExit(f"unknown backend {backend!r}")
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import keras
    keras.utils.set_random_seed(SEED)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))   # synthetic_data
    spec = importlib.util.spec_from_file_location("corpus_program", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    return {name: float(value) for name, value in program.main().items()}


if __name__ == "__main__":
    metrics = run(sys.argv[1], sys.argv[2])
    print(MARKER + json.dumps(metrics, sort_keys=True), flush=True)
