"""float32 Tanh on the CPU as TensorFlow computes it: Eigen's rational approximation (the one
TF's Tanh kernel and XLA's CPU and GPU backends use), an odd rational function of degree 13/6,
clamped where it reaches +-1 exactly and x itself near 0; over [-10, 10] at most 6.4 ulp from
the float64 tanh (mean 1.0). ATen's float32 tanh is correctly rounded but runs element by
element through libm: 2.6-2.8 ns an element on a Zen 4 core, where this loop, one division and
12 FMAs that LLVM vectorizes, takes 0.42. A numba callback run on ATen's OpenMP team
(kernels/omp_pool.py), for contiguous tensors of at least MIN_ELEMENTS (below that a launch on
the team costs more than ATen's call); the JIT's generated kernels call `tanh_f32` too.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

CHUNK = 1 << 14            # elements per claimed chunk
MIN_ELEMENTS = 1 << 12
# below this many elements the calling thread runs the loop alone: between other kernels the
# team's wake-up cost more than the work (an 8192-element call inside a GRU's step: 38 us on
# the team, 4 us alone)
PARALLEL_MIN = 1 << 16

_TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
           5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
           4.89352455891786e-03)
_TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
           4.89352518554385e-03)
_P0, _P1, _P2, _P3, _P4, _P5, _P6 = (np.float32(c) for c in _TANH_P)
_Q0, _Q1, _Q2, _Q3 = (np.float32(c) for c in _TANH_Q)
_TANH_CLAMP = np.float32(7.90531110763549805)   # the approximation is exactly +-1 here


def _tanh_f32(x):
    c = min(max(x, -_TANH_CLAMP), _TANH_CLAMP)
    z = c * c
    p = ((((((_P0 * z + _P1) * z + _P2) * z + _P3) * z + _P4) * z + _P5) * z + _P6) * c
    q = ((_Q0 * z + _Q1) * z + _Q2) * z + _Q3
    r = p / q
    # below 0.0004 tanh(x) is x in float32 (a literal: as a global LLVM kept the loop scalar)
    return r if abs(x) >= np.float32(0.0004) else x   # (NaN fails the test: NaN out)


def _numba():
    try:
        import numba  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    except ImportError:
        return None
    return numba


# tanh_f32 (a numba function of a float32) built on first use; None without numba
tanh_f32_function = built_once(
    lambda: None if _numba() is None else _numba().njit(cache=True, error_model="numpy")(
        _tanh_f32))
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = tanh_f32 = wide_vectors = None


def applies(x: torch.Tensor) -> bool:
    """Whether Tanh of `x` runs here: a contiguous float32 CPU tensor large enough."""
    return (x.dtype == torch.float32 and x.device.type == "cpu" and x.is_contiguous()
            and x.numel() >= MIN_ELEMENTS and _callback() is not None)


def tanh(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Tanh of `x` (`applies(x)` holds) into `out` (x itself for in place), or a new tensor."""
    out = torch.empty_like(x) if out is None else out
    # in place, the loop reads and writes one array: through two arrays of the same memory
    # LLVM's alias check sent it to the scalar loop (31 us instead of 7 for 8192 floats)
    if x.numel() < PARALLEL_MIN:
        into, inplace = _serial()
        if out.data_ptr() == x.data_ptr():
            inplace(x.view(-1).numpy())
        else:
            into(x.view(-1).numpy(), out.view(-1).numpy())
    else:
        omp_pool.run_chunks(_callback(), x.numel(), CHUNK, [x, out], torch.get_num_threads())
    return out


def tanh_or_aten(x: torch.Tensor) -> torch.Tensor:
    return tanh(x) if applies(x) else torch.tanh(x)


def tanh_or_aten_(x: torch.Tensor) -> torch.Tensor:
    """In place."""
    return tanh(x, x) if applies(x) else x.tanh_()


_callback = built_once(lambda: _build() if omp_pool.launcher() is not None else None)


def _build_loops():
    """(tanh_into(x, y), tanh_inplace(x)): the loops over 1-D float32 arrays, run by the
    calling thread for small tensors and by the callback for each chunk."""
    numba = _numba()
    global tanh_f32, wide_vectors
    tanh_f32, wide_vectors = tanh_f32_function(), simd_numba.vector_ops().wide_vectors

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def tanh_into(x, y):
        wide_vectors()
        for i in range(x.size):
            y[i] = tanh_f32(x[i])

    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def tanh_inplace(x):
        wide_vectors()
        for i in range(x.size):
            x[i] = tanh_f32(x[i])
    return tanh_into, tanh_inplace


_serial = built_once(_build_loops)
tanh_into = tanh_inplace = None


def _build():
    numba = _numba()
    if numba is None:
        return None
    from numba import cfunc, types  # noqa: PLC0415
    global claim_chunk, address_as_pointer, carray, tanh_into, tanh_inplace
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    tanh_into, tanh_inplace = _serial()

    # data = [counter, n, chunk, (address, length) of x, out, finished]; x's address equal
    # to out's: in place
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def tanh_chunks(data):
        d = carray(data, 8, dtype=np.int64)
        n, chunk = d[1], d[2]
        q = claim_chunk(data)
        while q * chunk < n:
            lo = q * chunk
            m = min(lo + chunk, n) - lo
            x = carray(address_as_pointer(d[3] + lo * 4, np.float32), m)
            if d[3] == d[5]:
                tanh_inplace(x)
            else:
                tanh_into(x, carray(address_as_pointer(d[5] + lo * 4, np.float32), m))
            q = claim_chunk(data)

    return tanh_chunks.address
