"""`tf.compat.v1.layers` with Keras 3: every name is TensorFlow's AttributeError "`<name>` is
not available with Keras 3." (TF 2.21's KerasLazyLoader without tf_keras). Expected texts:
tests/fixtures/variable_creator_kwargs/generate.py."""

import json
import os

import pytest

import ndflow as tf
import ndflow.compat.v1 as v1

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "variable_creator_kwargs", "tf_2_21.json")
with open(FIXTURE) as f:
    EXPECTED = json.load(f)["layers_v1_errors"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_compat_v1_layers_names_raise_tensorflows_error(name):
    error_type, message = EXPECTED[name]
    assert hasattr(tf.compat, "v1") and "layers" in dir(tf.compat.v1)  # served lazily
    with pytest.raises(AttributeError) as info:
        getattr(v1.layers, name)
    assert type(info.value).__name__ == error_type
    assert str(info.value) == message
    assert not hasattr(v1.layers, name)
