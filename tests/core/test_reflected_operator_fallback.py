"""`tensor <op> obj` where `obj` is no tensor: as TF's binary_op_wrapper, an object with the
reflected operator answers (`tf.constant(...) + keras.Input(...)` is a KerasTensor), one
without it, or whose reflected operator fails or returns NotImplemented, leaves TF's
conversion error; comparisons have no fallback. Expected: TF 2.21
(tests/fixtures/reflected_operator_fallback/generate.py)."""

import json

import ndflow as tf
from tests import fixture_modules

CASES = fixture_modules.load("reflected_operator_fallback", "cases")
EXPECTED = json.loads(
    (fixture_modules.FIXTURES / "reflected_operator_fallback" / "tf_2_21.json").read_text())


def test_reflected_operator_fallback_matches_tensorflow():
    got = json.loads(json.dumps(CASES.record(tf)))
    assert got == EXPECTED
    assert EXPECTED["tensor add Aware"] == ["radd", "EagerTensor"]   # the fallback is exercised


def test_original_error_is_kept_when_the_fallback_fails():
    x = tf.constant([1.0])
    for op in (lambda: x * CASES.Aware(), lambda: x - CASES.Aware()):
        try:
            op()
        except ValueError as e:
            assert "Attempt to convert a value" in str(e)
        else:
            raise AssertionError("expected TF's conversion error")
