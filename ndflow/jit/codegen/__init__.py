"""Code generation of fused kernels: `compile_fusion(group, input_specs, device, cache_dir)`.

A fusion group (ndflow.jit.fusion) is lowered to a backend-neutral loop description
(lowering.py, with per-op scalar expressions from emitters.py), then rendered and compiled by a
backend: numba/LLVM on CPU (numba_backend.py). A Triton backend for GPUs would take the same
KernelIR. What cannot be generated raises `CompileUnimplemented` (the group then runs op by op).
numba is imported only when a kernel is compiled: `import ndflow` does not load it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ndflow.jit.codegen import emitters, lowering, numba_backend
from ndflow.jit.errors import CompileUnimplemented

__all__ = ["compile_fusion", "emitters"]


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401, PLC0415 - optional at import time, needed to compile
    except ImportError:
        return False
    return True


def compile_fusion(group, input_specs: list, device, cache_dir: str | None = None
                   ) -> Callable[..., list]:
    """A callable `(*torch tensors) -> [torch tensors]` computing `group.outputs` from
    `group.inputs`, specialized to `input_specs` [(DType, shape tuple)], one per input.

    Raises CompileUnimplemented for a device without a backend (anything but CPU today), a
    dtype or op the generator does not handle, or shapes it cannot fuse."""
    device = torch.device(device)
    if device.type != "cpu":
        raise CompileUnimplemented(f"no code generator for {device.type} devices yet "
                                   "(the Triton backend is planned)")
    if not _numba_available():
        raise CompileUnimplemented("numba is not installed: fused kernels cannot be compiled")
    for op in group.ops:
        if op.type != "Const" and not emitters.can_emit(op):
            raise CompileUnimplemented(f"no code generator for {op.type} (node {op.name})")
    ir = lowering.lower(group, list(input_specs))
    return numba_backend.build(ir, device, cache_dir)
