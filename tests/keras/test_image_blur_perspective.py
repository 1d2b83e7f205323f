"""RandomGaussianBlur, RandomPerspective and RandomErasing
(ndflow/keras/layers/image_blur_perspective.py)
against Keras 3 on TF 2.21 (tests/fixtures/keras_blur_perspective): fixed transformations
replayed through `transform_images`, configs; random draws; a tf.data map (graph mode, a
drawn sigma); identity in inference; Keras' errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_blur_perspective"
CONFIGS = fixture_modules.load("keras_blur_perspective")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())
NAMES = sorted(CONFIGS.CASES)


@pytest.mark.parametrize("name", NAMES)
def test_fixed_transformations_match_keras(name):
    cls, kwargs, shape, transformation = CONFIGS.CASES[name]
    layer = getattr(keras.layers, cls)(**kwargs)
    t = {k: tf.constant(v) for k, v in transformation.items()}
    got = layer.transform_images(tf.constant(CONFIGS.images(shape, NAMES.index(name))), t)
    # blur and erasing: exact; perspective: the homography solves differ in their last bits
    # (up to 2.2e-6 relative, 1.6e-4 of 255)
    np.testing.assert_allclose(got.numpy(), KERAS[name], rtol=0, atol=3e-4)
    config = json.loads(json.dumps(layer.get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS[name].items() if k != "name"}


@pytest.mark.parametrize("layer", [
    lambda: keras.layers.RandomGaussianBlur(factor=1.0, sigma=(0.3, 0.9), seed=2),
    lambda: keras.layers.RandomPerspective(factor=1.0, scale=0.6, seed=2),
])
def test_random_draws_apply_in_training_and_in_a_tf_data_map(layer):
    layer = layer()
    x = CONFIGS.images((4, 8, 8, 3), 9)
    out = layer(x, training=True).numpy()
    assert out.shape == x.shape and not np.allclose(out, x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    (batch,) = list(tf.data.Dataset.from_tensor_slices(x).batch(4).map(
        lambda v: layer(v, training=True)))
    assert batch.shape == x.shape and np.isfinite(batch.numpy()).all()


def test_erasing_replaces_one_rectangle_of_each_image_with_the_clipped_fill():
    layer = keras.layers.RandomErasing(factor=(1.0, 1.0), scale=(0.1, 0.3), fill_value=300.0,
                                       seed=1)
    x = CONFIGS.images((16, 10, 12, 3), 4)
    out = layer(x, training=True).numpy()
    for image, erased in zip(x, out):
        changed = (image != erased).any(-1)
        rows, cols = np.where(changed.any(1))[0], np.where(changed.any(0))[0]
        # a full rectangle (the channels together), its area about a fraction in `scale`
        assert changed.sum() == (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)
        assert 0.05 < changed.mean() < 0.4
        np.testing.assert_array_equal(erased[changed], 255.0)   # 300 clipped to the range
    noise = keras.layers.RandomErasing(factor=(1.0, 1.0), seed=3)(x, training=True).numpy()
    assert noise.min() >= 0 and noise.max() <= 255 and not np.allclose(noise, x)


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match="odd number"):
        keras.layers.RandomGaussianBlur(kernel_size=4)
    with pytest.raises(ValueError, match="sigma"):
        keras.layers.RandomGaussianBlur(sigma=2.0)
    with pytest.raises(ValueError, match="scale"):
        keras.layers.RandomPerspective(scale=1.5)
    with pytest.raises(NotImplementedError, match="interpolation"):
        keras.layers.RandomPerspective(interpolation="bicubic")
    with pytest.raises(ValueError, match="fill_value"):
        keras.layers.RandomErasing(fill_value=(1, 2))(np.ones((1, 4, 4, 3), np.float32),
                                                       training=True)
