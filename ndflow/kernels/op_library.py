"""`tf.load_op_library`: custom ops from a compiled C++/CUDA library.

TensorFlow's op libraries register ops and kernels with TensorFlow's C++ API; ndflow's run
on ATen, so a library is a PyTorch C++ extension (built with `torch.utils.cpp_extension`)
following one small convention (examples/custom_op/ is a worked, tested example):

- its kernels are ATen operators registered with `TORCH_LIBRARY(<namespace>, m)` (and
  `TORCH_LIBRARY_IMPL(<namespace>, CPU / CUDA, m)`), one per op, named like the op
  (`m.def("ZeroOut(Tensor to_zero) -> Tensor")`); the schema takes the op's inputs in order
  and may take any of its attrs by name (type attrs as `ScalarType`);
- it exports two C functions that tell ndflow what it holds:
  `extern "C" const char* ndflow_op_library_namespace()` (the TORCH_LIBRARY namespace) and
  `extern "C" const char* ndflow_op_library_specs()`: the ops' TensorFlow `REGISTER_OP(...)`
  chains as text, exactly as a TensorFlow op library declares them.

`load_op_library(path)` loads it, registers each op (OpDef, kernel per device type the
library implements, output checks: see kernels/custom_op.py) and returns a module whose
attributes are the op functions, snake_case as in TensorFlow (`ZeroOut` -> `zero_out`).
Gradients are registered in Python, as for TensorFlow's op libraries:
`@tf.RegisterGradient("ZeroOut")`. Loading the same file again returns the same module.
"""

from __future__ import annotations

import ctypes
import os
import threading
from types import ModuleType

import torch

from ndflow.core.api_export import tf_export
from ndflow.core.errors import NotFoundError
from ndflow.kernels.custom_op import register_spec
from ndflow.ops.register_op_text import parse_register_ops, snake_case

NAMESPACE_SYMBOL = "ndflow_op_library_namespace"
SPECS_SYMBOL = "ndflow_op_library_specs"

_LOADED: dict[str, ModuleType] = {}
_LOCK = threading.Lock()


@tf_export("load_op_library", v1=["load_op_library"])
def load_op_library(library_filename):
    """Loads the op library at `library_filename`; returns a module of its op functions.

    NotFoundError (TensorFlow's error) when the file cannot be loaded (missing, not a shared
    library, unresolved symbols) or does not follow the convention above.
    """
    path = os.fspath(library_filename)
    key = os.path.realpath(path)
    with _LOCK:
        module = _LOADED.get(key)
        if module is None:
            module = _LOADED[key] = _load(path)
    return module


def _load(path: str) -> ModuleType:
    try:
        handle = ctypes.CDLL(os.path.abspath(path) if os.sep in path else path)
    except OSError as e:   # dlerror's text, as TensorFlow reports it
        raise NotFoundError(None, None, str(e)) from None
    namespace, specs_text = (_c_string(handle, path, s) for s in (NAMESPACE_SYMBOL,
                                                                 SPECS_SYMBOL))
    torch.ops.load_library(handle._name)  # records it with torch (static init already ran)
    try:
        specs = parse_register_ops(specs_text)
    except ValueError as e:
        raise NotFoundError(None, None, f"{path}: its {SPECS_SYMBOL}() text: {e}") from None
    if not specs:
        raise NotFoundError(None, None, f"{path}: {SPECS_SYMBOL}() declares no REGISTER_OP")
    module = ModuleType(f"ndflow_op_library_{namespace}",
                        f"The ops of {os.path.basename(path)}: "
                        + ", ".join(s.name for s in specs))
    module.__file__ = path
    for spec in specs:
        op, devices = _aten_op(namespace, spec.name, path)
        setattr(module, snake_case(spec.name), register_spec(spec, dict.fromkeys(devices, op)))
    return module


def _c_string(handle, path: str, symbol: str) -> str:
    try:
        fn = getattr(handle, symbol)
    except AttributeError:
        raise NotFoundError(None, None, f"{path}: not an ndflow op library: it exports no "
                            f"`extern \"C\" const char* {symbol}()` (see "
                            "examples/custom_op/README.md)") from None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return (fn() or b"").decode()


def _aten_op(namespace: str, name: str, path: str):
    """The ATen operator `namespace::name` and the device types it has kernels for."""
    qualified = f"{namespace}::{name}"
    if not torch._C._dispatch_has_kernel(qualified) and \
            qualified not in torch._C._dispatch_get_all_op_names():
        raise NotFoundError(None, None, f"{path}: declares op {name} but registers no ATen "
                            f"operator {qualified} (TORCH_LIBRARY({namespace}, m) "
                            f"{{ m.def(\"{name}(...) -> ...\"); }})")
    op = getattr(getattr(torch.ops, namespace), name)
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    composite = any(has(qualified, k) for k in ("CompositeImplicitAutograd",
                                                "CompositeExplicitAutograd"))
    devices = [d for d, key in (("CPU", "CPU"), ("GPU", "CUDA"))
               if composite or has(qualified, key)]
    if not devices:
        raise NotFoundError(None, None, f"{path}: ATen operator {qualified} has no CPU or "
                            "CUDA kernel")
    return op, devices
