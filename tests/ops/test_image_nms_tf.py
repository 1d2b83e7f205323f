"""Non-max suppression selects TensorFlow's boxes: each case of tests/fixtures/tf_image_nms
(TensorFlow 2.21, generate.py beside it; ties in scores, strict score thresholds, flipped
corners, zero-area boxes, max_output_size 0 and above the count, padding, soft-NMS, float16,
overlaps, combined NMS) gives TF's indices exactly and its scores to float rounding, eagerly
and inside tf.function; bad input gets TF's errors."""

import os
import re

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_image_nms import nms_cases

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_image_nms")
FIXTURE = np.load(os.path.join(HERE, "cases.npz"))


def _arrays(name, arrays):
    return {key: FIXTURE[f"{name}/in/{key}"] for key in arrays}


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _check(name, outputs):
    want = [FIXTURE[f"{name}/out/{k}"] for k in range(len(outputs))]
    assert f"{name}/out/{len(outputs)}" not in FIXTURE
    for got, expected in zip(outputs, want):
        got = got.numpy()
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if expected.dtype.kind == "f":
            tol = 1e-3 if expected.dtype == np.float16 else 2e-7
            np.testing.assert_allclose(got, expected, rtol=tol, atol=0)
        else:
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", sorted(nms_cases.CASES))
def test_eager_calls_select_tensorflows_boxes(name):
    fn, arrays, kwargs = nms_cases.CASES[name]
    _check(name, _outputs(getattr(tf.image, fn)(**_arrays(name, arrays), **kwargs)))


@pytest.mark.parametrize("name", sorted(nms_cases.CASES))
def test_traced_functions_select_tensorflows_boxes(name):
    fn, arrays, kwargs = nms_cases.CASES[name]
    inputs = _arrays(name, arrays)

    @tf.function
    def run(**tensors):
        return getattr(tf.image, fn)(**tensors, **kwargs)
    _check(name, _outputs(run(**{k: tf.constant(v) for k, v in inputs.items()})))


def test_padded_output_shapes_are_static_in_graphs():
    @tf.function
    def run(boxes, scores):
        idx, valid = tf.image.non_max_suppression_padded(boxes, scores, 5,
                                                         pad_to_max_output_size=True)
        assert idx.shape.as_list() == [5] and valid.shape.as_list() == []
        return idx
    run(tf.constant(nms_cases.BOXES), tf.constant(nms_cases.SCORES))


def test_batched_padded_needs_padding():
    with pytest.raises(ValueError, match="must be True for batched input"):
        tf.image.non_max_suppression_padded(tf.constant(nms_cases.BATCH_BOXES),
                                            tf.constant(nms_cases.BATCH_SCORES), 3)


def test_v1_names():
    for name in ("non_max_suppression", "non_max_suppression_with_scores",
                 "non_max_suppression_padded", "non_max_suppression_overlaps",
                 "combined_non_max_suppression"):
        assert getattr(tf.compat.v1.image, name) is getattr(tf.image, name)


@pytest.mark.parametrize("name", sorted(nms_cases.ERRORS))
def test_bad_input_gets_tensorflows_errors(name):
    fn, arrays, kwargs = nms_cases.ERRORS[name]
    error = getattr(tf.errors, str(FIXTURE[f"{name}/error"]))
    message = str(FIXTURE[f"{name}/message"])
    with pytest.raises(error, match=re.escape(message)):
        getattr(tf.image, fn)(**arrays, **kwargs)
