"""Keras 3 image preprocessing layers and the ImageProjectiveTransformV3 op: values against
Keras 3.15 / TensorFlow 2.21 fixtures (tests/fixtures/keras_image_preprocessing/generate.py),
configs, `.keras` loading, dtype rules and bad arguments."""

import json
import os

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_image_preprocessing")
L = tf.keras.layers


@pytest.fixture(scope="module")
def fx():
    return dict(np.load(os.path.join(HERE, "outputs.npz")))


def test_projective_transform_matches_tensorflow_all_modes(fx):
    transforms = fx["t_transforms"]
    images = {"f32": fx["t_img"], "u8": fx["t_img_u8"], "f64": fx["t_img"].astype(np.float64)}
    checked = 0
    for key, expected in fx.items():
        parts = key.split("_")
        if len(parts) != 5 or parts[0] != "t":
            continue
        _, ti, interp, mode, kind = parts
        out = tf.raw_ops.ImageProjectiveTransformV3(
            images=images[kind], transforms=transforms[int(ti):int(ti) + 1],
            output_shape=[6, 10], fill_value=2.7, interpolation=interp, fill_mode=mode)
        assert out.dtype.as_numpy_dtype == expected.dtype, key
        np.testing.assert_array_equal(out.numpy(), expected, err_msg=key)
        checked += 1
    assert checked == 4 * 2 * 4 * 2 + 8
    out = tf.raw_ops.ImageProjectiveTransformV3(
        images=fx["t_img"], transforms=transforms[:2], output_shape=[8, 11], fill_value=0.0,
        interpolation="BILINEAR", fill_mode="REFLECT")
    np.testing.assert_array_equal(out.numpy(), fx["t_batch"])


def test_projective_transform_identity_and_numpy_shift():
    x = np.arange(2 * 5 * 6 * 1, dtype=np.float32).reshape(2, 5, 6, 1)
    ident = np.array([[1, 0, 0, 0, 1, 0, 0, 0]], np.float32)
    out = tf.raw_ops.ImageProjectiveTransformV3(images=x, transforms=ident, output_shape=[5, 6],
                                                fill_value=0.0, interpolation="NEAREST")
    np.testing.assert_array_equal(out.numpy(), x)
    # output(x, y) = input(x - 2, y): a shift right by 2 with zeros entering (NumPy reference)
    shift = np.array([[1, 0, -2, 0, 1, 0, 0, 0]], np.float32)
    out = tf.raw_ops.ImageProjectiveTransformV3(images=x, transforms=shift, output_shape=[5, 6],
                                                fill_value=-1.0, interpolation="BILINEAR")
    ref = np.full_like(x, -1.0)
    ref[:, :, 2:] = x[:, :, :-2]
    np.testing.assert_array_equal(out.numpy(), ref)


def test_projective_transform_bad_input():
    x = np.zeros((1, 4, 4, 1), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_images x 8"):
        tf.raw_ops.ImageProjectiveTransformV3(images=x, transforms=np.zeros((1, 6), np.float32),
                                              output_shape=[4, 4], fill_value=0.0,
                                              interpolation="NEAREST")
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.raw_ops.ImageProjectiveTransformV3(images=x[0], transforms=np.zeros((1, 8),
                                              np.float32), output_shape=[4, 4],
                                              fill_value=0.0, interpolation="NEAREST")


def test_keras_matrices_match(fx):
    from ndflow.keras.layers import image_augmentation as aug
    m = aug.affine_matrix(tf.constant([17.0, -40.0]), tf.zeros([2]), tf.zeros([2]),
                          tf.ones([2]), tf.zeros([2]), tf.zeros([2]), 7, 9)
    np.testing.assert_allclose(m.numpy(), fx["m_rotation"], rtol=1e-6, atol=1e-6)
    img = tf.zeros([1, 7, 9, 1])
    zoom = L.RandomZoom(0.2).matrix(img, tf.constant([[1.2, 0.8], [0.9, 0.9]]))
    np.testing.assert_allclose(zoom.numpy(), fx["m_zoom"], rtol=1e-6)
    tr = L.RandomTranslation(0.2, 0.2).matrix(img, tf.constant([[1.5, -2.0], [0.0, 3.0]]))
    np.testing.assert_array_equal(tr.numpy(), fx["m_translation"])


DETERMINISTIC = {
    "rescale": (lambda: L.Rescaling(1 / 127.5, offset=-1), "x_u8"),
    "rescale_f": (lambda: L.Rescaling(0.5, offset=2.0), "x"),
    "resize_bilinear": (lambda: L.Resizing(5, 7), "x"),
    "resize_up": (lambda: L.Resizing(13, 17), "x"),
    "resize_nearest": (lambda: L.Resizing(6, 5, interpolation="nearest"), "x"),
    "resize_bicubic": (lambda: L.Resizing(6, 9, interpolation="bicubic"), "x"),
    "resize_area": (lambda: L.Resizing(4, 6, interpolation="area"), "x"),
    "resize_crop": (lambda: L.Resizing(6, 6, crop_to_aspect_ratio=True), "x"),
    "resize_crop_tall": (lambda: L.Resizing(8, 3, crop_to_aspect_ratio=True), "x"),
    "resize_pad": (lambda: L.Resizing(6, 6, pad_to_aspect_ratio=True, fill_value=0.5), "x"),
    "resize_pad_wide": (lambda: L.Resizing(3, 9, pad_to_aspect_ratio=True), "x"),
    "resize_u8": (lambda: L.Resizing(5, 7), "x_u8"),
    "resize_u8_nearest": (lambda: L.Resizing(5, 7, interpolation="nearest"), "x_u8"),
    "resize_unbatched": (lambda: L.Resizing(5, 7), "x0"),
    "center_crop": (lambda: L.CenterCrop(6, 9), "x"),
    "center_crop_odd": (lambda: L.CenterCrop(5, 4), "x0"),
    "center_crop_up": (lambda: L.CenterCrop(12, 9), "x"),
    "center_crop_u8": (lambda: L.CenterCrop(6, 9), "x_u8"),
}


@pytest.mark.parametrize("case", sorted(DETERMINISTIC))
def test_deterministic_layers_match_keras(fx, case):
    make, inp = DETERMINISTIC[case]
    x = fx["x"][0] if inp == "x0" else fx[inp]
    expected = fx["y_" + case]
    layer = make()
    out = layer(x).numpy()
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    assert layer.compute_output_shape(x.shape) == expected.shape
    # the same inside tf.function with an unknown batch size (batched inputs)
    if x.ndim == 4:
        fn = tf.function(lambda t: make()(t), input_signature=[
            tf.TensorSpec([None, *x.shape[1:]], tf.as_dtype(x.dtype))])
        np.testing.assert_allclose(fn(x).numpy(), expected, rtol=1e-5, atol=1e-4)


def test_configs_match_keras():
    with open(os.path.join(HERE, "configs.json")) as f:
        configs = json.load(f)
    for name, entry in configs.items():
        cls = getattr(L, entry["class_name"])
        cfg = entry["config"]
        layer = cls.from_config(dict(cfg))
        got = json.loads(json.dumps(layer.get_config()))
        if entry["class_name"] == "RandomCrop":   # Keras draws a seed when none is given
            got["seed"] = cfg["seed"]
        assert got == cfg, name


def test_keras_file_with_augmentation_layers_loads(fx):
    model = tf.keras.models.load_model(os.path.join(HERE, "augment_model.keras"))
    io = np.load(os.path.join(HERE, "model_io.npz"))
    np.testing.assert_allclose(model.predict(io["x"], verbose=0), io["y"], rtol=1e-5,
                               atol=1e-5)
    kinds = [type(la).__name__ for la in model.layers]
    assert kinds[:4] == ["Rescaling", "Resizing", "RandomFlip", "RandomRotation"]


def _asym_image():
    img = np.zeros((9, 9, 1), np.float32)
    img[4, 4:8, 0] = 1.0   # a bar from the centre to the right
    return img


def test_random_flip_fraction_and_modes():
    x = np.tile(np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1), (400, 2, 1, 1))
    out = L.RandomFlip("horizontal", seed=1)(x).numpy()
    flipped = np.all(out == x[:, :, ::-1], axis=(1, 2, 3))
    kept = np.all(out == x, axis=(1, 2, 3))
    assert np.all(flipped | kept) and 0.4 < flipped.mean() < 0.6
    y = np.tile(np.arange(4, dtype=np.float32).reshape(1, 4, 1, 1), (50, 1, 3, 1))
    out = L.RandomFlip("vertical")(y).numpy()
    assert np.all(np.all(out == y[:, ::-1], axis=(1, 2, 3)) | np.all(out == y, axis=(1, 2, 3)))
    img = np.random.default_rng(0).random((60, 3, 5, 1)).astype(np.float32)
    out = L.RandomFlip()(img).numpy()   # one draw flips both axes
    both = np.all(out == img[:, ::-1, ::-1], axis=(1, 2, 3))
    assert np.all(both | np.all(out == img, axis=(1, 2, 3))) and both.any()


def test_random_rotation_angle_range():
    """The bar's angle in each rotated image lies in factor x 360 degrees, and spreads."""
    n = 64
    x = np.repeat(_asym_image()[None], n, 0)
    out = L.RandomRotation(0.1, fill_mode="constant", interpolation="bilinear")(x).numpy()
    ys, xs = np.mgrid[0:9, 0:9]
    angles = []
    for img in out[..., 0]:
        w = img.sum()
        cx, cy = (img * xs).sum() / w - 4, (img * ys).sum() / w - 4
        angles.append(np.degrees(np.arctan2(cy, cx)))
    angles = np.array(angles)
    assert np.all(np.abs(angles) <= 36.0 + 2.0)
    assert angles.max() > 15 and angles.min() < -15


def test_random_zoom_translation_contrast_brightness_ranges():
    x = np.random.default_rng(1).random((32, 8, 8, 3)).astype(np.float32) * 255
    out = L.RandomTranslation((0.25, 0.25), 0.0, fill_mode="constant", interpolation="nearest",
                              fill_value=-1.0)(x).numpy()
    np.testing.assert_array_equal(out[:, 2:], x[:, :6])       # a shift down by 2 rows
    assert np.all(out[:, :2] == -1.0)
    z = L.RandomZoom((0.5, 0.5), fill_mode="constant", interpolation="nearest")(x).numpy()
    assert np.all(z[:, 0] == 0) and np.all(z[:, :, 0] == 0)   # zoomed out by 1.5: borders fill
    c = L.RandomContrast(0.5)(x).numpy()
    dev_in = x - x.mean(axis=(1, 2), keepdims=True)
    dev_out = c - x.mean(axis=(1, 2), keepdims=True)
    ratio = np.median(np.abs(dev_out) / np.maximum(np.abs(dev_in), 1e-3), axis=(1, 2, 3))
    assert np.all((ratio >= 0.49) & (ratio <= 1.51)) and ratio.std() > 0.05
    assert c.min() >= 0 and c.max() <= 255
    b = L.RandomBrightness((0.1, 0.2), value_range=(0, 255))(x).numpy()
    delta = np.median(b - x, axis=(1, 2, 3))
    assert np.all((delta >= 25.4) & (delta <= 51.1)) and b.max() <= 255


def test_random_crop_offsets_and_inference():
    x = np.arange(10 * 12, dtype=np.float32).reshape(1, 10, 12, 1)
    crop = L.RandomCrop(4, 5, seed=2)
    seen = set()
    for _ in range(20):
        out = crop(x).numpy()[0, :, :, 0]
        r, c = divmod(int(out[0, 0]), 12)
        np.testing.assert_array_equal(out, x[0, r:r + 4, c:c + 5, 0])
        seen.add((r, c))
    assert len(seen) > 3
    assert crop(x, training=False).shape == x.shape   # Keras 3.15: the input at inference


@pytest.mark.parametrize("make", [
    lambda: L.RandomFlip(), lambda: L.RandomRotation(0.3), lambda: L.RandomZoom(0.3),
    lambda: L.RandomTranslation(0.2, 0.2), lambda: L.RandomContrast(0.4),
    lambda: L.RandomBrightness(0.3)])
def test_random_layers_identity_at_inference_and_in_predict(make):
    x = np.random.default_rng(2).random((3, 6, 7, 2)).astype(np.float32)
    layer = make()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    model = tf.keras.Sequential([tf.keras.Input((6, 7, 2)), layer])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    # 32 images: every image left as it was by chance (p = 2**-32 for RandomFlip) never happens
    many = np.random.default_rng(3).random((32, 6, 7, 2)).astype(np.float32)
    assert not np.array_equal(layer(many, training=True).numpy(), many)
    single = layer(x[0]).numpy()                      # unbatched images work too
    assert single.shape == x[0].shape


def test_augmentation_in_tf_function_and_dataset_map():
    aug = tf.keras.Sequential([L.Rescaling(1 / 255.0), L.RandomFlip("horizontal"),
                               L.RandomRotation(0.1), L.RandomZoom(0.1)])
    x = np.random.default_rng(3).integers(0, 256, (4, 8, 8, 3)).astype(np.uint8)
    fn = tf.function(lambda t: aug(t, training=True))
    out = fn(x).numpy()
    assert out.shape == (4, 8, 8, 3) and out.dtype == np.float32
    assert 0.0 <= out.min() and out.max() <= 1.0
    ds = tf.data.Dataset.from_tensor_slices(x).batch(2).map(lambda t: aug(t, training=True))
    batches = [b.numpy() for b in ds]
    assert [b.shape for b in batches] == [(2, 8, 8, 3)] * 2


def test_dtype_rules():
    x = np.random.default_rng(4).integers(0, 256, (2, 6, 6, 3)).astype(np.uint8)
    assert L.Rescaling(2.0)(x).dtype == tf.float32
    assert L.Resizing(3, 3)(x).dtype == tf.uint8
    assert L.CenterCrop(3, 3)(x).dtype == tf.float32
    assert L.RandomFlip()(x).dtype == tf.float32
    assert L.RandomBrightness(0.1)(x).dtype == tf.uint8
    assert L.RandomRotation(0.1, dtype="float64")(x).dtype == tf.float64


def test_channels_first():
    x = np.random.default_rng(5).random((2, 3, 6, 8)).astype(np.float32)
    cl = np.transpose(x, (0, 2, 3, 1))
    out = L.Resizing(3, 4, data_format="channels_first")(x).numpy()
    np.testing.assert_allclose(np.transpose(out, (0, 2, 3, 1)), L.Resizing(3, 4)(cl).numpy())
    out = L.CenterCrop(4, 4, data_format="channels_first")(x).numpy()
    np.testing.assert_array_equal(out, x[:, :, 1:5, 2:6])
    out = L.RandomFlip("horizontal", data_format="channels_first")(x).numpy()
    same = np.all(out == x, axis=(1, 2, 3)) | np.all(out == x[..., ::-1], axis=(1, 2, 3))
    assert same.all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="factor"):
        L.RandomRotation(1.5)
    with pytest.raises(ValueError, match=r"range \(-1.0, 1.0\]"):
        L.RandomZoom(-1.0)
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(NotImplementedError, match="interpolation"):
        L.RandomZoom(0.1, interpolation="cubic")
    with pytest.raises(ValueError, match="value_range"):
        L.RandomBrightness(0.1, value_range=5)
    with pytest.raises(ValueError, match="Only one of"):
        L.Resizing(3, 3, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)(
            np.zeros((4, 4, 1), np.float32))
    with pytest.raises(ValueError, match="rank 3"):
        L.RandomFlip()(np.zeros((4, 4), np.float32))


@pytest.mark.parametrize("interp", ["NEAREST", "BILINEAR"])
def test_projective_transform_gradient_is_tensorflows(fx, interp):
    src = tf.constant(fx["t_img"])
    with tf.GradientTape() as tape:
        tape.watch(src)
        y = tf.raw_ops.ImageProjectiveTransformV3(
            images=src, transforms=fx["t_transforms"][:2], output_shape=[7, 9],
            fill_value=1.0, interpolation=interp, fill_mode="REFLECT")
        loss = tf.reduce_sum(y * fx["t_grad_w"])
    np.testing.assert_allclose(tape.gradient(loss, src).numpy(), fx[f"t_grad_{interp}"],
                               rtol=1e-5, atol=1e-5)


def test_layers_with_unknown_dims_in_tf_function(fx):
    x = fx["x"]
    spec = [tf.TensorSpec([None, None, None, 2], tf.float32)]
    crop = tf.function(lambda t: L.Resizing(6, 6, crop_to_aspect_ratio=True)(t),
                       input_signature=spec)
    np.testing.assert_allclose(crop(x).numpy(), fx["y_resize_crop"], rtol=1e-5, atol=1e-4)
    pad = tf.function(lambda t: L.Resizing(6, 6, pad_to_aspect_ratio=True, fill_value=0.5)(t),
                      input_signature=spec)
    np.testing.assert_allclose(pad(x).numpy(), fx["y_resize_pad"], rtol=1e-5, atol=1e-4)
    rot = L.RandomRotation(0.2, fill_mode="constant")
    fn = tf.function(lambda t: rot(t, training=True), input_signature=spec)
    out = fn(x).numpy()
    assert out.shape == x.shape and not np.array_equal(out, x)
