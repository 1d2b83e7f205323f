"""Every public tf.feature_column function logs TF 2.21's deprecation warning once, naming
the caller's line, the function and TF's module of it (as TF's `@deprecation.deprecated`)."""

from __future__ import annotations

import sys

import pytest

import ndflow as tf
from ndflow.core import strict_mode
from ndflow.feature_column import deprecation_warnings

fc = tf.compat.v1.feature_column
USE_KERAS = ("Instructions for updating:\nUse Keras preprocessing layers instead, either "
             "directly or via the `tf.keras.utils.FeatureSpace` utility. Each of "
             "`tf.feature_column.*` has a functional equivalent in `tf.keras.layers` for feature "
             "preprocessing when training a Keras model.\n")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(deprecation_warnings, "_warned", set())


def _expected(line, name, module):
    return (f"WARNING:tensorflow:From {__file__}:{line}: {name} (from "
            f"tensorflow.python.feature_column.{module}) is deprecated and will be removed in a "
            "future version.\n")


def test_constructor_and_input_layer_warn_once_naming_the_caller(capsys):
    line = sys._getframe().f_lineno + 1
    col = fc.numeric_column("foo")
    fc.numeric_column("bar")
    line2 = sys._getframe().f_lineno + 1
    fc.input_layer({"foo": tf.constant([1.0])}, [col])
    err = capsys.readouterr().err
    assert err == (_expected(line, "numeric_column", "feature_column_v2") + USE_KERAS +
                   _expected(line2, "input_layer", "feature_column") + USE_KERAS)
    fc.input_layer({"foo": tf.constant([1.0])}, [col])
    assert capsys.readouterr().err == ""


def test_crossed_column_has_its_own_instructions(capsys):
    line = sys._getframe().f_lineno + 1
    tf.feature_column.crossed_column(["a", "b"], 10)
    assert capsys.readouterr().err == (
        _expected(line, "crossed_column", "feature_column_v2") +
        "Instructions for updating:\nUse `tf.keras.layers.experimental.preprocessing."
        "HashedCrossing` instead for feature crossing when preprocessing data to train a Keras "
        "model.\n")


def test_sequence_column_warns_for_itself_and_the_column_it_builds(capsys):
    line = sys._getframe().f_lineno + 1
    tf.feature_column.sequence_categorical_column_with_identity("ids", 5)
    err = capsys.readouterr().err
    assert err.startswith(_expected(line, "sequence_categorical_column_with_identity",
                                    "sequence_feature_column") + USE_KERAS)
    # as in TF, the categorical column it makes warns too (from the library's own line)
    assert "categorical_column_with_identity (from tensorflow.python.feature_column." \
        "feature_column_v2) is deprecated" in err


def test_strict_mode_raises(monkeypatch):
    monkeypatch.setattr(strict_mode, "STRICT_MODE", True)
    with pytest.raises(RuntimeError, match="This behavior has been deprecated"):
        fc.numeric_column("x")
