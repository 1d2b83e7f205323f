"""The optional `onnx` and `onnxruntime` packages, imported on first use.

Both are large (onnxruntime ~80 MB), so `import ndflow` never loads them and they are an
extra (`pip install ndflow[inference]`): a missing one is a clear ImportError saying how to
install it, raised only when an export or an engine needs it.
"""

from __future__ import annotations

import importlib

_INSTALL = "pip install 'ndflow[inference]'  (or: pip install onnx onnxruntime)"


def _require(module: str, purpose: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{purpose} needs the '{module.split('.')[0]}' package, which is not installed: "
            f"{_INSTALL}") from e


def onnx():
    """The `onnx` package (protos, helpers, checker)."""
    return _require("onnx", "ONNX export")


def onnx_helper():
    return _require("onnx.helper", "ONNX export")


def onnxruntime():
    """The `onnxruntime` package (InferenceSession)."""
    return _require("onnxruntime", "Running an ONNX model")
