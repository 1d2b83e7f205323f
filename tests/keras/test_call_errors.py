"""Keras' context on errors raised inside a layer's `call` (layers/call_errors.py) against
Keras 3 on TF 2.21 (tests/fixtures/keras_call_errors, generate.py beside)."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_call_errors")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "keras_call_errors" / "values.json").read_text())
CASES = CONFIGS.cases(tf, tf.keras)


@pytest.mark.parametrize("name", sorted(CASES))
def test_errors_match_keras(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_an_op_error_keeps_its_class_and_op():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        CASES["op_error"]()
    assert info.value.message.startswith("Exception encountered when calling BadOp.call().")
    assert info.value.error_code == tf.errors.INVALID_ARGUMENT
