"""tf.image against TensorFlow 2.21's outputs (tests/fixtures/tf_image: the expressions in
cases.json, evaluated by TF in generate.py and by ndflow here), plus TF's errors for bad
images and sizes, the fused/composed color switches and graph mode."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_image"
CASES = json.loads((FIXTURE / "cases.json").read_text())
EXPECTED = np.load(FIXTURE / "tf_image_outputs.npz")


def _inputs() -> dict:
    rng = np.random.RandomState(0)
    x = rng.rand(2, 5, 7, 3).astype(np.float32)
    x[0, 0, 0], x[0, 0, 1], x[0, 0, 2] = [0.5, 0.5, 0.5], [0.2, 0.9, 0.9], [0.0, 0.0, 0.0]
    u8 = (rng.rand(2, 5, 7, 3) * 255).astype(np.uint8)
    return {"x": x, "u8": u8}


INPUTS = _inputs()


def grad(fn, x):
    """The gradient of sum(fn(x) * w), w the fixed pattern generate.py uses."""
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        w = tf.reshape(tf.range(tf.size(y), dtype=y.dtype) % 7 - 3, tf.shape(y))
        loss = tf.reduce_sum(y * w)
    return tape.gradient(loss, x).numpy()


def _eval(expr: str) -> np.ndarray:
    env = {"tf": tf, "np": np, "grad": grad, **INPUTS}
    return np.asarray(eval(expr, env))  # noqa: S307 - our own fixture's expressions


def _assert_matches(name: str, got: np.ndarray) -> None:
    want = EXPECTED[name]
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    _assert_matches(name, _eval(CASES[name]))


@pytest.mark.parametrize("name", ["hue", "hue_neg", "hue_u8", "sat", "sat_hi", "sat_u8",
                                  "s_hue", "s_sat"])
def test_composed_color_path_matches_tensorflow(name, monkeypatch):
    monkeypatch.setenv("TF_ADJUST_HUE_FUSED", "0")
    monkeypatch.setenv("TF_ADJUST_SATURATION_FUSED", "0")
    _assert_matches(name, _eval(CASES[name]))


def test_fused_switch_chooses_the_graph():
    x = INPUTS["x"]

    def op_types() -> set:
        g = tf.Graph()
        with g.as_default():
            tf.image.adjust_hue(tf.constant(x), 0.2)
            tf.image.adjust_saturation(tf.constant(x), 0.5)
        return {op.type for op in g.get_operations()}

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TF_ADJUST_HUE_FUSED", "1")
        mp.setenv("TF_ADJUST_SATURATION_FUSED", "1")
        fused = op_types()
        mp.setenv("TF_ADJUST_HUE_FUSED", "0")
        mp.setenv("TF_ADJUST_SATURATION_FUSED", "0")
        composed = op_types()
    assert {"AdjustHue", "AdjustSaturation"} <= fused and "RGBToHSV" not in fused
    assert {"RGBToHSV", "HSVToRGB"} <= composed and "AdjustHue" not in composed


def test_hsv_round_trip_and_reference():
    x = INPUTS["x"].astype(np.float64)
    hsv = tf.image.rgb_to_hsv(x).numpy()
    v = x.max(-1)
    s = np.where(v > 0, (v - x.min(-1)) / np.where(v > 0, v, 1), 0)
    np.testing.assert_allclose(hsv[..., 2], v, atol=1e-12)
    np.testing.assert_allclose(hsv[..., 1], s, atol=1e-12)
    np.testing.assert_allclose(tf.image.hsv_to_rgb(hsv).numpy(), x, atol=1e-12)


def test_random_flips_are_per_image_and_seeded():
    batch = np.arange(128, dtype=np.float32).reshape(64, 1, 2, 1)
    out = tf.image.random_flip_left_right(batch, seed=7).numpy()
    flipped = out[:, 0, 0, 0] > out[:, 0, 1, 0]
    assert 0 < flipped.sum() < 64  # each image decides on its own
    np.testing.assert_array_equal(out[~flipped], batch[~flipped])
    a = tf.image.stateless_random_flip_up_down(batch, seed=[1, 2]).numpy()
    np.testing.assert_array_equal(a, tf.image.stateless_random_flip_up_down(batch, [1, 2]).numpy())


def test_random_crop_and_v1_alias():
    x = INPUTS["x"][0]
    out = tf.image.random_crop(x, [2, 3, 3], seed=1).numpy()
    assert out.shape == (2, 3, 3)
    rows = [i for i in range(4) if any(np.array_equal(out, x[i:i + 2, j:j + 3])
                                       for j in range(5))]
    assert rows, "the crop is a window of the image"
    assert tf.compat.v1.random_crop is tf.image.random_crop


def test_random_adjustments_stay_in_range():
    x = INPUTS["x"]
    for fn in (lambda: tf.image.random_brightness(x, 0.2, seed=1),
               lambda: tf.image.random_contrast(x, 0.5, 1.5, seed=1),
               lambda: tf.image.random_hue(x, 0.2, seed=1),
               lambda: tf.image.random_saturation(x, 0.5, 1.5, seed=1)):
        out = fn().numpy()
        assert out.shape == x.shape and out.dtype == np.float32
    delta = tf.image.random_brightness(x, 0.2, seed=3).numpy() - x
    assert np.ptp(delta) < 1e-6 and abs(delta.flat[0]) <= 0.2


def test_graph_mode_pipeline():
    @tf.function
    def distort(img):
        img = tf.image.random_crop(img, [4, 4, 3])
        img = tf.image.random_flip_left_right(img)
        img = tf.image.random_brightness(img, max_delta=63 / 255)
        img = tf.image.random_contrast(img, lower=0.2, upper=1.8)
        return tf.image.per_image_standardization(img)

    out = distort(tf.constant(INPUTS["x"][0])).numpy()
    assert out.shape == (4, 4, 3)
    np.testing.assert_allclose(out.mean(), 0.0, atol=1e-5)


@pytest.mark.parametrize("fn, error, message", [
    (lambda x: tf.image.flip_left_right(x[0, 0]), ValueError,
     r"'image' \(shape \(7, 3\)\) must be at least three-dimensional."),
    (lambda x: tf.image.flip_up_down(x[None]), ValueError,
     r"must have either 3 or 4 dimensions."),
    (lambda x: tf.image.crop_to_bounding_box(x, 3, 1, 3, 3), ValueError,
     "height must be >= target \\+ offset."),
    (lambda x: tf.image.crop_to_bounding_box(x, -1, 1, 3, 3), ValueError,
     "offset_height must be >= 0."),
    (lambda x: tf.image.pad_to_bounding_box(x, 1, 1, 3, 3), ValueError,
     "width must be <= target - offset"),
    (lambda x: tf.image.resize_with_crop_or_pad(x, 0, 3), ValueError,
     "target_height must be > 0."),
    (lambda x: tf.image.central_crop(x, 1.5), ValueError,
     r"central_fraction must be within \(0, 1\]"),
    (lambda x: tf.image.random_crop(x[0], [6, 3, 3]), tf.errors.InvalidArgumentError,
     "Need value.shape >= size"),
    (lambda x: tf.image.random_brightness(x, -0.1), ValueError,
     "max_delta must be non-negative."),
    (lambda x: tf.image.random_contrast(x, 0.5, 0.2), ValueError, "upper must be > lower."),
    (lambda x: tf.image.random_hue(x, 0.6), ValueError, "max_delta must be <= 0.5."),
    (lambda x: tf.image.adjust_hue(x, 1.5), ValueError,
     r"delta must be in the interval \[-1, 1\]"),
    (lambda x: tf.image.adjust_hue(x[..., :2], 0.1), tf.errors.InvalidArgumentError,
     "input must have 3 channels but instead has 2 channels."),
    (lambda x: tf.image.adjust_contrast(x, [1.0]), tf.errors.InvalidArgumentError,
     r"Shape \(1,\) must have rank 0"),
    (lambda x: tf.image.adjust_saturation(x[0, 0], 0.5), tf.errors.InvalidArgumentError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda x: tf.image.rgb_to_hsv(x[..., :2]), tf.errors.InvalidArgumentError,
     "Dimension must be 3 but is 2"),
    (lambda x: tf.image.grayscale_to_rgb(x), ValueError,
     "Last dimension of a grayscale image should be size 1."),
    (lambda x: tf.image.convert_image_dtype(x, tf.string), AttributeError,
     "dtype must be either floating point or integer"),
])
def test_bad_input(fn, error, message):
    with pytest.raises(error, match=message):
        fn(INPUTS["x"])


@pytest.mark.parametrize("method, kwargs", [
    ("bilinear", {}), ("bicubic", {}), ("nearest", {}),
    ("v1_bilinear", {"align_corners": True}), ("v1_bicubic", {}), ("v1_nearest", {}),
    ("bilinear", {"antialias": True}), ("lanczos3", {"antialias": True}), ("gaussian", {}),
    ("mitchellcubic", {}), ("lanczos5", {"antialias": True}),
])
@pytest.mark.parametrize("size", [(3, 11), (9, 4)])
def test_resize_gradient_is_the_adjoint(method, kwargs, size):
    """Resizing is linear, so <resize(x), g> must equal <x, gradient(g)> (a finite-difference
    check that is exact for a linear map)."""
    rng = np.random.RandomState(1)
    x = rng.rand(2, 5, 7, 3).astype(np.float32)
    g = rng.rand(2, *size, 3).astype(np.float32)
    v1 = tf.compat.v1.image

    def fn(t):
        if method.startswith("v1_"):
            return {"v1_bilinear": v1.resize_bilinear, "v1_bicubic": v1.resize_bicubic,
                    "v1_nearest": v1.resize_nearest_neighbor}[method](t, size, **kwargs)
        return tf.image.resize(t, size, method=method, **kwargs)

    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = fn(xt)
        loss = tf.reduce_sum(y * g)
    dx = tape.gradient(loss, xt).numpy()
    np.testing.assert_allclose(np.sum(x.astype(np.float64) * dx), float(loss.numpy()),
                               rtol=1e-5)
    # One more direction: perturbing one pixel by 1 changes the output by its column.
    e = np.zeros_like(x)
    e[1, 2, 3, 1] = 1.0
    delta = fn(x + e).numpy() - y.numpy()
    np.testing.assert_allclose(np.sum(delta * g), dx[1, 2, 3, 1], rtol=1e-4, atol=1e-5)


def test_resize_in_graph_keeps_static_shapes():
    @tf.function
    def f(img):
        return (tf.image.resize(img, [12, 10]), tf.image.resize(img, [4, 4], "nearest"),
                tf.image.resize_with_crop_or_pad(img, 4, 9), tf.image.central_crop(img, 0.5))

    outs = f(tf.constant(INPUTS["x"]))
    assert [tuple(o.shape) for o in outs] == [(2, 12, 10, 3), (2, 4, 4, 3), (2, 4, 9, 3),
                                              (2, 3, 5, 3)]
    concrete = f.get_concrete_function(tf.TensorSpec([None, 5, 7, 3], tf.float32))
    assert [o.shape.as_list() for o in concrete.outputs][:2] == [[None, 12, 10, 3],
                                                                 [None, 4, 4, 3]]


@pytest.mark.parametrize("fn, error, message", [
    (lambda x: tf.image.resize(x[0, 0], [2, 2]), ValueError,
     "'images' must have either 3 or 4 dimensions."),
    (lambda x: tf.image.resize(x, [2, 2, 3]), ValueError,
     "'size' must be a 1-D Tensor of 2 elements: new_height, new_width"),
    (lambda x: tf.image.resize(x, [2, 2], method="foo"), ValueError,
     "Resize method is not implemented: foo"),
    (lambda x: tf.image.resize(x, [0, 2]), tf.errors.InvalidArgumentError,
     "output dimensions must be positive"),
    (lambda x: tf.compat.v1.image.resize_bilinear(x, [2, 2], align_corners=True,
                                                  half_pixel_centers=True),
     tf.errors.InvalidArgumentError,
     "If half_pixel_centers is True, align_corners must be False."),
    (lambda x: tf.compat.v1.image.resize_area(x[0], [2, 2]), tf.errors.InvalidArgumentError,
     "rank 4"),
    (lambda x: tf.raw_ops.ScaleAndTranslate(images=x, size=[2, 2], scale=[0.0, 1.0],
                                            translation=[0.0, 0.0]),
     tf.errors.InvalidArgumentError, r"Scale must be greater than zero. \[Op:ScaleAndTranslate"),
    (lambda x: tf.raw_ops.ScaleAndTranslate(images=x, size=[2, 2], scale=[1.0, 1.0],
                                            translation=[0.0, 0.0], kernel_type="foo"),
     tf.errors.InvalidArgumentError, r"Unrecognized kernel type: foo \[Op:ScaleAndTranslate"),
    (lambda x: tf.raw_ops.ScaleAndTranslate(images=x, size=[2, 2], scale=[1.0, 1.0, 1.0],
                                            translation=[0.0, 0.0]),
     tf.errors.InvalidArgumentError, r"t must have two elements\[3\]"),
    (lambda x: tf.raw_ops.ScaleAndTranslateGrad(grads=x, original_image=x[0],
                                                scale=[1.0, 1.0], translation=[0.0, 0.0]),
     tf.errors.InvalidArgumentError, "must have rank 4"),
])
def test_resize_bad_input(fn, error, message):
    with pytest.raises(error, match=message):
        fn(INPUTS["x"])


@pytest.mark.parametrize("fname", ["tf_rgba.png", "tf_rgb.png", "tf_gray.png", "tf_smooth.jpg"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decodes_tensorflows_files(fname, channels):
    key = f"decode_{fname.replace('.', '_')}_{channels}"
    if key not in EXPECTED.files:
        pytest.skip("TF: JPEG does not support 4 channels")
    data = (FIXTURE / fname).read_bytes()
    decoder = tf.io.decode_jpeg if fname.endswith(".jpg") else tf.io.decode_png
    for fn in (decoder, tf.io.decode_image):
        got = fn(data, channels=channels).numpy()
        want = EXPECTED[key]
        assert got.shape == want.shape and got.dtype == np.uint8
        diff = np.abs(got.astype(int) - want.astype(int))
        if fname.endswith(".jpg"):  # TF's libjpeg-turbo uses the fast integer IDCT
            assert diff.max() <= 4 and diff.mean() < 1.5
        elif channels == 1 and "gray" not in fname:  # libpng's fixed-point luma
            assert diff.max() <= 1 and diff.mean() < 0.05
        else:
            assert diff.max() == 0


def test_png_round_trip_and_tensorflow_structure():
    rgba = EXPECTED["codec_rgba"]
    for image in (rgba, rgba[..., :3], rgba[..., :1], rgba[..., :2]):
        data = tf.io.encode_png(image).numpy()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and not tf.image.is_jpeg(data).numpy()
        np.testing.assert_array_equal(tf.io.decode_png(data).numpy(), image)
    smaller = tf.io.encode_png(rgba[..., :3], compression=9).numpy()
    np.testing.assert_array_equal(tf.io.decode_png(smaller).numpy(), rgba[..., :3])


def test_jpeg_round_trip():
    smooth = EXPECTED["codec_smooth"]
    data = tf.io.encode_jpeg(smooth, quality=95).numpy()
    assert tf.image.is_jpeg(data).numpy()
    back = tf.io.decode_jpeg(data).numpy().astype(int)
    assert back.shape == smooth.shape and np.abs(back - smooth).mean() < 2.0
    as_float = tf.io.decode_image(data, dtype=tf.float32).numpy()
    np.testing.assert_allclose(as_float, back / 255.0, atol=1e-6)


@pytest.mark.parametrize("fn, message", [
    (lambda: tf.io.decode_png(b"garbage"),
     "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."),
    (lambda: tf.io.decode_png((FIXTURE / "tf_rgb.png").read_bytes()[:40]), "Invalid PNG"),
    (lambda: tf.io.decode_png((FIXTURE / "tf_rgb.png").read_bytes(), channels=2),
     "`channels` must be 0, 1, 3 or 4 but got 2"),
    (lambda: tf.io.decode_jpeg((FIXTURE / "tf_smooth.jpg").read_bytes(), channels=4),
     "JPEG does not support 4 channels"),
    (lambda: tf.io.encode_png(np.zeros((4, 3), np.uint8)), "rank 3"),
    (lambda: tf.io.encode_jpeg(np.zeros((4, 3, 2), np.uint8)), "channels"),
])
def test_codec_bad_input(fn, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        fn()


def test_unknown_batch_keeps_static_image_dims():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, None, None, 3])
        q = tf.compat.v1.placeholder(tf.float32, [None, 8, 6, 3])
        shapes = [t.shape.as_list() for t in (
            tf.image.resize_with_crop_or_pad(p, 4, 4), tf.image.central_crop(q, 0.5),
            tf.image.resize_with_pad(q, 5, 5), tf.image.crop_to_bounding_box(q[0], 1, 1, 3, 2),
            tf.image.resize(p, [7, 2]))]
        assert shapes == [[None, 4, 4, 3], [None, 4, 4, 3], [None, 5, 5, 3], [3, 2, 3],
                          [None, 7, 2, 3]]
        out = tf.image.resize_with_crop_or_pad(p, 4, 4)
        with tf.compat.v1.Session() as sess:
            value = sess.run(out, {p: np.ones((1, 6, 2, 3), np.float32)})
    np.testing.assert_array_equal(value[0, :, :, 0], [[0, 1, 1, 0]] * 4)


def test_flips_of_unknown_rank():
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        lr, ud = tf.image.flip_left_right(p), tf.image.flip_up_down(p)
        x = np.arange(24, dtype=np.float32).reshape(2, 4, 3, 1)
        with tf.compat.v1.Session() as sess:
            got_lr, got_ud = sess.run([lr, ud], {p: x})
            got_3d = sess.run(lr, {p: x[0]})
    np.testing.assert_array_equal(got_lr, x[:, :, ::-1])
    np.testing.assert_array_equal(got_ud, x[:, ::-1])
    np.testing.assert_array_equal(got_3d, x[0, :, ::-1])


def test_gif_bmp_and_jpeg_shape_as_tensorflow():
    gif = (FIXTURE / "pillow_anim.gif").read_bytes()
    np.testing.assert_array_equal(tf.io.decode_gif(gif).numpy(), EXPECTED["decode_gif"])
    np.testing.assert_array_equal(tf.io.decode_image(gif).numpy(), EXPECTED["decode_image_gif"])
    bmp = (FIXTURE / "pillow_rgb.bmp").read_bytes()
    np.testing.assert_array_equal(tf.io.decode_bmp(bmp).numpy(), EXPECTED["decode_bmp"])
    jpeg = (FIXTURE / "tf_smooth.jpg").read_bytes()
    np.testing.assert_array_equal(tf.io.extract_jpeg_shape(jpeg).numpy(), EXPECTED["jpeg_shape"])
    assert tf.io.extract_jpeg_shape(jpeg, tf.int64).dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to decode JPEG format "
                       "using DecodeBmp op"):
        tf.io.decode_bmp(jpeg)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid JPEG data, size"):
        tf.io.extract_jpeg_shape(bmp)


def test_jpeg_quality_round_trip_as_tensorflow():
    smooth = EXPECTED["codec_smooth"]
    got = tf.image.adjust_jpeg_quality(smooth, 60).numpy().astype(int)
    diff = np.abs(got - EXPECTED["jpeg_quality_60"].astype(int))
    assert diff.max() <= 4 and diff.mean() < 1.5  # libjpeg vs libjpeg-turbo rounding
    as_float = tf.image.adjust_jpeg_quality(smooth / np.float32(255), 60).numpy()
    assert as_float.dtype == np.float32 and np.abs(as_float * 255 - got).max() <= 1
    out = tf.image.stateless_random_jpeg_quality(smooth, 40, 90, seed=[1, 2]).numpy()
    assert out.shape == smooth.shape
    with pytest.raises(ValueError, match="`min_jpeg_quality` must be less than"):
        tf.image.random_jpeg_quality(smooth, 90, 40)
    with pytest.raises(ValueError, match="jpeg encoding range must be between 0 and 100."):
        tf.image.random_jpeg_quality(smooth, 10, 140)
