"""SparseSoftmaxCrossEntropyWithLogits on float32/float64 CPU logits in one numba pass.

The ATen path (nn_loss.py) is seven kernel calls for the labels' range check, log_softmax,
gather, negation, exp and the scatter of the one-hot term; on a classifier's [64, 10] logits
each costs more in dispatch than in arithmetic (19 us warm, 170-200 us inside MNIST's training
step on a 2-core Xeon, where every call starts on caches the convolutions emptied). Here one
loop per row does what TensorFlow's kernel does: the row's maximum, `e = exp(x - max)` and their
sum, `loss = log(sum) - (x[label] - max)`, `backprop = e / sum - onehot(label)` (6 us warm). A
label outside [0, classes) is reported back (the first bad row) and raised by the caller with
TensorFlow's message. Float32 logits of more than MAX_ELEMENTS in rows shorter than a 16-lane
vector run in chunks of rows on ATen's OpenMP team: a segmentation model's per-pixel loss over
few classes is many short rows, which ATen's log_softmax (vectorized along a row) runs slowly
([65536, 2]: 0.66 -> 0.40 ms, [65536, 3]: 1.23 -> 0.69, [65536, 10]: 3.7 -> 1.3 on a 2-core
Zen 5; from 21 classes on ATen's is 2-4x faster than this scalar loop). Rows of LONG_ROWS
classes and more (a language model's vocabulary) run the same way in 16-lane vectors
(kernels/simd_numba.py's exp): [640, 5000] 1.76 -> 0.64 ms, [1120, 10000] 6.6 -> 2.3, [300,
1000] 0.26 -> 0.08. Other large inputs (float64; 16-63 classes, where the two are even) keep
ATen's kernels.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import exp_numba, omp_pool, simd_numba
from ndflow.kernels.build_once import built_once

MAX_ELEMENTS = 1 << 16    # logits beyond this: the parallel pass (short float32 rows) or ATen
CHUNK_ELEMENTS = 1 << 14  # logits a thread takes at a time in the parallel pass
SHORT_ROWS = 16           # classes below which large float32 batches take the parallel pass
LONG_ROWS = 64            # classes from which they take the vector pass (between: ATen's)
_FLOATS = (torch.float32, torch.float64)
_LABELS = (torch.int32, torch.int64)
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = softmax_rows = long_rows = exp_f32 = None
wide_vectors = vload = vstore = vsplat = vzero = vsub = vmul = vadd = vsum = None
vmax = vhmax = vexp = None


def applies(features: torch.Tensor, labels: torch.Tensor) -> bool:
    """Whether [batch, classes] `features` and [batch] `labels` run here."""
    if not (features.dtype in _FLOATS and labels.dtype in _LABELS
            and features.device.type == "cpu" and labels.device.type == "cpu"
            and features.dim() == 2 and features.shape[1] > 0):
        return False
    if features.numel() <= MAX_ELEMENTS:
        return _kernel() is not None
    c = features.shape[1]
    if features.dtype != torch.float32 or SHORT_ROWS <= c < LONG_ROWS:
        return False
    return _parallel() is not None


def sparse_xent(features: torch.Tensor, labels: torch.Tensor):
    """(loss [batch], backprop [batch, classes], first row with a bad label or -1)."""
    x = features.contiguous()
    loss = torch.empty(x.shape[0], dtype=x.dtype)
    backprop = torch.empty(x.shape, dtype=x.dtype)
    if x.numel() > MAX_ELEMENTS:
        return loss, backprop, _run_parallel(x, labels.contiguous(), loss, backprop)
    zero_one = np.array([0, 1], dtype=x.numpy().dtype)   # the float type's 0 and 1
    bad = _kernel()(x.numpy().reshape(-1), labels.contiguous().numpy(), x.shape[1],
                    zero_one[0], zero_one[1], loss.numpy(), backprop.numpy().reshape(-1))
    return loss, backprop, bad


def _run_parallel(x, labels, loss, backprop) -> int:
    rows, classes = x.shape
    chunk = max(1, CHUNK_ELEMENTS // classes)
    chunks = -(-rows // chunk)
    first_bad = np.full(chunks, -1, dtype=np.int64)   # per chunk: its first bad row
    params = np.array([classes, labels.dtype == torch.int64, classes >= LONG_ROWS],
                      dtype=np.int64)
    threads = max(1, min(torch.get_num_threads(), chunks))
    omp_pool.run_chunks(_parallel(), rows, chunk,
                        [x, labels.view(torch.int32), loss, backprop, first_bad, params],
                        threads)
    bad = first_bad[first_bad >= 0]
    return int(bad[0]) if bad.size else -1


def _rows_helper(numba):
    """`softmax_rows(x, labels, wide, classes, zero, one, loss, backprop, lo, hi)`: rows
    lo..hi of flat logits `x` (labels int64 as int32 pairs when `wide`; zero and one of the
    float type), the first bad row or -1."""
    from math import exp, log  # noqa: PLC0415

    @numba.njit(inline="always")
    def rows(x, labels, wide, c, zero, one, loss, backprop, lo, hi):
        bad = -1
        for i in range(lo, hi):
            # an int64 label's low word (labels past 2**31 are out of range: its high word)
            label = labels[2 * i] if wide else labels[i]
            if wide and labels[2 * i + 1] != 0:
                label = -1
            if label < 0 or label >= c:
                if bad < 0:
                    bad = i
                continue
            b = i * c
            m = x[b]
            for j in range(1, c):
                m = max(m, x[b + j])
            total = zero
            for j in range(c):
                e = exp(x[b + j] - m)
                backprop[b + j] = e
                total += e
            inv = one / total
            for j in range(c):
                backprop[b + j] = backprop[b + j] * inv
            backprop[b + label] -= one
            loss[i] = log(total) - (x[b + label] - m)
        return bad
    return rows


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such loss, not with ndflow
    except ImportError:
        return None
    global softmax_rows
    softmax_rows = _rows_helper(numba)

    @numba.njit(cache=True, nogil=True)
    def sparse_xent_rows(x, labels, c, zero, one, loss, backprop):
        return softmax_rows(x, labels, False, c, zero, one, loss, backprop, 0, labels.shape[0])

    return sparse_xent_rows


def _build_parallel():
    """The parallel pass: chunks of rows on ATen's OpenMP team, short rows one value at a
    time (`softmax_rows`), rows of LONG_ROWS classes and more in vectors (`long_rows`: ATen's
    log_softmax, exp and scatter for a [640, 5000] language-model batch took 2.1 ms of a
    seq2seq step, 2-core Zen 5)."""
    if _kernel() is None or omp_pool.launcher() is None:
        return None
    import numba  # noqa: PLC0415
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray, long_rows, exp_f32
    global wide_vectors, vload, vstore, vsplat, vzero, vsub, vmul, vadd, vsum, vmax, vhmax, vexp
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    ops = simd_numba.vector_ops()
    wide_vectors, vload, vstore, vsplat, vzero = (ops.wide_vectors, ops.vload, ops.vstore,
                                                  ops.vsplat, ops.vzero)
    vsub, vmul, vadd, vsum, vmax, vhmax, vexp = (ops.vsub, ops.vmul, ops.vadd, ops.vsum,
                                                 ops.vmax, ops.vhmax, ops.vexp)
    exp_f32 = exp_numba.helpers()[0]
    long_rows = _long_rows_helper(numba)

    # data = [counter, rows, chunk, (address, length) of x, labels (int32 words), loss,
    #         backprop, first_bad, params (classes, int64 labels, vector rows), finished]
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def sparse_xent_chunks(data):
        wide_vectors()
        d = carray(data, 16, dtype=np.int64)
        x = carray(address_as_pointer(d[3], np.float32), d[4])
        labels = carray(address_as_pointer(d[5], np.int32), d[6])
        loss = carray(address_as_pointer(d[7], np.float32), d[8])
        backprop = carray(address_as_pointer(d[9], np.float32), d[10])
        first_bad = carray(address_as_pointer(d[11], np.int64), d[12])
        p = carray(address_as_pointer(d[13], np.int64), d[14])
        rows, chunk, c, wide, vector = d[1], d[2], p[0], p[1] != 0, p[2] != 0
        q = claim_chunk(data)
        while q * chunk < rows:
            lo, hi = q * chunk, min(q * chunk + chunk, rows)
            if vector:
                first_bad[q] = long_rows(x, labels, wide, c, loss, backprop, lo, hi)
            else:
                first_bad[q] = softmax_rows(x, labels, wide, c, np.float32(0.0),
                                            np.float32(1.0), loss, backprop, lo, hi)
            q = claim_chunk(data)

    return sparse_xent_chunks.address


def _long_rows_helper(numba):
    """`long_rows(x, labels, wide, c, loss, backprop, lo, hi)`: `softmax_rows` for float32
    rows in 16-lane vectors (the max, exp and sum, scale passes; the last c % 16 logits of a
    row one at a time), the first bad row or -1."""
    from math import log  # noqa: PLC0415

    @numba.njit(inline="always")
    def rows(x, labels, wide, c, loss, backprop, lo, hi):
        bad = -1
        full = c - c % 16
        one = np.float32(1.0)
        for i in range(lo, hi):
            label = labels[2 * i] if wide else labels[i]
            if wide and labels[2 * i + 1] != 0:
                label = -1
            if label < 0 or label >= c:
                if bad < 0:
                    bad = i
                continue
            b = i * c
            mv = vload(x, b)
            for j in range(16, full, 16):
                mv = vmax(vload(x, b + j), mv)
            m = vhmax(mv)
            for j in range(full, c):
                m = max(m, x[b + j])
            ms = vsplat(m)
            tv = vzero()
            for j in range(0, full, 16):
                e = vexp(vsub(vload(x, b + j), ms))
                vstore(backprop, b + j, e)
                tv = vadd(tv, e)
            total = vsum(tv)
            for j in range(full, c):
                e = exp_f32(x[b + j] - m)
                backprop[b + j] = e
                total += e
            inv = one / total
            invs = vsplat(inv)
            for j in range(0, full, 16):
                vstore(backprop, b + j, vmul(vload(backprop, b + j), invs))
            for j in range(full, c):
                backprop[b + j] = backprop[b + j] * inv
            backprop[b + label] -= one
            loss[i] = np.float32(log(total)) - (x[b + label] - m)
        return bad
    return rows


# the kernels, built on the first such loss (None without numba or, for the parallel ones,
# without ATen's OpenMP)
_kernel = built_once(_build)
_parallel = built_once(_build_parallel)
