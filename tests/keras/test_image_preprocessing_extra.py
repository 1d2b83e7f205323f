"""Keras 3's value-changing image layers (AutoContrast, Solarization, RandomGrayscale,
RandomInvert, RandomSharpness, MixUp) and RandomShear: values at fixed draws against Keras 3.15
(tests/fixtures/keras_image_preprocessing/generate.py), distributions, inference identity."""

import os

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_image_preprocessing")
L = tf.keras.layers


@pytest.fixture(scope="module")
def fx():
    return dict(np.load(os.path.join(HERE, "outputs_extra.npz")))


def test_auto_contrast_matches_keras(fx):
    x = fx["x"]
    np.testing.assert_allclose(L.AutoContrast()(x).numpy(), fx["auto_contrast"], rtol=1e-5,
                               atol=1e-3)
    np.testing.assert_allclose(L.AutoContrast((0, 1))(x / 255.0).numpy(),
                               fx["auto_contrast_01"], rtol=1e-5, atol=1e-5)
    out = L.AutoContrast()(fx["x_u8"]).numpy()
    assert out.dtype == np.float32     # Keras 3.15: uint8 in, float32 out
    np.testing.assert_allclose(out, fx["auto_contrast_u8"], rtol=1e-5, atol=1e-3)
    # NumPy reference: each channel stretched to [0, 255]
    lo, hi = x.min(axis=(1, 2), keepdims=True), x.max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(L.AutoContrast()(x).numpy(), (x - lo) * 255 / (hi - lo),
                               rtol=1e-4, atol=1e-3)


def test_solarization_sharpness_shear_grayscale_at_fixed_draws(fx):
    x = fx["x"]
    sol = L.Solarization(0.5, 0.5)
    adds, ths = tf.constant([[[[10.0]]], [[[40.0]]]]), tf.constant([[[[100.0]]], [[[200.0]]]])
    np.testing.assert_allclose(sol.transform_images(tf.constant(x), (adds, ths)).numpy(),
                               fx["solarization"], rtol=1e-6, atol=1e-4)
    sharp = L.RandomSharpness(0.5)
    np.testing.assert_allclose(
        sharp.transform_images(tf.constant(x), tf.constant([0.1, 0.9])).numpy(),
        fx["sharpness"], rtol=1e-5, atol=1e-3)
    shear = L.RandomShear(0.3, 0.3, fill_mode="constant")
    factors = tf.constant([[0.2, -0.1], [-0.3, 0.25]])
    np.testing.assert_array_equal(shear.matrix(tf.constant(x), factors).numpy(),
                                  fx["shear_matrix"])
    np.testing.assert_allclose(shear.transform_images(tf.constant(x), factors).numpy(),
                               fx["shear"], rtol=1e-5, atol=1e-3)
    img = x[..., :1].repeat(3, -1) * np.array([1, 0.5, 0.25], np.float32)
    gray = L.RandomGrayscale(1.0).transform_images(
        tf.constant(img), tf.constant([[[[True]]], [[[False]]]])).numpy()
    np.testing.assert_allclose(gray, fx["grayscale"], rtol=1e-6, atol=1e-4)


def test_random_invert_and_grayscale_probabilities():
    x = np.random.default_rng(0).random((400, 2, 2, 3)).astype(np.float32)
    out = L.RandomInvert(1.0, value_range=(0, 1), seed=3)(x).numpy()   # (seeded: not flaky)
    inv = np.all(np.isclose(out, 1 - x), axis=(1, 2, 3))
    assert np.all(inv | np.all(out == x, axis=(1, 2, 3))) and 0.4 < inv.mean() < 0.6
    out = L.RandomGrayscale(0.25, seed=4)(x * 255).numpy()
    grey = np.all(np.isclose(out[..., 0], out[..., 1]) & np.isclose(out[..., 1], out[..., 2]),
                  axis=(1, 2))
    assert 0.17 < grey.mean() < 0.33
    ref = (x * 255) @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    np.testing.assert_allclose(out[grey][..., 0], ref[grey], rtol=1e-5)


def test_mixup_weights_are_convex_mixes_of_the_batch():
    x = np.eye(6, dtype=np.float32).reshape(6, 1, 1, 6)
    out = L.MixUp(0.5, seed=1)(x).numpy().reshape(6, 6)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(out >= -1e-6)
    assert np.all(np.count_nonzero(out > 1e-6, axis=1) <= 2)
    assert np.allclose(L.MixUp()(x, training=False).numpy(), x)
    np.testing.assert_allclose(L.MixUp()(x[0]).numpy(), x[0], rtol=1e-6)  # mixed with itself


@pytest.mark.parametrize("make", [
    lambda: L.Solarization(0.3, 0.5), lambda: L.RandomInvert(),
    lambda: L.RandomSharpness(0.5), lambda: L.RandomShear(0.3, 0.3),
    lambda: L.RandomGrayscale(1.0)])
def test_identity_at_inference_and_unbatched(make):
    x = np.random.default_rng(1).random((3, 6, 7, 3)).astype(np.float32) * 255
    layer = make()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    model = tf.keras.Sequential([tf.keras.Input((6, 7, 3)), layer])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    assert layer(x[0]).shape == x[0].shape


def test_extra_bad_arguments():
    with pytest.raises(ValueError, match="value_range"):
        L.AutoContrast(value_range=3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.RandomGrayscale(1.5)
    with pytest.raises(ValueError, match=r"range \[0, 1"):
        L.RandomShear(-0.5)
    with pytest.raises(ValueError, match="range"):
        L.Solarization(2.0)


def test_mixup_and_cutmix_mix_labels_with_images():
    n = 8
    x = np.repeat(np.arange(n, dtype=np.float32).reshape(n, 1, 1, 1), 3, 1)
    x = np.tile(x, (1, 1, 10, 1))                      # image i is filled with the value i
    labels = np.eye(n, dtype=np.float32)
    out = L.MixUp(0.4, seed=3)({"images": x, "labels": labels})
    img, lab = out["images"].numpy(), out["labels"].numpy()
    np.testing.assert_allclose(lab.sum(axis=1), 1.0, rtol=1e-5)
    # an image's value is its label's expectation of the source index
    np.testing.assert_allclose(img[:, 0, 0, 0], lab @ np.arange(n), rtol=1e-4, atol=1e-4)
    # CutMix on 40x40 images (on 3x10 ones a box's pixels and its real-valued area, which
    # the labels follow, can differ by half the image)
    big = np.tile(np.arange(n, dtype=np.float32).reshape(n, 1, 1, 1), (1, 40, 40, 1))
    out = L.CutMix(seed=4)({"images": big, "labels": labels})
    img, lab = out["images"].numpy(), out["labels"].numpy()
    np.testing.assert_allclose(lab.sum(axis=1), 1.0, rtol=1e-5)
    for i in range(n):
        vals = np.unique(img[i, ..., 0])
        assert set(vals) <= {float(i)} | set(np.flatnonzero(lab[i] > 1e-6).astype(float))
        # the label weight left to the image is the area the box left (edges within a pixel)
        own = (img[i, ..., 0] == i).mean()
        assert abs(lab[i, i] - own) < 0.08 or np.count_nonzero(lab[i] > 1e-6) == 1
    same = L.CutMix()({"images": x, "labels": labels}, training=False)
    np.testing.assert_array_equal(same["images"].numpy(), x)
    np.testing.assert_array_equal(same["labels"].numpy(), labels)


def test_dict_inputs_share_one_draw_with_segmentation_masks():
    x = np.random.default_rng(6).random((4, 6, 6, 1)).astype(np.float32)
    out = L.RandomFlip("horizontal", seed=5)({"images": x, "segmentation_masks": x,
                                              "labels": np.arange(4)})
    np.testing.assert_array_equal(out["images"].numpy(), out["segmentation_masks"].numpy())
    np.testing.assert_array_equal(out["labels"].numpy(), np.arange(4))
    masks = np.round(x * 3)
    out = L.RandomRotation(0.2, fill_mode="nearest")({"images": x, "segmentation_masks": masks})
    assert set(np.unique(out["segmentation_masks"].numpy())) <= set(np.unique(masks))


def test_mixup_transformation_is_keras_dict_and_takes_dict_data():
    # Keras 3.15: get_random_transformation takes the images or the {"images", "labels"}
    # dict and returns {"mix_weight", "permutation_order"}; the transforms read that dict
    imgs = np.arange(16, dtype=np.float32).reshape(4, 2, 2, 1)
    labels = np.eye(4, dtype=np.float32)
    layer = L.MixUp(alpha=0.5, seed=3)
    tr = layer.get_random_transformation({"images": imgs, "labels": labels})
    assert sorted(tr) == ["mix_weight", "permutation_order"]
    assert tuple(tr["mix_weight"].shape) == (4,) and tr["permutation_order"].dtype == tf.int64
    tr = {"mix_weight": tf.constant([0.25, 1.0, 1.0, 0.5]),
          "permutation_order": tf.constant([3, 1, 2, 0], "int64")}
    np.testing.assert_allclose(layer.transform_labels(tf.constant(labels), tr),
                               [[0.25, 0, 0, 0.75], [0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0, 0, 0.5]])
    np.testing.assert_allclose(
        np.asarray(layer.transform_images(tf.constant(imgs), tr)).reshape(4, -1),
        [[9, 10, 11, 12], [4, 5, 6, 7], [8, 9, 10, 11], [6, 7, 8, 9]])


@pytest.mark.parametrize("layer", ["RandomRotation", "RandomZoom", "RandomTranslation"])
@pytest.mark.parametrize("spec, want", [([None, 30, 30, 3], [None, 30, 30, 3]),
                                        ([None, None, 30, 3], [None, None, 30, 3])])
def test_affine_layers_keep_the_static_shape_in_a_graph(layer, spec, want):
    """As TF 2.21 + Keras 3 give them (Keras' affine_transform ensures the input's shape on
    the op's output): a Flatten + Dense after the augmentation needs the known sizes."""
    args = (0.1, 0.1) if layer == "RandomTranslation" else (0.1,)
    aug = getattr(tf.keras.layers, layer)(*args)
    f = tf.function(lambda x: aug(x, training=True))
    assert f.get_concrete_function(tf.TensorSpec(spec)).structured_outputs.shape.as_list() \
        == want
