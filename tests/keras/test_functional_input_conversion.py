"""A functional model converts each input to its `Input`'s dtype, as Keras 3's
`Functional._convert_inputs_to_tensors` (an int tensor fed to a float Input is cast), and
warns, as Keras, when a dict of inputs has keys other than the Inputs' names (TF's "Migrate
tf.feature_column" guide does both)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndflow as tf


def test_int_tensor_to_float_input_is_cast():
    inputs = {k: tf.keras.Input(shape=(), name=k) for k in ("foo", "bar", "baz")}
    model = tf.keras.Model(inputs, tf.keras.layers.Concatenate()(list(inputs.values())))
    out = model({"foo": tf.constant([1]), "bar": tf.constant([0]), "baz": tf.constant([-1])})
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.array([1.0, 0.0, -1.0], np.float32))


def test_float_tensor_to_int_input_is_cast_and_same_dtype_kept():
    x = tf.keras.Input(shape=(2,), dtype="int64")
    model = tf.keras.Model(x, x * 2)
    out = model(tf.constant([[1.7, -2.2]]))
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), np.array([[1.7, -2.2]]).astype(np.int64) * 2)
    same = tf.constant([[3, 4]], tf.int64)
    assert model(same).dtype == tf.int64


def test_dict_keys_other_than_input_names_warn():
    inputs = {"foo": tf.keras.Input(shape=()), "bar": tf.keras.Input(shape=(), name="bar")}
    name = inputs["foo"].name
    with pytest.warns(UserWarning) as record:
        tf.keras.Model(inputs, tf.keras.layers.Concatenate()(list(inputs.values())))
    assert [str(w.message) for w in record] == [
        "When providing `inputs` as a dict, all keys in the dict must match the names of the "
        f"corresponding tensors. Received key 'foo' mapping to value {inputs['foo']} which "
        f"has name '{name}'. Change the tensor name to 'foo' (via `Input(..., name='foo')`)"]
    named = {k: tf.keras.Input(shape=(), name=k) for k in ("p", "q")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.keras.Model(named, tf.keras.layers.Concatenate()(list(named.values())))


@pytest.mark.parametrize("kind, path", [("single", ""), ("list", "1"), ("dict", "b")])
def test_rank_mismatch_names_the_inputs_path_as_keras(kind, path):
    x = tf.keras.Input(shape=(3,), name="x")
    y = tf.keras.Input(shape=(3,), name="b")
    if kind == "single":
        model, bad = tf.keras.Model(x, x + 1.0), tf.constant(1.0)
    else:
        out = tf.keras.layers.Concatenate()([x, y])
        if kind == "list":
            model, bad = tf.keras.Model([x, y], out), [tf.ones([1, 3]), tf.constant(1.0)]
        else:
            model = tf.keras.Model({"x": x, "b": y}, out)
            bad = {"x": tf.ones([1, 3]), "b": tf.constant(1.0)}
    name = "x" if kind == "single" else "b"
    with pytest.raises(ValueError, match=(
            f"Invalid input shape for input 1.0 with name '{name}' and path '{path}'. Expected "
            r"shape \(None, 3\), but input has incompatible shape \(\)")):
        model(bad)
