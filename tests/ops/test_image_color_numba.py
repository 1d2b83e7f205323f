"""The one-pass AdjustHue / AdjustSaturation kernel (ndflow/kernels/image_color_numba.py)
gives the ATen kernels' values bit for bit (those are checked against TF 2.21 in
test_image_ops), for random images with grays, zeros and saturated pixels, every hue
sector, shifts either way, scales above and below 1, on 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import image_color_numba

pytestmark = pytest.mark.skipif(
    not image_color_numba.applies(torch.zeros(1, 3)),
    reason="numba or ATen's OpenMP launcher unavailable")


def _images():
    rng = np.random.default_rng(0)
    x = rng.random((4, 33, 17, 3)).astype(np.float32)
    x[0, 0, :5] = [[0.5, 0.5, 0.5], [0, 0, 0], [1, 0, 0], [0, 1, 1], [0.2, 0.2, 0.7]]
    x[1] *= 255.0                  # other value ranges
    x[2, :, :, 1] = x[2, :, :, 0]  # ties between channels
    return x


def _aten(monkeypatch, fn):
    monkeypatch.setattr(image_color_numba, "applies", lambda x: False)
    return fn().numpy()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("delta", [0.0, 0.13, -0.4, 0.999, -1.0, 1.7, -2.3])
def test_hue_equals_the_aten_kernel_bit_for_bit(monkeypatch, threads, delta):
    x = tf.constant(_images())
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        got = _hue(x, delta).numpy()
    finally:
        torch.set_num_threads(before)
    np.testing.assert_array_equal(got, _aten(monkeypatch, lambda: _hue(x, delta)))


def _hue(x, delta):
    # the raw op takes shifts past a whole turn (tf.image.adjust_hue refuses |delta| > 1)
    return tf.raw_ops.AdjustHue(images=x, delta=tf.constant(delta, tf.float32))


@pytest.mark.parametrize("scale", [0.0, 0.35, 1.0, 2.5])
def test_saturation_equals_the_aten_kernel_bit_for_bit(monkeypatch, scale):
    x = tf.constant(_images())
    got = tf.image.adjust_saturation(x, scale).numpy()
    np.testing.assert_array_equal(
        got, _aten(monkeypatch, lambda: tf.image.adjust_saturation(x, scale)))
