"""Code generation of fused kernels: `compile_fusion(group, input_specs, device, cache_dir)`.

A fusion group (ndflow.jit.fusion) is lowered to a backend-neutral loop description
(lowering.py, with per-op scalar expressions from emitters.py), then rendered and compiled by a
backend: numba/LLVM on CPU (numba_backend.py), Triton on CUDA GPUs (triton_backend.py). What
cannot be generated raises `CompileUnimplemented` (the group then runs op by op). numba and
Triton are imported only when a kernel is compiled: `import ndflow` loads neither.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ndflow.jit.codegen import emitters, lowering, numba_backend, triton_backend
from ndflow.jit.errors import CompileUnimplemented

__all__ = ["compile_fusion", "emitters"]


def _importable(name: str) -> bool:
    try:
        __import__(name)  # optional at import time, needed to compile
    except ImportError:
        return False
    return True


def compile_fusion(group, input_specs: list, device, cache_dir: str | None = None
                   ) -> Callable[..., list]:
    """A callable `(*torch tensors) -> [torch tensors]` computing `group.outputs` from
    `group.inputs`, specialized to `input_specs` [(DType, shape tuple)], one per input.

    Raises CompileUnimplemented for a device without a backend (CPU: numba; CUDA: Triton), a
    dtype or op the generator does not handle, or shapes it cannot fuse."""
    device = torch.device(device)
    if device.type == "cpu":
        if not _importable("numba"):
            raise CompileUnimplemented("numba is not installed: fused kernels cannot be "
                                       "compiled")
        backend = numba_backend
    elif device.type == "cuda":
        if not _importable("triton"):
            raise CompileUnimplemented("Triton is not installed: fused GPU kernels cannot be "
                                       "compiled")
        backend = triton_backend
    else:
        raise CompileUnimplemented(f"no code generator for {device.type} devices")
    for op in group.ops:
        if op.type != "Const" and not emitters.can_emit(op):
            raise CompileUnimplemented(f"no code generator for {op.type} (node {op.name})")
    ir = lowering.lower(group, list(input_specs))
    return backend.build(ir, device, cache_dir)
