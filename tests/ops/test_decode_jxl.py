"""tf.image.decode_jxl / tf.io.decode_jxl against TF 2.21 bit for bit (tests/fixtures/
decode_jxl: lossless and lossy RGB, RGBA, gray, gray+alpha and an animation, made by
make_images.py; TF's pixels in expected.npz), TF's errors and graph shapes."""

import json
import os

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError, UnimplementedError

pytest.importorskip("imagecodecs")  # libjxl's Python binding, the decoder

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "decode_jxl")
EXPECTED = np.load(os.path.join(HERE, "expected.npz"))
with open(os.path.join(HERE, "errors.json")) as _f:
    ERRORS = json.load(_f)
EIGHT_BIT = sorted(n for n in EXPECTED.files if "16" not in n and n != "png_input")


def _read(name):
    with open(os.path.join(HERE, name + ".jxl"), "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", EIGHT_BIT)
def test_pixels_match_tf(name):
    want = EXPECTED[name]
    got = tf.image.decode_jxl(_read(name))
    assert got.dtype == tf.uint8
    np.testing.assert_array_equal(got.numpy(), want)
    # Asking for the file's own channel count gives the same pixels.
    if want.shape[-1] != 2:
        same = tf.io.decode_jxl(_read(name), channels=want.shape[-1])
        np.testing.assert_array_equal(same.numpy(), want)


def test_other_formats_take_the_png_path_as_in_tf():
    png = tf.io.encode_png(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))
    np.testing.assert_array_equal(tf.image.decode_jxl(png).numpy(), EXPECTED["png_input"])


def test_in_a_function_and_graph_shapes():
    @tf.function
    def f(contents):
        return tf.image.decode_jxl(contents, channels=3)

    np.testing.assert_array_equal(f(tf.constant(_read("rgb_q90"))).numpy(),
                                  EXPECTED["rgb_q90"])
    for channels, want in ERRORS["graph_shapes"].items():
        with tf.Graph().as_default():
            x = tf.compat.v1.placeholder(tf.string, [])
            assert tf.image.decode_jxl(x, channels=int(channels)).shape.as_list() == want


CASES = {
    "empty": (b"", 0), "garbage": (b"not an image", 0), "truncated": (None, 0),
    "header_only": (None, 0), "channels_mismatch": ("gray_lossless", 3),
    "channels_mismatch_rgb": ("rgb_q90", 4), "channels_attr": ("rgb_q90", 2),
    "vector": ("vector", 0),
}


@pytest.mark.parametrize("case", ERRORS["errors"], ids=lambda c: c["case"])
def test_errors_match_tf(case):
    contents, channels = CASES[case["case"]]
    rgb = _read("rgb_q90")
    if case["case"] == "truncated":
        contents = rgb[:40]
    elif case["case"] == "header_only":
        contents = rgb[:12]
    elif contents == "vector":
        contents = [rgb]
    elif isinstance(contents, str):
        contents = _read(contents)
    want = case["message"].split("}} ", 1)[1].split(" [Op:")[0]
    with pytest.raises(InvalidArgumentError) as e:
        tf.image.decode_jxl(contents, channels=channels)
    assert want in str(e.value)


def test_more_than_8_bits_per_sample_is_refused():
    # TF decodes these (its libjxl dithers to 8 bits); ndflow says it cannot match that.
    assert EXPECTED["gray16_all_lossless"].shape == (256, 256, 1)
    with pytest.raises(UnimplementedError, match="more than 8 bits"):
        tf.image.decode_jxl(_read("gray16_all_lossless"))
