"""tf.function's rules for variables created while tracing, against TF 2.21
(tests/fixtures/function_variables, generate.py beside): the first trace may create them and
is then traced again, creating none; a later trace that creates one is TF's ValueError."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("function_variables")
TF_VALUES = json.loads(
    (fixture_modules.FIXTURES / "function_variables" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_second_trace_is_the_one_that_runs():
    # the variable made in the first trace is the one the function keeps using
    made = []

    @tf.function
    def f(x):
        if not made:
            made.append(tf.Variable(10.0))
        made[0].assign_add(1.0)
        return x + made[0]
    assert float(f(tf.constant(1.0))) == 12.0
    assert float(f(tf.constant(1.0))) == 13.0
    assert len(made) == 1 and float(made[0].numpy()) == 12.0
