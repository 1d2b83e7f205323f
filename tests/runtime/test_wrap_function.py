"""`tf.compat.v1.wrap_function` against TensorFlow 2.21: the program of
tests/fixtures/tf_wrap_function/configs.py run by both, its observations (names, values of
calls and pruned functions, errors) compared with wrap_function.json, which the script
beside it generated from TensorFlow."""

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.runtime.wrap_function import WrappedFunction
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

EXPECTED = json.loads((FIXTURES / "tf_wrap_function" / "wrap_function.json").read_text())
_configs = fixture_modules.load("tf_wrap_function")
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def observed():
    return _configs.program(tf)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_matches_tensorflow(observed, key):
    assert key in observed
    assert json.loads(json.dumps(observed[key])) == EXPECTED[key]


def test_a_tf1_function_with_placeholders_and_variables_runs_eagerly():
    def fn(x):
        w = v1.get_variable("w", shape=[2, 1], initializer=v1.constant_initializer(3.0))
        keep = v1.placeholder_with_default(1.0, [], name="keep")
        return tf.matmul(x, w) * keep

    wrapped = v1.wrap_function(fn, [tf.TensorSpec([None, 2], tf.float32)])
    assert isinstance(wrapped, WrappedFunction) and wrapped.graph.name == "wrapped_function"
    assert [v.name for v in wrapped.variables] == ["w:0"]
    got = wrapped(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(got.numpy(), [[9.0], [21.0]])
    # gradients flow to the lifted variable through a call
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(wrapped(tf.constant([[1.0, 2.0]])))
    np.testing.assert_allclose(tape.gradient(loss, wrapped.variables[0]).numpy(), [[1.0], [2.0]])
    # a call inside tf.function inlines the graph
    np.testing.assert_allclose(tf.function(lambda x: wrapped(x))(tf.ones([1, 2])).numpy(),
                               [[6.0]])
    keep = wrapped.graph.get_tensor_by_name("keep:0")
    pruned = wrapped.prune(feeds=[wrapped.inputs[0], keep], fetches=wrapped.outputs[0])
    np.testing.assert_allclose(pruned(tf.ones([1, 2]), tf.constant(0.5)).numpy(), [[3.0]])


def test_shapes_the_signature_rejects_are_an_error():
    wrapped = v1.wrap_function(lambda x: x * 2.0, [tf.TensorSpec([2], tf.float32)])
    with pytest.raises(TypeError, match="not compatible"):
        wrapped(tf.constant([1.0, 2.0, 3.0]))
