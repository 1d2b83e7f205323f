"""`tf.compat.v1.make_template` against TensorFlow 2.21: the programs of
tests/fixtures/tf_templates/configs.py run by both, their observations (variable and tensor
names, template properties, values, errors) compared with templates.json, which the script
beside it generated from TensorFlow."""

import json

import pytest

import ndflow as tf
from ndflow.ops.template import EagerTemplate
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

EXPECTED = json.loads((FIXTURES / "tf_templates" / "templates.json").read_text())
_configs = fixture_modules.load("tf_templates")
v1 = tf.compat.v1


@pytest.fixture(scope="module")
def graph_observed():
    return _configs.graph_program(tf)


@pytest.fixture(scope="module")
def eager_observed():
    assert tf.executing_eagerly()
    return _configs.eager_program(tf)


@pytest.mark.parametrize("key", sorted(EXPECTED["graph"]))
def test_graph_mode_matches_tensorflow(graph_observed, key):
    assert key in graph_observed
    assert json.loads(json.dumps(graph_observed[key])) == EXPECTED["graph"][key]


@pytest.mark.parametrize("key", sorted(EXPECTED["eager"]))
def test_eager_and_tf_function_match_tensorflow(eager_observed, key):
    assert key in eager_observed
    assert json.loads(json.dumps(eager_observed[key])) == EXPECTED["eager"][key]


def test_errors_name_where_the_template_was_made():
    g = tf.Graph()
    with g.as_default():
        t = v1.make_template("broken", lambda x: x + v1.get_variable(
            "w", shape=[3], initializer=v1.zeros_initializer()))
        with pytest.raises(ValueError) as info:
            t(v1.placeholder(tf.float32, [2]))
        message = str(info.value)
        assert "originally defined at:" in message
        assert "test_errors_name_where_the_template_was_made" in \
            message.split("originally defined at:")[1]


def test_two_calls_share_weights_and_train_together():
    g = tf.Graph()
    with g.as_default():
        dense = v1.make_template("dense", lambda x: tf.matmul(x, v1.get_variable(
            "kernel", shape=[2, 1], initializer=v1.ones_initializer())))
        a = v1.placeholder(tf.float32, [None, 2])
        loss = tf.reduce_sum(dense(a)) + tf.reduce_sum(dense(2.0 * a))
        assert [v.name for v in v1.trainable_variables()] == ["dense/kernel:0"]
        step = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            s.run(step, {a: [[1.0, 1.0]]})
            # d loss / d kernel = 1 + 2 = 3 per entry: 1 - 0.1 * 3
            assert s.run(dense.variables[0]).ravel().tolist() == pytest.approx([0.7, 0.7])


def test_eager_template_rejects_graph_mode_and_keeps_eager_store_clean():
    g = tf.Graph()
    with g.as_default(), pytest.raises(RuntimeError, match="only be used when eager"):
        EagerTemplate("x", lambda: None)
    # outside a template, eager get_variable still makes a new variable per call
    a = v1.get_variable("template_test_free", shape=[])
    b = v1.get_variable("template_test_free", shape=[])
    assert a is not b
