"""`tf.keras.utils.standardize_dtype` (Keras 3's dtype names, TF backend: Python `int` is
int64) and the interactive logging switch (`enable/disable/is_interactive_logging_enabled`,
also under keras.config): when off, the directory loaders' messages go to the `logging`
module instead of stdout, as Keras' print_msg sends them to absl logging."""

from __future__ import annotations

import logging

from ndflow.core.api_export import keras_export
from ndflow.keras.backend_functions import floatx

ALLOWED_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64",
                  "int8", "int16", "int32", "int64", "bfloat16", "bool", "string",
                  "float8_e4m3fn", "float8_e5m2", "complex64", "complex128")
_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float32", str: "string",
                  "int": "int64", complex: "complex128"}


@keras_export("keras.utils.standardize_dtype", "keras.backend.standardize_dtype")
def standardize_dtype(dtype):
    """Keras' name for `dtype` (a name, Python/NumPy type or tf.DType); None -> floatx()."""
    if dtype is None:
        return floatx()
    try:
        dtype = _PYTHON_DTYPES.get(dtype, dtype)
    except TypeError:  # unhashable
        pass
    if hasattr(dtype, "name"):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif "torch" in str(dtype):
        dtype = str(dtype).split(".")[-1]
    if dtype not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return dtype


_INTERACTIVE = {"value": True}


@keras_export("keras.utils.enable_interactive_logging",
              "keras.config.enable_interactive_logging")
def enable_interactive_logging():
    """Messages to stdout (the default)."""
    _INTERACTIVE["value"] = True


@keras_export("keras.utils.disable_interactive_logging",
              "keras.config.disable_interactive_logging")
def disable_interactive_logging():
    """Messages to the `logging` module (INFO) instead of stdout."""
    _INTERACTIVE["value"] = False


@keras_export("keras.utils.is_interactive_logging_enabled",
              "keras.config.is_interactive_logging_enabled")
def is_interactive_logging_enabled():
    return _INTERACTIVE["value"]


def print_msg(message: str) -> None:
    """Keras' print_msg: stdout when interactive logging is on, else logging.info."""
    if _INTERACTIVE["value"]:
        print(message, flush=True)
    else:
        logging.getLogger("ndflow.keras").info(message)
