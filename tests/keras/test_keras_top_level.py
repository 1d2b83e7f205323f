"""Keras 3's top-level names ndflow adds: keras.version() (the version Keras wrote into the
archives of tests/fixtures), keras.device, and the aliases keras.Loss, keras.Regularizer,
keras.KerasTensor."""

from __future__ import annotations

import json
import zipfile

import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras


def test_version_is_the_keras_that_wrote_the_fixtures():
    with zipfile.ZipFile(fixture_modules.FIXTURES / "keras_conv_lstm" / "model.keras") as z:
        written = json.loads(z.read("metadata.json"))["keras_version"]
    assert keras.version() == written
    assert keras.__version__ == written   # the module metadata programs print or check


def test_device_scopes_ops():
    with keras.device("cpu:0"):
        x = tf.constant([1.0]) * 2.0
    assert x.device.endswith("device:CPU:0")
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        with keras.device("nonsense:0"):
            tf.constant([1.0]) * 2.0


def test_aliases_are_the_same_objects():
    assert keras.Loss is keras.losses.Loss
    assert keras.Regularizer is keras.regularizers.Regularizer
    t = keras.KerasTensor((None, 3), "float16")
    assert t.shape == (None, 3) and t.dtype == tf.float16
    with pytest.raises(ValueError, match="ragged"):
        keras.KerasTensor((2,), ragged=True)


def test_keras_tensor_dtype_is_keras3s_string_and_the_dtype():
    x = tf.keras.Input((3,), dtype="float16")
    assert isinstance(x.dtype, str) and x.dtype == "float16" and str(x.dtype) == "float16"
    assert repr(x.dtype) == "'float16'" and x.dtype.startswith("float")   # as Keras 3 prints
    assert x.dtype == tf.float16 and tf.float16 == x.dtype
    assert x.dtype.name == "float16" and x.dtype.is_floating   # Keras 2's reads still work
    assert tf.as_dtype(x.dtype) is tf.float16
    y = tf.keras.layers.Dense(2, dtype="float16")(x)
    assert y.dtype == "float16" and tf.keras.Model(x, y)(tf.ones([1, 3])).dtype is tf.float16
    # an op's type attr given as such a name (or any dtype name) is the DType
    assert tf.raw_ops.Cast(x=tf.constant([1]), DstT=x.dtype).dtype is tf.float16


def test_named_keras_tensors_take_no_auto_name_number():
    # Keras' auto_name: only an unnamed KerasTensor advances the keras_tensor_<n> counter
    first = tf.keras.Input((2,))
    n = int(first.name.rsplit("_", 1)[1]) if first.name != "keras_tensor" else 0
    named = [tf.keras.Input((2,), name=f"in{i}") for i in range(3)]
    assert [t.name for t in named] == ["in0", "in1", "in2"]
    assert tf.keras.Input((2,)).name == f"keras_tensor_{n + 1}"
