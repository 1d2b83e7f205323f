"""tf.image.sample_distorted_bounding_box (v2 and TF1's), and its stateless form, draw
TensorFlow's crops: each case of tests/fixtures/tf_bbox_sampling (TensorFlow 2.21,
generate.py beside it) called three times after tf.random.set_seed(1) gives TF's begin,
size and box exactly (one kernel: the stream carries on between calls), eagerly and in a
tf.function; bad input gets TF's messages."""

import os

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_bbox_sampling.bbox_cases import CASES, ERRORS

EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures",
                                "tf_bbox_sampling", "expected.npz"))


def _function(name):
    if name == "v1":
        return tf.compat.v1.image.sample_distorted_bounding_box
    return getattr(tf.image, name)


def _check(case, call, got):
    for part, value in zip(("begin", "size", "bboxes"), got):
        want = EXPECTED[f"{case}/{call}/{part}"]
        assert value.dtype.as_numpy_dtype == want.dtype, (case, part)
        np.testing.assert_array_equal(value.numpy(), want, err_msg=f"{case} {call} {part}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_calls_draw_tensorflows_crops(case):
    name, kwargs = CASES[case]
    tf.random.set_seed(1)
    for call in range(3):
        _check(case, call, _function(name)(**kwargs))


@pytest.mark.parametrize("case", ["covered_03", "stateless"])
def test_in_a_function(case):
    name, kwargs = CASES[case]
    tf.random.set_seed(1)

    @tf.function
    def sample():
        return _function(name)(**kwargs)
    for call in range(3):
        _check(case, call, sample())


def test_the_crop_cuts_the_image():
    image = tf.reshape(tf.range(100 * 120 * 3), [100, 120, 3])
    begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
        tf.shape(image), CASES["stateless"][1]["bounding_boxes"], seed=[3, 4])
    crop = tf.slice(image, begin, size)
    assert crop.shape.as_list() == [int(size[0]), int(size[1]), 3]


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_input_gets_tensorflows_errors(case):
    name, kwargs = ERRORS[case]
    kind, message = str(EXPECTED[f"error/{case}"]).split(": ", 1)
    with pytest.raises(getattr(tf.errors, kind)) as e:
        _function(name)(**kwargs)
    assert message in str(e.value)
