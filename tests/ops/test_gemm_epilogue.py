"""kernels/gemm_epilogue.py: `_MatMulApplyMomentum`'s GEMM and weight update a block of rows
at a time. Each element is the same dot product over the whole K that ATen's `addmm` takes
(MKL may pick another micro-kernel for a block's width, so the last bit can differ), so the
results equal the unfused kernel's within float32 rounding and a float64 NumPy reference;
every transpose combination, a last block shorter than the others, the update written into
another buffer, and the same bits whatever the thread count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ndflow.kernels import gemm_epilogue, momentum_numba

pytestmark = pytest.mark.skipif(not gemm_epilogue.available(),
                                reason="needs numba, ATen's OpenMP and torch's MKL")

LR, MU, SCALE = 0.01, 0.9, 5e-4


def _operands(m, k, n, ta, tb, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    var = rng.standard_normal((m, n)).astype(np.float32)
    accum = rng.standard_normal((m, n)).astype(np.float32)
    return a, b, var, accum


def _unfused(a, b, ta, tb, var, accum, keras):
    """The kernel's ATen path: addmm into the accumulator, then the numba pass."""
    v, acc = torch.tensor(var), torch.tensor(accum)
    at, bt = torch.tensor(a), torch.tensor(b)
    alpha, decay, step = (-LR, -LR * SCALE, 1.0) if keras else (1.0, SCALE, -LR)
    torch.addmm(acc, at.t() if ta else at, bt.t() if tb else bt, beta=MU, alpha=alpha, out=acc)
    momentum_numba.apply_accumulated(v, acc, v, decay, step)
    return v.numpy(), acc.numpy()


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("keras", [True, False])
def test_blocks_equal_addmm_then_the_update(ta, tb, keras):
    # 700 rows of 300: 327 rows a block, so two full blocks and a short last one
    m, k, n = 700, 37, 300
    a, b, var, accum = _operands(m, k, n, ta, tb)
    want_v, want_a = _unfused(a, b, ta, tb, var, accum, keras)
    v, acc = torch.tensor(var), torch.tensor(accum)
    alpha, decay, step = (-LR, -LR * SCALE, 1.0) if keras else (1.0, SCALE, -LR)
    assert gemm_epilogue.matmul_apply_accumulated(torch.tensor(a), torch.tensor(b), ta, tb,
                                                  acc, v, v, alpha, MU, decay, step)
    np.testing.assert_allclose(v.numpy(), want_v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(acc.numpy(), want_a, rtol=1e-6, atol=1e-6)
    # and the float64 reference
    a64 = (a.T if ta else a).astype(np.float64)
    b64 = (b.T if tb else b).astype(np.float64)
    ref_a = MU * accum + alpha * (a64 @ b64) + decay * var
    np.testing.assert_allclose(acc.numpy(), ref_a, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(v.numpy(), var + step * ref_a, rtol=1e-5, atol=1e-4)


def test_the_new_weight_into_another_buffer():
    a, b, var, accum = _operands(300, 16, 512, True, False, seed=1)
    want_v, want_a = _unfused(a, b, True, False, var, accum, True)
    v, acc, out = torch.tensor(var), torch.tensor(accum), torch.empty(300, 512)
    assert gemm_epilogue.matmul_apply_accumulated(torch.tensor(a), torch.tensor(b), True, False,
                                                  acc, v, out, -LR, MU, -LR * SCALE, 1.0)
    np.testing.assert_allclose(out.numpy(), want_v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(acc.numpy(), want_a, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(v.numpy(), var)    # the old weight untouched


def test_the_same_bits_whatever_the_thread_count():
    a, b, var, accum = _operands(700, 37, 300, True, False, seed=2)
    results = []
    threads = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            v, acc = torch.tensor(var), torch.tensor(accum)
            assert gemm_epilogue.matmul_apply_accumulated(torch.tensor(a), torch.tensor(b),
                                                          True, False, acc, v, v, -LR, MU,
                                                          -LR * SCALE, 1.0)
            results.append((v.numpy(), acc.numpy()))
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_other_dtypes_and_layouts_are_declined():
    a, b, var, accum = (torch.tensor(t) for t in _operands(64, 8, 32, False, False))
    assert not gemm_epilogue.matmul_apply_accumulated(a.double(), b.double(), False, False,
                                                      accum.double(), var.double(),
                                                      var.double(), -LR, MU, 0.1, 1.0)
    strided = torch.empty(64, 64)[:, :32]
    assert not gemm_epilogue.matmul_apply_accumulated(a, b, False, False, strided, var, var,
                                                      -LR, MU, 0.1, 1.0)
    # declined means untouched
    np.testing.assert_array_equal(var.numpy(), _operands(64, 8, 32, False, False)[2])
