"""Graph-building errors name what TF 2.21's do (tests/fixtures/shape_error_context): the
shape function's message, the node and its input shapes, then the input tensors the shape
function computed or read as (partial) shapes; shape tensors below -1 fail on their own."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.op_def import summarize_value
from tests import fixture_modules

cases = fixture_modules.load("shape_error_context", "cases")
EXPECTED = fixture_modules.expected("shape_error_context", "messages")


@pytest.mark.parametrize("key", sorted(cases.CASES))
def test_message_equals_tensorflow(key):
    assert cases.message(tf, key) == EXPECTED[key]


def test_every_case_has_tensorflows_message():
    assert sorted(EXPECTED) == sorted(cases.CASES)


@pytest.mark.parametrize("value, text", [
    (5, "5"), ([0, 5], "0 5"), ([[1, 1], [-5, 0]], "[1 1][-5 0]"),
    (np.arange(8).reshape(2, 2, 2), "[[0 1][2 3]][[4 5][6 7]]"),
    (np.float32([0.1, 2.0]), "0.1 2.0"), (np.zeros((0, 2), np.int32), ""),
])
def test_values_are_summarized_as_tensorflows_summarize_value(value, text):
    assert summarize_value(value) == text


def test_summary_stops_after_its_limit():
    assert summarize_value(np.arange(300)).endswith("254 255 ...")


def test_a_minus_one_shape_builds_with_an_unknown_dimension():
    @tf.function
    def f():
        return tf.random.uniform([2, -1])
    assert f.get_concrete_function().structured_outputs.shape.as_list() == [2, None]


def test_eager_shapes_still_refuse_negative_dimensions():
    with pytest.raises(InvalidArgumentError, match=r"Dimension -1 must be >= 0 "
                                                   r"\[Op:RandomStandardNormal\]"):
        tf.random.normal([2, -1])


def test_one_hot_names_its_scope_and_values_as_tensorflow():
    g = tf.Graph()
    with g.as_default():
        tf.one_hot(tf.constant([0, 1]), 3)
    assert [n.name for n in g.as_graph_def().node][1:] == \
        ["one_hot/on_value", "one_hot/off_value", "one_hot/depth", "one_hot"]
