"""A `tf.variable_creator_scope` creator receives every argument of `tf.Variable`, defaults
included and in TensorFlow's order (creators read kwargs["trainable"] & co); a variable's
synchronization/aggregation default to AUTO/NONE. Expected values: TF 2.21
(tests/fixtures/variable_creator_kwargs/generate.py)."""

import json
import os

import pytest

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "variable_creator_kwargs", "tf_2_21.json")
with open(FIXTURE) as f:
    EXPECTED = json.load(f)

CALLS = {   # as in the fixture's generate.py
    "plain": {"initial_value": 2.0},
    "named": {"initial_value": 2.0, "name": "bias", "trainable": False},
    "aggregated": {"initial_value": [1.0, 2.0], "dtype": "float64",
                   "aggregation": tf.VariableAggregation.MEAN,
                   "synchronization": tf.VariableSynchronization.ON_READ, "shape": [2]},
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_creator_receives_tensorflows_arguments(call):
    seen = []

    def creator(next_creator, **kwargs):
        seen.append([[k, repr(v)] for k, v in kwargs.items()])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        v = tf.Variable(**CALLS[call])
    assert seen == [EXPECTED["creator_arguments"][call]]
    assert v.name == ("bias:0" if call == "named" else "Variable:0")


def test_creator_can_read_defaults():
    def creator(next_creator, **kwargs):
        kwargs["trainable"] = not kwargs["trainable"] if kwargs["trainable"] is not None \
            else False
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        v = tf.Variable(1.0)
    assert v.trainable is False


def test_default_synchronization_and_aggregation():
    v = tf.Variable(1.0)
    assert repr(v.synchronization) == EXPECTED["default_synchronization"]
    assert repr(v.aggregation) == EXPECTED["default_aggregation"]


def test_missing_initial_value_in_tf_function():
    error_type, message = EXPECTED["function_missing_initial_value"]

    @tf.function
    def make():
        tf.Variable()

    with pytest.raises(ValueError) as info:
        make()
    last_line = str(info.value).strip().splitlines()[-1].strip()
    assert (type(info.value).__name__, last_line) == (error_type, message)
