"""A TensorFlow op given a KerasTensor (`tf.math.argmax(keras.Input(...))`, as the migration
guides' TF1-era code does) is Keras 3's ValueError from `KerasTensor.__tf_tensor__`, not a
NumPy TypeError. Expected: TF 2.21 (tests/fixtures/keras_tensor_tf_op_error/generate.py)."""

import json
import os

import pytest

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "keras_tensor_tf_op_error", "tf_2_21.json")
with open(FIXTURE) as f:
    EXPECTED = json.load(f)

CALLS = {   # as in the fixture's generate.py
    "argmax": lambda x: tf.math.argmax(input=x, axis=1),
    "exp": lambda x: tf.exp(x),
    "convert_to_tensor": lambda x: tf.convert_to_tensor(x),
    "reduce_sum": lambda x: tf.reduce_sum(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_tf_op_on_keras_tensor_is_kerass_value_error(name):
    error_type, message = EXPECTED[name]
    with pytest.raises(Exception) as info:
        CALLS[name](tf.keras.Input((2,)))
    assert (type(info.value).__name__, str(info.value)) == (error_type, message)


def test_keras_ops_and_layers_still_take_keras_tensors():
    x = tf.keras.Input((2,))
    y = tf.keras.ops.argmax(tf.keras.layers.Dense(3)(x), axis=1)
    assert tuple(y.shape) == (None,)
