"""`python -m ndflow.info`: what to paste into a bug report — ndflow's and torch's versions,
the build, this machine's CPU (model, vector and bf16 features) and GPUs, which of the
container's environment variables are set and whether each is in effect, and where the
package and the dataset caches live."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

import torch

import ndflow
from ndflow.core import build_info
from ndflow.data import mnist
from ndflow.keras import file_downloads


def report() -> str:
    model, flags = build_info.cpu_model_and_flags()
    have = [f for f in build_info.CPU_FEATURES if f in flags]
    lacks = [f for f in build_info.CPU_FEATURES if f not in flags]
    bf16 = "yes" if flags & {"avx512_bf16", "amx_bf16"} else "no (mixed precision stays float32 " \
                                                                "on this CPU without a GPU)"
    lines = [
        f"ndflow {_package_version()} (TensorFlow API {ndflow.__version__}), Python "
        f"{platform.python_version()}, torch {torch.__version__}",
        f"build: {dict(build_info.get_build_info())}",
        f"CPU: {model}, {os.cpu_count()} cores, {torch.get_num_threads()} ATen threads",
        f"  features: {', '.join(have) or 'none of ' + '/'.join(build_info.CPU_FEATURES)}"
        + (f"; lacks {', '.join(lacks)}" if have and lacks else ""),
        f"  bf16 units: {bf16}",
    ]
    gpus = build_info.gpus()
    lines += gpus or ["GPUs: none (ops placed on /GPU:0 run on the CPU under soft placement)"]
    env = build_info.environment()
    if env:
        lines.append("environment variables:")
        lines += [f"  {name}={raw!r}: {status}" for name, raw, status in env]
    else:
        lines.append("environment variables: none of ndflow's is set")
    lines += [f"package: {os.path.dirname(ndflow.__file__)}",
              f"MNIST cache: {mnist.default_directory()}",
              f"Keras datasets cache: {os.path.join(file_downloads.keras_home(), 'datasets')}"]
    return "\n".join(lines)


def _package_version() -> str:
    try:
        return importlib.metadata.version("ndflow")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "(not installed)"


def main() -> int:
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
