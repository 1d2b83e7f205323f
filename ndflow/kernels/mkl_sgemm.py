"""MKL's Fortran `sgemm_` as torch's own library carries it, for numba callbacks that multiply
blocks of a product themselves (kernels/gemm_epilogue.py, kernels/pool_gemm.py).

The routine is found only when torch's BLAS is MKL (`BLAS_INFO=mkl`); elsewhere `address()`
is None and callers keep ATen's path. Callbacks call it through its address read at run time
(`call_sgemm`, a numba intrinsic), so that they stay cacheable on disk. MKL's
`MKL_Set_Num_Threads_Local` (the C entry point; the lower-case name is Fortran's, taking a
pointer) keeps a block's call on the thread that makes it, outside an OpenMP region too.
"""

from __future__ import annotations

import ctypes
import os

import torch

from ndflow.kernels.build_once import built_once


def _addresses() -> tuple | None:
    if "BLAS_INFO=mkl" not in torch.__config__.show():
        return None
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        lib = ctypes.CDLL(path)   # the already-loaded copy
        sgemm, local = lib.sgemm_, lib.MKL_Set_Num_Threads_Local
    except (OSError, AttributeError):
        return None
    return tuple(ctypes.cast(f, ctypes.c_void_p).value for f in (sgemm, local))


_found = built_once(_addresses)


def address() -> int | None:
    """The address of `sgemm_`, or None."""
    found = _found()
    return found[0] if found else None


def local_threads_address() -> int | None:
    """The address of `MKL_Set_Num_Threads_Local(int) -> int` (the previous count), or None."""
    found = _found()
    return found[1] if found else None


def _build_intrinsics():
    from llvmlite import ir  # noqa: PLC0415 - numba loads with the first such kernel
    from numba import types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    @intrinsic
    def call_sgemm(typingctx, address, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
                   c, ldc):
        """Calls the Fortran `sgemm_` at `address` with its 13 pointer arguments."""
        args = (transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        if not all(isinstance(t, types.CPointer) for t in args):
            return None

        def codegen(context, builder, sig, llargs):
            ptr_types = [context.get_value_type(t) for t in sig.args[1:]]
            fnty = ir.FunctionType(ir.VoidType(), ptr_types)
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            builder.call(fn, llargs[1:])
            return context.get_dummy_value()
        return types.none(address, *args), codegen

    @intrinsic
    def call_int(typingctx, address, value):
        """Calls the C function `int f(int)` at `address`."""
        if not isinstance(value, types.Integer):
            return None

        def codegen(context, builder, sig, llargs):
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(i32, [i32])
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            v = llargs[1]
            v = builder.trunc(v, i32) if value.bitwidth > 32 else \
                builder.sext(v, i32) if value.bitwidth < 32 else v
            return builder.call(fn, [v])
        return types.int32(address, value), codegen

    return call_sgemm, call_int


intrinsics = built_once(_build_intrinsics)
