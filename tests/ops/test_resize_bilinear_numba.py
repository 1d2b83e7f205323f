"""The numba bilinear resize (ndflow/kernels/resize_bilinear_numba.py) computes TF's lerps in
TF's order: bit for bit the taps path of kernels/image_resize.py (`_lerp` along width, then
height), for every center mode, shape and thread count; tf.image.resize takes it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import resize_bilinear_numba
from ndflow.kernels.image_resize import _lerp, bilinear_taps

pytestmark = pytest.mark.skipif(
    not resize_bilinear_numba.applies(torch.zeros(1, 1, 1, 1)),
    reason="numba or ATen's OpenMP launcher unavailable")


@pytest.mark.parametrize("shape, out", [((3, 5, 7, 3), (11, 4)), ((2, 9, 4, 1), (3, 13)),
                                        ((1, 16, 16, 5), (16, 16)), ((4, 2, 3, 2), (1, 1)),
                                        ((5, 4, 6, 3), (13, 9)), ((2, 1, 3, 2), (4, 5))])
@pytest.mark.parametrize("corners, half", [(False, True), (True, False), (False, False)])
@pytest.mark.parametrize("threads", [1, 2])
def test_equals_tfs_lerps_bit_for_bit(shape, out, corners, half, threads):
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    x[0, 0, 0, 0] = np.inf   # and non-finite values propagate as TF's arithmetic does
    y_taps = bilinear_taps(shape[1], out[0], corners, half)
    x_taps = bilinear_taps(shape[2], out[1], corners, half)
    want = _lerp(_lerp(x, 2, x_taps), 1, y_taps)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = resize_bilinear_numba.resize(x, y_taps, x_taps)
    finally:
        torch.set_num_threads(before)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_tf_image_resize_takes_it(monkeypatch):
    calls = []
    original = resize_bilinear_numba.resize
    monkeypatch.setattr(resize_bilinear_numba, "resize",
                        lambda *a: calls.append(a[0].shape) or original(*a))
    x = np.random.default_rng(1).random((2, 6, 5, 3)).astype(np.float32)
    out = tf.image.resize(x, [9, 4]).numpy()
    assert calls == [torch.Size([2, 6, 5, 3])] and out.shape == (2, 9, 4, 3)
