"""keras.layers.RandAugment and AugMix (ndflow/keras/layers/image_rand_augment.py): Keras 3's
configs (tests/fixtures/keras_color_random/configs.json, from Keras on TF 2.21); a drawn
index replays the chosen augmentation exactly, AugMix's mixing follows its formula; they
change images in training only, also in a tf.data map."""

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


def test_aug_mix_config_is_keras():
    config = json.loads(json.dumps(keras.layers.AugMix(
        num_chains=2, chain_depth=4, factor=0.5, alpha=0.7, all_ops=False,
        seed=4).get_config(), default=list))
    assert {k: v for k, v in config.items() if k != "name"} == \
        {k: v for k, v in KERAS_CONFIGS["aug_mix"].items() if k != "name"}


def test_aug_mix_mixes_chains_and_the_original_by_the_drawn_weights():
    layer = keras.layers.AugMix(num_chains=2, seed=5)
    x = tf.constant(_images())
    t = layer.get_random_transformation(x)
    weights = t["chain_mixing_weights"].numpy()
    assert weights.shape == (2,) and abs(weights.sum() - 1) < 1e-6 and (weights >= 0).all()
    assert 0 <= float(t["weight_sample"]) <= 1
    # chains: auto-contrast, then nothing
    t["chain_transforms"] = [[{"layer_name": "auto_contrast", "transformation": None}], []]
    t["chain_mixing_weights"] = tf.constant([0.25, 0.75])
    t["weight_sample"] = tf.constant(0.4)
    contrasted = layer.auto_contrast.transform_images(x, None).numpy()
    want = 0.4 * x.numpy() + 0.6 * (0.25 * contrasted + 0.75 * x.numpy())
    np.testing.assert_allclose(layer.transform_images(x, t).numpy(), np.clip(want, 0, 255),
                               rtol=1e-5, atol=1e-3)


def test_aug_mix_changes_images_in_training_only_also_in_a_tf_data_map():
    layer = keras.layers.AugMix(seed=6)
    x = _images()
    out = layer(x, training=True).numpy()
    assert not np.allclose(out, x) and out.min() >= 0 and out.max() <= 255
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    batches = list(tf.data.Dataset.from_tensor_slices(x).batch(2).map(
        lambda v: layer(v, training=True)))
    assert [tuple(b.shape) for b in batches] == [(2, 12, 12, 3)] * 2
