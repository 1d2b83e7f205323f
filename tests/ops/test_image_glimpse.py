"""tf.image.extract_glimpse (ExtractGlimpseV2) and tf.compat.v1.image.extract_glimpse
(ExtractGlimpse): TF 2.21's results (tests/fixtures/image_glimpse: exact values of windows
inside images and of zero fills, what random fills share with TF's, static shapes and error
types), a NumPy reference of the window placement (float32 offsets as TF computes them, and
float64 on offsets where both agree), and the statistics of the random fills."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import image_glimpse as kernels
from tests import fixture_modules

CONFIGS = fixture_modules.load("image_glimpse")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "image_glimpse" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.fixture(params=["host_gather", "host_copies", "aten"])
def path(request, monkeypatch):
    """Every implementation: NumPy on the host (CPU tensors; small windows gathered, large
    ones copied window by window, here forced either way) and the ATen ops that run on other
    devices, forced here on the CPU."""
    if request.param == "aten":
        monkeypatch.setattr(kernels, "on_host", lambda device: False)
    monkeypatch.setattr(kernels, "_COPY_LOOP_PIXELS",
                        0 if request.param == "host_copies" else 1 << 60)
    torch.manual_seed(0)        # the noise comes from torch's generator: reproducible tests
    return request.param


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name, path):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_tensorflow_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def _corner(v, size, glimpse, version, normalized, centered, dtype):
    """The window's top-left pixel along one axis (eigen_attention.h), in `dtype`."""
    v, size, half_g = dtype(v), dtype(size), dtype(glimpse) / dtype(2)
    if version == 1 or (normalized and centered):
        if normalized:
            v = v * size
        if centered:
            v = v / dtype(2) + size / dtype(2)
        v = v - half_g
    elif centered:
        v = v + size / dtype(2)
    elif normalized:
        v = v * size
    return int(np.trunc(v))


def reference(image, size, offsets, version, normalized, centered, dtype=np.float32):
    """NumPy glimpses, NaN where the window leaves the image."""
    b, h, w, c = image.shape
    out = np.full((b, size[0], size[1], c), np.nan)
    for n in range(b):
        oy = _corner(offsets[n][0], h, size[0], version, normalized, centered, dtype)
        ox = _corner(offsets[n][1], w, size[1], version, normalized, centered, dtype)
        for i in range(size[0]):
            for j in range(size[1]):
                if 0 <= oy + i < h and 0 <= ox + j < w:
                    out[n, i, j] = image[n, oy + i, ox + j]
    return out


def _glimpse(version, image, size, offsets, normalized, centered, noise="zero"):
    if version == 2:
        return tf.image.extract_glimpse(image, size, offsets, centered=centered,
                                        normalized=normalized, noise=noise).numpy()
    return tf.raw_ops.ExtractGlimpse(input=image, size=size, offsets=offsets,
                                     centered=centered, normalized=normalized,
                                     uniform_noise=noise == "uniform", noise=noise).numpy()


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("centered", [True, False])
def test_window_placement_matches_numpy(version, normalized, centered, path):
    rng = np.random.default_rng(version * 4 + normalized * 2 + centered)
    image = (rng.random((6, 9, 11, 2)) + 1).astype(np.float32)
    scale = 1.2 if normalized else 14.0
    offsets = (rng.random((6, 2)) * 2 - 1).astype(np.float32) * scale
    for size in [(4, 5), (1, 1), (9, 11), (12, 3)]:
        got = _glimpse(version, image, size, offsets, normalized, centered)
        want = reference(image, size, offsets, version, normalized, centered)
        np.testing.assert_array_equal(got, np.nan_to_num(want, nan=0.0))


@pytest.mark.parametrize("version", [1, 2])
def test_float64_reference_on_exact_offsets(version, path):
    """Offsets on multiples of 1/8 of small images: float32 and float64 place the windows
    alike, so the float64 reference checks the placement formulas independently."""
    image = (np.arange(2 * 8 * 16 * 1, dtype=np.float32) + 1).reshape(2, 8, 16, 1)
    for normalized, centered in [(True, True), (True, False), (False, True), (False, False)]:
        for o in ([-0.625, 0.375], [0.5, -0.875], [0.125, 0.25]):
            offsets = np.array([o, o[::-1]], np.float32) * (1 if normalized else 8)
            got = _glimpse(version, image, (3, 5), offsets, normalized, centered)
            want = reference(image, (3, 5), offsets, version, normalized, centered,
                             dtype=np.float64)
            np.testing.assert_array_equal(got, np.nan_to_num(want, nan=0.0))


def test_truncation_is_toward_zero_and_nan_is_outside(path):
    image = (np.arange(25, dtype=np.float32) + 1).reshape(1, 5, 5, 1)
    g = tf.image.extract_glimpse(image, [2, 2], [[-0.9, 1.9]], centered=False,
                                 normalized=False, noise="zero").numpy()[0, ..., 0]
    np.testing.assert_array_equal(g, [[2, 3], [7, 8]])      # -0.9 -> 0, 1.9 -> 1
    g = tf.image.extract_glimpse(image, [2, 2], [[-1.0, np.nan]], centered=False,
                                 normalized=False, noise="zero").numpy()
    np.testing.assert_array_equal(g, np.zeros_like(g))


def _outside_fill(noise, image, size=(40, 50)):
    """The fill of a glimpse wholly outside `image`."""
    b = image.shape[0]
    return tf.image.extract_glimpse(image, size, np.full((b, 2), 50.0, np.float32),
                                    centered=False, normalized=False, noise=noise).numpy()


def test_uniform_fill_statistics(path):
    rng = np.random.default_rng(1)
    channels = np.array([[1, 0], [5, 5], [1, -3]])           # [0, 1], [5, 10], [-3, -2]
    image = np.stack([rng.random((8, 8, 3)) * channels[:, 0] + channels[:, 1],
                      rng.random((8, 8, 3)) * 10 + 5]).astype(np.float32)
    fill = _outside_fill("uniform", image)
    for b in range(2):
        low, high = image[b].min(), image[b].max()
        v = fill[b].astype(np.float64)
        assert low <= v.min() and v.max() < high               # [min, max) of the image
        assert abs(v.mean() - (low + high) / 2) < 0.02 * (high - low)
        assert abs(v.std() - (high - low) / np.sqrt(12)) < 0.02 * (high - low)
        # one range for all channels: each channel's noise spans the image's range
        for c in range(3):
            assert v[..., c].min() < low + 0.05 * (high - low)
            assert v[..., c].max() > high - 0.05 * (high - low)
    assert np.unique(fill).size > 0.99 * fill.size


def test_gaussian_fill_statistics_per_channel(path):
    rng = np.random.default_rng(2)
    channels = [rng.normal(0, 1, (30, 30)), rng.normal(10, 3, (30, 30)),
                rng.normal(-4, 0.5, (30, 30))]
    image = np.stack(channels, -1)[None].astype(np.float32)
    fill = _outside_fill("gaussian", image, (100, 100))[0].astype(np.float64)
    for c in range(3):
        x = image[0, ..., c].astype(np.float64)
        v = fill[..., c]
        assert x.min() <= v.min() and v.max() <= x.max()       # clipped to the channel
        assert abs(v.mean() - x.mean()) < 0.05 * x.std()       # 5 standard errors
        assert abs(v.std() - x.std()) < 0.04 * x.std()


def test_gaussian_fill_clips_to_the_channel_range(path):
    image = np.zeros((1, 10, 10, 1), np.float32)
    image[0, 0, 0, 0], image[0, 0, 1, 0] = -1, 1       # sigma 0.14, clipped at +-1
    fill = _outside_fill("gaussian", image)[0, ..., 0]
    assert fill.min() >= -1 and fill.max() <= 1
    constant = np.full((1, 4, 4, 2), 3.0, np.float32)
    np.testing.assert_array_equal(_outside_fill("gaussian", constant), 3.0)
    np.testing.assert_array_equal(_outside_fill("uniform", constant), 3.0)


def test_noise_only_where_the_window_leaves_the_image(path):
    image = (np.arange(2 * 6 * 6 * 1, dtype=np.float32) + 1).reshape(2, 6, 6, 1)
    offsets = np.array([[1.0, 1.0], [4.0, -2.0]], np.float32)
    zero = tf.image.extract_glimpse(image, [4, 4], offsets, centered=False, normalized=False,
                                    noise="zero").numpy()
    for noise in ("uniform", "gaussian"):
        got = tf.image.extract_glimpse(image, [4, 4], offsets, centered=False,
                                       normalized=False, noise=noise).numpy()
        np.testing.assert_array_equal(got[0], zero[0])        # inside: no noise drawn
        inside = zero[1] != 0
        np.testing.assert_array_equal(got[1][inside], zero[1][inside])
        assert (got[1][~inside] != 0).all() and np.unique(got[1][~inside]).size > 1


def test_fills_differ_between_calls(path):
    image = np.random.default_rng(0).random((1, 5, 5, 1)).astype(np.float32)
    a, b = (_outside_fill("uniform", image, (6, 6)) for _ in range(2))
    assert not np.array_equal(a, b)


def test_error_messages_are_tensorflows():
    x = np.ones((2, 4, 4, 1), np.float32)
    zeros = np.zeros((2, 2), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input must be 4-dimensional \(batch_size, height, width, "
                             r"depth\)\[4,4,1\]"):
        tf.image.extract_glimpse(x[0], [2, 2], zeros)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"second dimension should be of size 2 \(y,x\)\[2,3\]"):
        tf.image.extract_glimpse(x, [2, 2], np.zeros((2, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The noise could only be uniform, gaussian, or zero, gotfoo"):
        tf.image.extract_glimpse(x, [2, 2], zeros, noise="foo")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The uniform_noise and noise could not be specified"):
        tf.raw_ops.ExtractGlimpse(input=x, size=[2, 2], offsets=zeros, noise="zero")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Expected a non-negative size, got -3"):
        tf.image.extract_glimpse(x, [1, -3], zeros)
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="The uniform_noise should not be True when noise is not"):
        tf.raw_ops.ExtractGlimpse(input=x, size=[2, 2], offsets=zeros, noise="gaussian")


def test_gradients():
    """ExtractGlimpse is NotDifferentiable (no gradient for its input); ExtractGlimpseV2 has
    none registered (differentiating through it is an error), as TF."""
    x = tf.constant(np.ones((1, 4, 4, 1), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.compat.v1.image.extract_glimpse(x, [2, 2], [[0.0, 0.0]])
    assert tape.gradient(y, x) is None
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.image.extract_glimpse(x, [2, 2], [[0.0, 0.0]])
    with pytest.raises(LookupError):
        tape.gradient(y, x)
