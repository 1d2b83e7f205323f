"""keras.name_scope (ndflow/keras/layers/base_layer.py KerasNameScope): the paths Keras 3.15
gives variables built inside scopes (checked with Keras on TF 2.21: nested scopes of one name
stay doubled, `override_parent="/"` drops the enclosing ones), and NASNet's weight paths
depend on it (tests/keras/applications)."""

from __future__ import annotations

import pytest

import ndflow as tf

keras = tf.keras


def _paths(layer):
    return [w.path for w in layer.weights]


def test_scopes_prefix_the_paths_of_weights_built_inside():
    with keras.name_scope("a"):
        with keras.name_scope("a"):
            dense = keras.layers.Dense(2, name="d")
            dense.build((None, 3))
    assert _paths(dense) == ["a/a/d/kernel", "a/a/d/bias"]
    with keras.name_scope("x"):
        with keras.name_scope("y", override_parent="/"):
            other = keras.layers.Dense(2, name="e")
            other.build((None, 3))
    assert _paths(other) == ["y/e/kernel", "y/e/bias"]
    outside = keras.layers.Dense(2, name="f")
    outside.build((None, 3))
    assert _paths(outside) == ["f/kernel", "f/bias"]


def test_functional_layers_called_inside_a_scope():
    x = keras.Input((4,))
    with keras.name_scope("block"):
        y = keras.layers.Dense(3, name="g")(x)
    assert [w.path for w in keras.Model(x, y).weights] == ["block/g/kernel", "block/g/bias"]


def test_a_name_with_a_slash_is_refused():
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        keras.name_scope("a/b")
