"""kernels/permute.py and transpose_numba.py: permutations that move the innermost dimension,
in 16 x 16 blocks, against ATen's copy and NumPy."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import permute, transpose_numba

needs_kernel = pytest.mark.skipif(not transpose_numba.applies(torch.ones(1)),
                                  reason="numba or ATen's OpenMP launcher not found")


@pytest.mark.parametrize("shape,perm,want", [
    ((8, 5, 6, 7), (0, 3, 1, 2), ((8, 30, 7), (0, 2, 1))),      # NHWC -> NCHW
    ((5, 5, 64, 128), (3, 0, 1, 2), ((1600, 128), (1, 0))),     # HWIO -> OHWI
    ((5, 1, 5, 64, 128), (4, 1, 0, 2, 3), ((1600, 128), (1, 0))),   # a size-1 dimension
    ((2, 3, 4), (0, 1, 2), ((24,), (0,))),
    ((2, 3, 4, 5), (0, 2, 1, 3), ((2, 3, 4, 5), (0, 2, 1, 3))),
    ((2, 3, 4, 5), (3, 2, 1, 0), ((2, 3, 4, 5), (3, 2, 1, 0))),
])
def test_reduced(shape, perm, want):
    assert permute.reduced(shape, perm) == want


@needs_kernel
@pytest.mark.parametrize("shape,perm", [
    ((16, 16), (1, 0)),                 # one block
    ((17, 33), (1, 0)),                 # ragged edges: the last band and block overlap
    ((1000, 37), (1, 0)),
    ((3, 200, 45), (0, 2, 1)),
    ((4, 9, 7, 40), (0, 3, 1, 2)),      # NHWC -> NCHW
    ((4, 40, 9, 7), (0, 2, 3, 1)),      # NCHW -> NHWC
    ((3, 3, 70, 50), (3, 0, 1, 2)),     # HWIO -> OHWI
    ((50, 3, 3, 70), (1, 2, 3, 0)),     # OHWI -> HWIO
    ((6, 2, 16, 100), (0, 1, 3, 2)),    # batch merged from two dimensions
])
def test_blocked_transpose_matches_numpy(monkeypatch, shape, perm):
    monkeypatch.setattr(permute, "MIN_ELEMENTS", 0)
    calls = []
    real = transpose_numba.transpose
    monkeypatch.setattr(transpose_numba, "transpose",
                        lambda *a: calls.append(a[1:]) or real(*a))
    x = torch.randn(shape)
    got = permute.permute_copy(x, perm)
    assert calls, "the blocked transpose did not run"
    assert got.is_contiguous() and got.shape == x.permute(perm).shape
    np.testing.assert_array_equal(got.numpy(), np.transpose(x.numpy(), perm))


@pytest.mark.parametrize("x,perm", [
    (torch.randn(4, 5, 6), (0, 2, 1)),                       # a side under 16
    (torch.randn(20, 30, 40), (1, 0, 2)),                    # innermost dimension kept
    (torch.randn(20, 30, 40), (2, 1, 0)),                    # not a batch of transposes
    (torch.randn(40, 30, dtype=torch.float64), (1, 0)),      # not float32
    (torch.randn(40, 60)[:, :50], (1, 0)),                   # not contiguous
    (torch.arange(3000, dtype=torch.int32).reshape(60, 50), (1, 0)),
])
def test_other_permutations_run_atens_copy(monkeypatch, x, perm):
    monkeypatch.setattr(permute, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(transpose_numba, "transpose",
                        lambda *a: pytest.fail("the blocked transpose ran"))
    got = permute.permute_copy(x, perm)
    assert got.is_contiguous() and torch.equal(got, x.permute(perm))


@needs_kernel
def test_transpose_op_large_matches_numpy():
    x = np.random.default_rng(0).standard_normal((8, 30, 30, 48)).astype(np.float32)
    assert x.size >= permute.MIN_ELEMENTS
    np.testing.assert_array_equal(tf.transpose(x, [0, 3, 1, 2]).numpy(),
                                  np.transpose(x, [0, 3, 1, 2]))
    m = x.reshape(-1, 480)
    np.testing.assert_array_equal(tf.transpose(m).numpy(), m.T)


@needs_kernel
@pytest.mark.parametrize("strides,padding", [(1, "SAME"), (2, "SAME"), (2, "VALID")])
def test_convolution_with_a_large_filter_against_numpy(monkeypatch, strides, padding):
    """A filter large enough for the blocked transpose (3x3x128x96: the channels-last copy
    of each pass and the filter gradient's reorder back to HWIO): forward, input and filter
    gradients against float64 NumPy."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 9, 9, 128))
    w = rng.standard_normal((3, 3, 128, 96)) * 0.05
    assert w.size >= permute.MIN_ELEMENTS
    calls = []
    real = transpose_numba.transpose
    monkeypatch.setattr(transpose_numba, "transpose",
                        lambda *a: calls.append(a[1:]) or real(*a))
    xv, wv = tf.Variable(x.astype(np.float32)), tf.Variable(w.astype(np.float32))
    with tf.GradientTape() as tape:
        y = tf.nn.conv2d(xv, wv, strides, padding)
        loss = tf.reduce_sum(y * y)
    dx, dw = tape.gradient(loss, [xv, wv])
    assert (1, 1152, 96) in calls or (1, 96, 1152) in calls   # HWIO <-> OHWI at least once
    h = x.shape[1]
    out = -(-h // strides) if padding == "SAME" else (h - 3) // strides + 1
    total = max((out - 1) * strides + 3 - h, 0) if padding == "SAME" else 0
    before = total // 2
    xp = np.pad(x, [(0, 0), (before, total - before), (before, total - before), (0, 0)])
    span = (out - 1) * strides + 1
    cols = np.stack([xp[:, i:i + span:strides, j:j + span:strides]
                     for i in range(3) for j in range(3)], 3)          # n, oh, ow, tap, c
    ref = np.einsum("nhwkc,kco->nhwo", cols, w.reshape(9, 128, 96))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-3)
    g = 2 * ref
    ref_dw = np.einsum("nhwkc,nhwo->kco", cols, g).reshape(w.shape)
    np.testing.assert_allclose(dw.numpy(), ref_dw, rtol=1e-3, atol=5e-2)
    dcols = np.einsum("nhwo,kco->nhwkc", g, w.reshape(9, 128, 96))
    ref_dxp = np.zeros_like(xp)
    for k in range(9):
        i, j = divmod(k, 3)
        ref_dxp[:, i:i + span:strides, j:j + span:strides] += dcols[:, :, :, k]
    ref_dx = ref_dxp[:, before:before + h, before:before + h]
    np.testing.assert_allclose(dx.numpy(), ref_dx, rtol=1e-3, atol=5e-2)


@needs_kernel
def test_conv3d_with_a_large_filter_against_numpy(monkeypatch):
    """Conv3D's channels-last filter and its filter gradient's reorder by the blocked
    transpose (3x3x3x64x48): forward and both gradients against float64 NumPy (VALID)."""
    calls = []
    real = transpose_numba.transpose
    monkeypatch.setattr(transpose_numba, "transpose",
                        lambda *a: calls.append(a[1:]) or real(*a))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 5, 5, 64))
    w = rng.standard_normal((3, 3, 3, 64, 48)) * 0.05
    assert w.size >= permute.MIN_ELEMENTS
    xv, wv = tf.Variable(x.astype(np.float32)), tf.Variable(w.astype(np.float32))
    with tf.GradientTape() as tape:
        y = tf.nn.conv3d(xv, wv, [1, 1, 1, 1, 1], "VALID")
        loss = tf.reduce_sum(y * y)
    dx, dw = tape.gradient(loss, [xv, wv])
    assert (1, 1728, 48) in calls and (1, 48, 1728) in calls
    taps = [(a, b, c) for a in range(3) for b in range(3) for c in range(3)]
    cols = np.stack([x[:, a:a + 2, b:b + 3, c:c + 3] for a, b, c in taps], 4)
    ref = np.einsum("ndhwkc,kco->ndhwo", cols, w.reshape(27, 64, 48))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-3)
    g = 2 * ref
    np.testing.assert_allclose(dw.numpy(), np.einsum("ndhwkc,ndhwo->kco", cols, g).reshape(
        w.shape), rtol=1e-3, atol=5e-2)
    dcols = np.einsum("ndhwo,kco->ndhwkc", g, w.reshape(27, 64, 48))
    ref_dx = np.zeros_like(x)
    for k, (a, b, c) in enumerate(taps):
        ref_dx[:, a:a + 2, b:b + 3, c:c + 3] += dcols[:, :, :, :, k]
    np.testing.assert_allclose(dx.numpy(), ref_dx, rtol=1e-3, atol=5e-2)
