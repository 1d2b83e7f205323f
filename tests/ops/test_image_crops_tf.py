"""tf.image.crop_and_resize, extract_patches and draw_bounding_boxes give TensorFlow's
values: each case of tests/fixtures/tf_image_crops (TensorFlow 2.21, generate.py beside it) —
bilinear and
nearest crops, boxes partly outside the image with an extrapolation value, flipped boxes,
crop sizes of 1, several batch indices; patches with strides, rates and SAME padding — equals
TF's output and TF's gradients of sum(weights * output) w.r.t. the image and the boxes (to
float32 rounding), eagerly and inside tf.function; the gradients agree with finite
differences; boxes are drawn as TF draws them (defaults, given and empty color tables, 1, 3
and 4 channels, float16); bad input gets TF's errors."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_image_crops import crop_cases

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_image_crops")
FIXTURE = np.load(os.path.join(HERE, "cases.npz"))
IMAGE = FIXTURE["image"]
CROPS = sorted({k.split("/")[1] for k in FIXTURE.files if k.startswith("crop/")})
PATCHES = sorted({k.split("/")[1] for k in FIXTURE.files if k.startswith("patches/")})
ERRORS = json.loads(str(FIXTURE["errors"]))
_BAD = crop_cases.error_calls(tf, IMAGE)


def _crop_case(name):
    f = {k.split("/")[2]: FIXTURE[k] for k in FIXTURE.files if k.startswith(f"crop/{name}/")}
    return f, dict(method=str(f["method"]), extrapolation_value=float(f["extrapolation_value"]))


def _crop_with_grads(image, boxes, ind, size, weights, kwargs):
    image, boxes = tf.convert_to_tensor(image), tf.convert_to_tensor(boxes)
    with tf.GradientTape() as tape:
        tape.watch([image, boxes])
        crops = tf.image.crop_and_resize(image, boxes, ind, size, **kwargs)
        loss = tf.reduce_sum(weights * crops)
    return (crops, *tape.gradient(loss, [image, boxes]))


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", CROPS)
def test_crop_and_resize_gives_tensorflows_crops_and_gradients(case, traced):
    f, kwargs = _crop_case(case)
    size = [int(v) for v in f["crop_size"]]

    def run(image, boxes, ind, weights):
        return _crop_with_grads(image, boxes, ind, size, weights, kwargs)
    if traced:
        run = tf.function(run)
    crops, d_image, d_boxes = run(IMAGE, f["boxes"], f["box_indices"], f["weights"])
    assert crops.dtype == tf.float32 and crops.shape == f["output"].shape
    np.testing.assert_allclose(crops.numpy(), f["output"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d_image.numpy(), f["d_image"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_boxes.numpy(), f["d_boxes"], rtol=1e-5, atol=1e-5)


def test_integer_images_crop_to_float32():
    image = FIXTURE["crop_uint8/image"]
    boxes, ind = [[0.1, 0.2, 0.9, 0.7], [0.6, 0.0, 0.2, 1.0]], [1, 0]
    out = tf.image.crop_and_resize(image, boxes, ind, [3, 4])
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), FIXTURE["crop_uint8/output"], rtol=1e-6)
    np.testing.assert_array_equal(
        tf.image.crop_and_resize(image, boxes, ind, [3, 4], method="nearest").numpy(),
        FIXTURE["crop_uint8/output_nearest"])


def test_v1_takes_box_ind():
    f, kwargs = _crop_case("many_indices")
    out = tf.compat.v1.image.crop_and_resize(IMAGE, f["boxes"], box_ind=f["box_indices"],
                                             crop_size=[3, 4])
    np.testing.assert_allclose(out.numpy(), f["output"], rtol=1e-6, atol=1e-6)


def test_graph_shape_is_known():
    @tf.function(input_signature=[tf.TensorSpec([None, 5, 6, 2]), tf.TensorSpec([None, 4]),
                                  tf.TensorSpec([None], tf.int32)])
    def crop(image, boxes, ind):
        out = tf.image.crop_and_resize(image, boxes, ind, [3, 4])
        assert out.shape.as_list() == [None, 3, 4, 2]
        return out
    f, _ = _crop_case("many_indices")
    np.testing.assert_allclose(crop(IMAGE, f["boxes"], f["box_indices"]).numpy(),
                               f["output"], rtol=1e-6, atol=1e-6)


# (Not many_indices: its whole-image box samples the image's edges, where the crop jumps to
# the extrapolation value.)
@pytest.mark.parametrize("case", ["bilinear", "outside", "flipped", "crop_size_1",
                                  "crop_height_1", "nearest"])
def test_crop_gradients_match_finite_differences(case):
    f, kwargs = _crop_case(case)
    size = [int(v) for v in f["crop_size"]]
    # Moved off the pixel grid: where a sample sits on a pixel row the crop has a kink (TF
    # takes the derivative from the right there).
    rng = np.random.default_rng(0)
    boxes = (f["boxes"] + rng.uniform(-0.01, 0.01, f["boxes"].shape)).astype(np.float32)
    image64, weights = IMAGE.astype(np.float64), f["weights"]

    def loss(image, boxes):
        out = tf.image.crop_and_resize(image, boxes, f["box_indices"], size, **kwargs)
        return float(np.sum(weights.astype(np.float64) * out.numpy().astype(np.float64)))
    _, d_image, d_boxes = _crop_with_grads(image64, boxes, f["box_indices"], size, weights,
                                           kwargs)
    assert d_image.dtype == tf.float64
    # The crop is linear in the image: any step gives the derivative.
    for _ in range(6):
        i = tuple(rng.integers(0, d) for d in IMAGE.shape)
        step = np.zeros_like(image64)
        step[i] = 0.5
        fd = (loss(image64 + step, boxes) - loss(image64 - step, boxes)) / 1.0
        np.testing.assert_allclose(d_image.numpy()[i], fd, rtol=1e-4, atol=1e-5)
    if kwargs["method"] == "nearest":
        return  # d boxes is the bilinear one (as TF), not the piecewise-constant crop's
    # Bilinear in the box corners between pixel rows / columns: small central differences.
    for j in np.ndindex(*boxes.shape):
        step = np.zeros_like(boxes)
        step[j] = 1e-3
        fd = (loss(IMAGE, boxes + step) - loss(IMAGE, boxes - step)) / 2e-3
        np.testing.assert_allclose(d_boxes.numpy()[j], fd, rtol=2e-2, atol=2e-3)


def _patches_case(name):
    return {k.split("/")[2]: FIXTURE[k] for k in FIXTURE.files
            if k.startswith(f"patches/{name}/")}


def _patch_args(name):
    return crop_cases.PATCHES[name][:4]


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", PATCHES)
def test_extract_patches_gives_tensorflows_patches_and_gradient(case, traced):
    f = _patches_case(case)
    args = _patch_args(case)

    def run(images, weights):
        with tf.GradientTape() as tape:
            tape.watch(images)
            patches = tf.image.extract_patches(images, *args)
            loss = tf.reduce_sum(weights * patches)
        return patches, tape.gradient(loss, images)
    if traced:
        run = tf.function(run)
    patches, d_images = run(tf.constant(f["images"]), tf.constant(f["weights"]))
    np.testing.assert_array_equal(patches.numpy(), f["output"])
    np.testing.assert_allclose(d_images.numpy(), f["d_images"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(
        tf.image.extract_patches(f["images"] * 100, *args).numpy(), f["output"] * 100)
    ints = tf.compat.v1.image.extract_image_patches(
        (f["images"] * 100).astype(np.int32), ksizes=args[0], strides=args[1],
        rates=args[2], padding=args[3])
    np.testing.assert_array_equal(ints.numpy(), f["int_output"])


def test_extract_patches_gradient_matches_finite_differences():
    f = _patches_case("rates_same")
    images = f["images"].astype(np.float64)
    weights = f["weights"].astype(np.float64)
    args = _patch_args("rates_same")
    x = tf.constant(images)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(weights * tf.image.extract_patches(x, *args))
    grad = tape.gradient(loss, x).numpy()
    rng = np.random.default_rng(1)
    for _ in range(8):
        i = tuple(rng.integers(0, d) for d in images.shape)
        step = np.zeros_like(images)
        step[i] = 1e-3
        fd = (np.sum(weights * tf.image.extract_patches(images + step, *args).numpy())
              - np.sum(weights * tf.image.extract_patches(images - step, *args).numpy())) / 2e-3
        np.testing.assert_allclose(grad[i], fd, rtol=1e-7, atol=1e-9)


def test_windows_larger_than_the_image_give_no_patches():
    out = _BAD["patches_too_big"]()
    assert ERRORS["patches_too_big"] is None
    assert out.shape == (3, 0, 5, 24)


def _tf_message(text: str) -> str:
    """TF's message without its eager-op decorations."""
    text = text.split("\n")[0]
    if "}} " in text:
        text = text.split("}} ", 1)[1]
    return text.split(" [Op:")[0]


@pytest.mark.parametrize("case", sorted(set(_BAD) - {"method", "patches_too_big"}))
def test_bad_input_gets_tensorflows_errors(case):
    kind, message = ERRORS[case]
    with pytest.raises(getattr(tf.errors, kind)) as err:
        _BAD[case]()
    assert _tf_message(message) in str(err.value)


def test_an_unknown_method_is_refused():
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="bicubic"):
        _BAD["method"]()


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("depth", [1, 3, 4])
def test_draw_bounding_boxes_gives_tensorflows_images(depth, traced):
    images, boxes, colors = (FIXTURE[f"draw/{depth}/images"], FIXTURE["draw/boxes"],
                             FIXTURE["draw/colors"])
    v1, v2 = tf.compat.v1.image.draw_bounding_boxes, tf.image.draw_bounding_boxes
    if traced:
        v1, v2 = tf.function(v1), tf.function(v2)
    np.testing.assert_array_equal(v1(images, boxes).numpy(), FIXTURE[f"draw/{depth}/default"])
    np.testing.assert_array_equal(v2(images, boxes, colors[:3]).numpy(),
                                  FIXTURE[f"draw/{depth}/colors"])
    np.testing.assert_array_equal(v2(images, boxes, np.zeros((0, 4), np.float32)).numpy(),
                                  FIXTURE[f"draw/{depth}/empty_colors"])
    half = v2(images.astype(np.float16), boxes, colors)
    assert half.dtype == tf.float16
    np.testing.assert_array_equal(half.numpy(), FIXTURE[f"draw/{depth}/half"])
