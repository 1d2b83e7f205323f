"""A built Sequential model given a list of arrays runs as Keras 3's Functional: a warning that
the structure does not match, then the first array; Python numbers are not data for
fit/predict (x or y: Keras' 'Unrecognized data type', which names x). Expected: TF 2.21's
(tests/fixtures/keras_list_inputs, generate.py runs configs.run)."""

from __future__ import annotations

import json
import re

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_list_inputs")
with open(fixture_modules.FIXTURES / "keras_list_inputs" / "expected.json") as _f:
    EXPECTED = json.load(_f)["calls"]


@pytest.fixture(scope="module")
def results():
    # an Input's name takes the process's next number (keras_tensor_92 after other tests),
    # as in Keras: TF's run made the first
    return [[what, result, [re.sub(r"keras_tensor_\d+", "keras_tensor", m) for m in warned]]
            for what, result, warned in CONFIGS.run(tf)]


@pytest.mark.parametrize("i", range(len(EXPECTED)))
def test_calls_behave_as_tensorflow(results, i):
    assert results[i] == EXPECTED[i]
