"""kernels/image_transform_numba.py: ImageProjectiveTransformV3 on float32 CPU images as one
pass over the output pixels must give the bits kernels/image_transform.py's ATen form gives
(itself checked against TensorFlow's fixtures in tests/keras/test_image_preprocessing.py):
random images, sizes, per-image and shared transforms (affine, projective, far outside the
image), every fill mode and interpolation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ndflow.kernels import image_transform, image_transform_numba

pytestmark = pytest.mark.skipif(not image_transform_numba.applies(torch.zeros(1, 1, 1, 1)),
                                reason="needs numba and ATen's OpenMP launcher")


@pytest.mark.parametrize("trial", range(12))
def test_the_same_bits_as_the_aten_form(trial):
    rng = np.random.default_rng(trial)
    b, h, w, c = (int(v) for v in rng.integers(1, 6, 4))
    h, w = h * 2, w * 3
    oh, ow = (int(v) for v in rng.integers(1, 14, 2))
    images = torch.tensor(rng.standard_normal((b, h, w, c)), dtype=torch.float32)
    n = 1 if trial % 2 else b
    t = rng.standard_normal((n, 8)) * np.array([1, 0.5, 4, 0.5, 1, 4, 0.05, 0.05])
    if trial % 3 == 0:
        t[:, 6:] = 0                              # affine
    if trial % 4 == 0:
        t[0] *= 40                                # far outside the image
    transforms = torch.tensor(t, dtype=torch.float32)
    for mode in image_transform_numba.MODES:
        for interpolation in ("NEAREST", "BILINEAR"):
            fill = float(rng.standard_normal())
            want = image_transform.aten_projective_transform(images, transforms, oh, ow, fill,
                                                             interpolation, mode)
            got = image_transform_numba.projective_transform(images, transforms, oh, ow, fill,
                                                             interpolation, mode)
            assert torch.equal(got, want), (mode, interpolation)


def test_a_nan_or_zero_denominator_point_gives_the_fill_value():
    images = torch.arange(12, dtype=torch.float32).reshape(1, 2, 2, 3)
    for t in ([float("nan")] + [0.0] * 7, [1.0, 0, 0, 0, 1, 0, 0, -1.0]):
        out = image_transform_numba.projective_transform(
            images, torch.tensor([t]), 2, 2, 7.5, "BILINEAR", "REFLECT")
        if np.isnan(t[0]):
            assert torch.all(out == 7.5)
        else:                                      # row y = 1: 1 - y = 0
            assert torch.all(out[0, 1] == 7.5) and torch.equal(out[0, 0], images[0, 0])


def test_other_dtypes_keep_the_aten_form():
    assert not image_transform_numba.applies(torch.zeros(1, 2, 2, 1, dtype=torch.float64))
    assert not image_transform_numba.applies(torch.zeros(1, 2, 2, 1, dtype=torch.uint8))
