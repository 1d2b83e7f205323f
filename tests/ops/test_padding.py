"""kernels/padding.py: constant padding that fills only the border, against NumPy's pad."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import padding


def _np_pads(x, pads):
    """NumPy's [(before, after)] per dimension from constant_pad_nd's flat list."""
    per = [(0, 0)] * x.dim()
    for i in range(len(pads) // 2):
        per[x.dim() - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    return per


CASES = [
    ((3, 5, 6, 4), [0, 0, 0, 1, 0, 1]),          # NHWC, a SAME convolution's extra pad
    ((2, 4, 5, 3), [0, 0, 2, 1, 1, 3]),
    ((2, 3, 4, 5, 2), [1, 0, 0, 2, 3, 1]),       # NCDHW, three dimensions
    ((7, 9), [2, 3, 0, 4]),
    ((4, 6), [0, 0, 0, 0]),                      # nothing padded: still a copy
]


@pytest.mark.parametrize("border_only", [True, False])
@pytest.mark.parametrize("shape,pads", CASES)
@pytest.mark.parametrize("value", [0.0, -2.5])
def test_matches_numpy(monkeypatch, border_only, shape, pads, value):
    # MIN_ELEMENTS 0: every output takes the border-only path; a huge one: ATen's
    monkeypatch.setattr(padding, "MIN_ELEMENTS", 0 if border_only else 1 << 62)
    x = torch.randn(shape, dtype=torch.float64)
    got = padding.constant_pad(x, pads, value)
    want = np.pad(x.numpy(), _np_pads(x, pads), constant_values=value)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.data_ptr() != x.data_ptr()


def test_border_is_written_over_stale_memory(monkeypatch):
    """The output comes from torch.empty: freed memory full of NaN must not show through."""
    monkeypatch.setattr(padding, "MIN_ELEMENTS", 0)
    for _ in range(3):
        junk = torch.full((4, 7, 7, 3), float("nan"))
        del junk
        x = torch.ones(4, 6, 6, 3)
        y = padding.constant_pad(x, [0, 0, 0, 1, 0, 1])
        assert torch.isfinite(y).all()
        assert y[:, 6].abs().sum() == 0 and y[:, :, 6].abs().sum() == 0
        assert y[:, :6, :6].eq(1).all()


@pytest.mark.parametrize("memory", [torch.channels_last, torch.contiguous_format])
def test_keeps_memory_format(monkeypatch, memory):
    monkeypatch.setattr(padding, "MIN_ELEMENTS", 0)
    x = torch.randn(2, 3, 5, 5).contiguous(memory_format=memory)
    got = padding.constant_pad(x, [0, 1, 0, 1])
    want = torch.ops.aten.constant_pad_nd(x, [0, 1, 0, 1], 0.0)
    assert got.stride() == want.stride()
    assert torch.equal(got, want)
    x3 = torch.randn(2, 3, 4, 4, 4).contiguous(memory_format=torch.channels_last_3d)
    assert padding.constant_pad(x3, [1, 1]).is_contiguous(
        memory_format=torch.channels_last_3d)


def test_negative_pads_crop_as_atens(monkeypatch):
    monkeypatch.setattr(padding, "MIN_ELEMENTS", 0)
    x = torch.arange(24.0).reshape(4, 6)
    got = padding.constant_pad(x, [-1, 2, 1, -2])
    assert torch.equal(got, torch.ops.aten.constant_pad_nd(x, [-1, 2, 1, -2], 0.0))


def test_large_asymmetric_same_convolution_against_numpy():
    """A stride-2 SAME convolution large enough for the border-only padding (TF pads one
    row and column more at the bottom/right), forward and filter gradient, against a
    float64 NumPy reference."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 32, 32, 64))
    w = rng.standard_normal((3, 3, 64, 8)) * 0.1
    assert (8 * 33 * 33 * 64) >= padding.MIN_ELEMENTS
    xv = tf.constant(x.astype(np.float32))
    wv = tf.Variable(w.astype(np.float32))
    with tf.GradientTape() as tape:
        y = tf.nn.conv2d(xv, wv, 2, "SAME")
        loss = tf.reduce_sum(y * y)
    dw = tape.gradient(loss, wv).numpy()
    xp = np.pad(x, [(0, 0), (0, 1), (0, 1), (0, 0)])       # pad_total 1: all of it after
    cols = np.stack([xp[:, i:i + 32:2, j:j + 32:2] for i in range(3) for j in range(3)], 3)
    ref = np.einsum("nhwkc,kco->nhwo", cols, w.reshape(9, 64, 8))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-3)
    ref_dw = np.einsum("nhwkc,nhwo->kco", cols, 2 * ref).reshape(3, 3, 64, 8)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-3, atol=1e-1)


def test_pad_op_large_matches_numpy():
    x = np.random.default_rng(1).standard_normal((4, 60, 60, 40)).astype(np.float32)
    assert x.size >= padding.MIN_ELEMENTS
    p = [[0, 0], [3, 3], [1, 2], [0, 0]]
    np.testing.assert_array_equal(tf.pad(x, p).numpy(), np.pad(x, p))
    np.testing.assert_array_equal(tf.pad(x, p, constant_values=7.0).numpy(),
                                  np.pad(x, p, constant_values=7.0))
