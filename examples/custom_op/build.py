"""Builds custom_ops.cpp into a shared library with PyTorch's C++ extension tooling.

    python examples/custom_op/build.py [BUILD_DIR]     # prints the library's path

Needs a C++ compiler (g++) and ninja (`pip install ninja` when it is not on PATH); the first
build takes about a minute, later ones reuse BUILD_DIR's objects.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from torch.utils import cpp_extension

import ndflow as tf

HERE = Path(__file__).resolve().parent
NAME = "ndflow_example_ops"


def build(build_dir: str | os.PathLike) -> Path:
    """Compiles the library into `build_dir`; returns the path of the .so."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    cpp_extension.load(name=NAME, sources=[str(HERE / "custom_ops.cpp")],
                       extra_include_paths=[tf.sysconfig.get_include()], extra_cflags=["-O2"],
                       build_directory=str(build_dir), is_python_module=False,
                       with_cuda=False, verbose=False)
    return build_dir / f"{NAME}.so"


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else HERE / "build"))
