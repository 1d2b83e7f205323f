"""Runs a generated kernel's chunks on ATen's own OpenMP thread pool.

numba's `parallel=True` starts a second OpenMP runtime (its omppool links the system libgomp,
torch ships its own copy), so after every ATen GEMM the two pools' spinning workers fought for
the same cores: on 2 cores the MLP step of benchmarks/jit_mlp.py got slower with numba's
threads than without them. Instead a kernel is compiled as a C callback (`tramp`, see
numba_backend.render) that claims chunks of its outermost loop from an atomic counter, and
`GOMP_parallel` of the libgomp torch itself loaded runs that callback on ATen's team, whose
workers are usually still spinning from the last ATen op: no second pool, no wake-up.

Found only where ATen's parallel backend is OpenMP through GNU libgomp (or LLVM/Intel
runtimes, which export the same entry point); elsewhere `launcher()` is None and kernels run
serially on the calling thread (`run_chunks` calls the callback itself).

The JIT's generated kernels (jit/codegen) and hand-written ones (kernels/max_pool_numba.py)
share this launcher and the numba intrinsics a callback needs (`chunk_intrinsics()`: an
atomic chunk claim, an address as a typed pointer, and float32 from its bits for 16-bit
floats), built on first use so that `import ndflow` does not load numba.
"""

from __future__ import annotations

import ctypes
import os
import threading
from types import SimpleNamespace

import numpy as np
import torch

from ndflow.kernels import raw_memory

_LOCK = threading.Lock()
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)   # a callback called directly
_LAUNCHER: list = []    # [callable or None], resolved once
_INTRINSICS: list = []  # [(claim_chunk, address_as_pointer, f32_from_bits, count_finished,
                        #   f32_bits)], built once


def _loaded_omp_libraries() -> list:
    """Paths of OpenMP runtimes mapped into this process, torch's own first."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if line.rstrip().endswith(".so")
                     or ".so." in line}
    except OSError:
        paths = set()
    names = ("libgomp", "libiomp5", "libomp")
    found = [p for p in paths if os.path.basename(p).startswith(names)]
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    return sorted(found, key=lambda p: not p.startswith(torch_lib))


def _resolve():
    if "OpenMP" not in torch.__config__.parallel_info():
        return None
    for path in _loaded_omp_libraries():
        try:
            lib = ctypes.CDLL(path)   # the already-loaded copy: same handle, same thread pool
            fn = lib.GOMP_parallel
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
        fn.restype = None
        return fn
    return None


def launcher():
    """`GOMP_parallel(fn, data, num_threads, flags)` of ATen's OpenMP runtime, or None."""
    if not _LAUNCHER:
        with _LOCK:
            if not _LAUNCHER:
                _LAUNCHER.append(_resolve())
    return _LAUNCHER[0]


def run_chunks(callback_address: int, rows: int, chunk: int, arrays: list, threads: int) -> None:
    """Runs the compiled callback on `threads` threads of ATen's pool; the callback's data is
    [chunk counter, rows, chunk rows, (address, length) of each array..., finished chunks]
    as int64s. An array
    is a C-contiguous NumPy array or a contiguous CPU torch tensor (`raw_memory.span` checks
    it; a tensor's address is read with `data_ptr()`, ten times cheaper than NumPy's
    `ctypes.data`: a kernel of 17 arrays paid ~14 us for them). Without a launcher the
    callback runs on this thread, claiming every chunk itself."""
    data = chunk_data(rows, chunk, arrays)
    launch = launcher()
    if launch is None or threads < 2 or rows <= chunk:
        # one chunk (or one thread): a team would only add its launch (~5 us) to the work
        _direct(callback_address)(data.ctypes.data)
    else:
        launch(callback_address, data.ctypes.data, threads, 0)


def chunk_data(rows: int, chunk: int, arrays: list) -> np.ndarray:
    """A chunked callback's data (`run_chunks`; kernels/work_pool.py's jobs too)."""
    fields = [0, rows, chunk]
    for a in arrays:   # an (address, length) pair: a view raw_memory.strided_span checked
        fields += a if isinstance(a, tuple) else raw_memory.span(a)
    fields.append(0)   # chunks finished (`count_finished`), for callbacks that combine
    return np.array(fields, dtype=np.int64)


_DIRECT: dict = {}   # callback address -> its ctypes function


def _direct(callback_address: int):
    fn = _DIRECT.get(callback_address)
    if fn is None:
        fn = _DIRECT[callback_address] = _CALLBACK(callback_address)
    return fn


def chunk_intrinsics():
    """`(claim_chunk, address_as_pointer, f32_from_bits)`, numba intrinsics for a chunked
    callback: `claim_chunk(data)` atomically increments the int64 at `data` (a void* or an
    int64 pointer) and returns its previous value (each thread of the team claims the next
    chunk, or a slot of per-thread scratch memory);
    `address_as_pointer(address, np.float32)` is an int64 address as a typed pointer for
    `numba.carray`; `f32_from_bits(u)` is the float32 whose bits are the integer `u`
    (bfloat16 bits shifted left by 16 widen exactly)."""
    return _intrinsics()[:3]


def callback_builder(needs_launcher: bool = True):
    """What a chunked callback's builder compiles with: a namespace of `numba`, `cfunc`,
    `types`, `claim_chunk`, `address_as_pointer` and `carray`; None without numba, or
    (`needs_launcher`) without ATen's OpenMP launcher, where the caller keeps ATen's path.
    numba is imported here, on the first build, not with `import ndflow`."""
    if needs_launcher and launcher() is None:
        return None
    try:
        import numba  # noqa: PLC0415
    except ImportError:
        return None
    claim_chunk, address_as_pointer = chunk_intrinsics()[:2]
    return SimpleNamespace(numba=numba, cfunc=numba.cfunc, types=numba.types,
                           claim_chunk=claim_chunk, address_as_pointer=address_as_pointer,
                           carray=numba.carray)


def f32_bits_intrinsic():
    """`f32_bits(x)`, a numba intrinsic: the uint32 bits of the float32 `x` (the inverse of
    `f32_from_bits`; rounding to bfloat16 is integer arithmetic on them)."""
    return _intrinsics()[4]


def finish_intrinsic():
    """`count_finished(data, index)`, a numba intrinsic: atomically increments the int64
    `data[index]` and returns its previous value, ordered after every store the thread made
    before it and before every load after it (acquire-release), so that the thread that
    counts the last chunk finished sees all the other chunks' results."""
    return _intrinsics()[3]


def _intrinsics():
    if not _INTRINSICS:
        with _LOCK:
            if not _INTRINSICS:
                _INTRINSICS.append(_build_intrinsics())
    return _INTRINSICS[0]


def _build_intrinsics():
    from llvmlite import ir  # noqa: PLC0415 - numba loads with the first kernel, not ndflow
    from numba import types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    @intrinsic
    def claim_chunk(typingctx, data):
        if data != types.voidptr and data != types.CPointer(types.int64):
            return None

        def codegen(context, builder, sig, args):
            counter = builder.bitcast(args[0], ir.IntType(64).as_pointer())
            return builder.atomic_rmw("add", counter, ir.Constant(ir.IntType(64), 1),
                                      "monotonic")
        return types.int64(data), codegen

    @intrinsic
    def count_finished(typingctx, data, index):
        if data != types.voidptr or not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            base = builder.bitcast(args[0], ir.IntType(64).as_pointer())
            counter = builder.gep(base, [builder.sext(args[1], ir.IntType(64))
                                         if index.bitwidth < 64 else args[1]])
            return builder.atomic_rmw("add", counter, ir.Constant(ir.IntType(64), 1),
                                      "acq_rel")
        return types.int64(data, index), codegen

    @intrinsic
    def address_as_pointer(typingctx, address, dtype):
        elem = getattr(dtype, "instance_type", None) or getattr(dtype, "dtype", None)
        if not isinstance(address, types.Integer) or elem is None:
            return None
        ptr = types.CPointer(elem)

        def codegen(context, builder, sig, args):
            return builder.inttoptr(args[0], context.get_value_type(ptr))
        return ptr(address, dtype), codegen

    @intrinsic
    def f32_from_bits(typingctx, u):
        if not isinstance(u, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            v = builder.zext(args[0], ir.IntType(32)) if u.bitwidth < 32 else \
                builder.trunc(args[0], ir.IntType(32)) if u.bitwidth > 32 else args[0]
            return builder.bitcast(v, ir.FloatType())
        return types.float32(u), codegen

    @intrinsic
    def f32_bits(typingctx, x):
        if x != types.float32:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], ir.IntType(32))
        return types.uint32(x), codegen

    return claim_chunk, address_as_pointer, f32_from_bits, count_finished, f32_bits
