"""tf.image.ssim, ssim_multiscale and sobel_edges against TensorFlow 2.21
(tests/fixtures/tf_image_quality, generate.py beside it, on the seeded inputs of
quality_inputs.py): float and uint8 images, the local SSIM map, other filter sizes and
constants, broadcast batches, MS-SSIM on odd sizes (symmetric padding) with static and
unknown shapes, Sobel responses in float32 and float64, and TF's errors for bad shapes."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_image_quality.quality_inputs import inputs

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures",
                                "tf_image_quality", "expected.npz"))
X = inputs()


@pytest.mark.parametrize("key, call", [
    ("ssim", lambda: tf.image.ssim(X["a"], X["b"], 1.0)),
    ("ssim_u8", lambda: tf.image.ssim(X["u8_a"], X["u8_b"], 255)),
    ("ssim_map", lambda: tf.image.ssim(X["a"], X["b"], 1.0, return_index_map=True)),
    ("ssim_7", lambda: tf.image.ssim(X["a"], X["b"], 1.0, filter_size=7, filter_sigma=1.0,
                                     k1=0.02, k2=0.05)),
    ("ssim_broadcast", lambda: tf.image.ssim(X["a"][:1], X["b"], 1.0)),
    ("ms_ssim", lambda: tf.image.ssim_multiscale(X["big_a"], X["big_b"], 1.0)),
    ("ms_ssim_3", lambda: tf.image.ssim_multiscale(X["big_a"], X["big_b"], 1.0,
                                                   power_factors=(0.2, 0.3, 0.5),
                                                   filter_size=5)),
    ("sobel", lambda: tf.image.sobel_edges(tf.constant(X["a"]))),
    ("sobel_f64", lambda: tf.image.sobel_edges(tf.constant(X["a"][:, :5, :6]
                                                           .astype(np.float64)))),
])
def test_equals_tensorflow(key, call):
    got, want = call().numpy(), EXPECTED[key]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_multiscale_with_shapes_known_only_at_run_time():
    @tf.function
    def ms(a, b):
        return tf.image.ssim_multiscale(a, b, 1.0, power_factors=(0.5, 0.5), filter_size=5)
    f = ms.get_concrete_function(tf.TensorSpec([None, None, None, 2]),
                                 tf.TensorSpec([None, None, None, 2]))
    got = f(tf.constant(X["big_a"]), tf.constant(X["big_b"])).numpy()
    np.testing.assert_allclose(got, EXPECTED["ms_ssim_dynamic"], rtol=2e-5)


def test_identical_images_have_ssim_one():
    np.testing.assert_allclose(tf.image.ssim(X["a"], X["a"], 1.0).numpy(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("name, call", [
    ("rank2", lambda: tf.image.ssim(X["a"][0, :, :, 0], X["b"][0, :, :, 0], 1.0)),
    ("mismatch", lambda: tf.image.ssim(X["a"], X["b"][:, :, :32], 1.0)),
])
def test_bad_shapes_get_tensorflows_errors(name, call):
    kind, message = str(EXPECTED[f"error/{name}"]).split(": ", 1)
    with pytest.raises(ValueError) as e:
        call()
    assert kind == "ValueError" and str(e.value) == message
