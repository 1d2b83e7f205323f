"""keras.layers.RandAugment (ndflow/keras/layers/image_rand_augment.py): Keras 3's config
(tests/fixtures/keras_color_random/configs.json, from Keras on TF 2.21); a drawn index replays
the chosen augmentation exactly; it changes images in training only, also in a tf.data map."""

from __future__ import annotations

import json

import numpy as np

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
KERAS_CONFIGS = json.loads(
    (fixture_modules.FIXTURES / "keras_color_random" / "configs.json").read_text())


def _images(n=4):
    return (255 * np.random.default_rng(0).random((n, 12, 12, 3)) ** 2).astype(np.float32)


def test_config_is_keras():
    config = json.loads(json.dumps(
        keras.layers.RandAugment(num_ops=3, factor=0.4, seed=1).get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS["rand_augment"].items() if k != "name"}


def test_a_drawn_index_applies_that_augmentation():
    layer = keras.layers.RandAugment(num_ops=1, seed=2)
    x = tf.constant(_images())
    t = layer.get_random_transformation(x)
    for index, name in ((10, "equalization"), (9, "auto_contrast")):
        t["layer_idxes"] = tf.constant([index])
        got = layer.transform_images(x, t).numpy()
        want = getattr(layer, name).transform_images(x, t["transforms"][name]).numpy()
        np.testing.assert_array_equal(got, want)
        assert not np.allclose(got, x.numpy())


def test_changes_images_in_training_only_also_in_a_tf_data_map():
    layer = keras.layers.RandAugment(num_ops=2, factor=0.6, seed=3)
    x = _images()
    assert not np.allclose(layer(x, training=True).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    batches = list(tf.data.Dataset.from_tensor_slices(x).batch(2).map(
        lambda v: layer(v, training=True)))
    assert [tuple(b.shape) for b in batches] == [(2, 12, 12, 3)] * 2
