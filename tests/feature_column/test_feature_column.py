"""tf.feature_column and tf.compat.v1.feature_column against TensorFlow 2.21's results
(tests/fixtures/feature_column): hashed, vocabulary and crossed ids bit for bit,
input_layer/linear_model outputs, variable names and collections, parse specs, column
objects, and the errors (type and message) of bad arguments and inputs."""

import json
import math
import re
import sys
from pathlib import Path

import pytest

import ndflow as tf
from ndflow.feature_column.base import FeatureTransformationCache

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "feature_column"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
sys.path.insert(0, str(FIXTURE))
try:
    from fc_cases import cases, to_python  # noqa: E402
finally:
    sys.path.remove(str(FIXTURE))

CASES = cases(tf, FeatureTransformationCache)
VALUES = sorted(k for k, v in EXPECTED.items() if "value" in v)
ERRORS = sorted(k for k, v in EXPECTED.items() if "error" in v)


def _same(got, want, path="") -> None:
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)), f"{path}: {got!r} != {want!r}"
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), f"{path}: {got} != {want}"
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{path}: {got} != {want}"
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def test_fixture_covers_values_and_errors():
    assert set(CASES) == set(EXPECTED)
    assert len(VALUES) > 40 and len(ERRORS) > 40


@pytest.mark.parametrize("name", VALUES)
def test_matches_tensorflow(name):
    _same(to_python(CASES[name]()), EXPECTED[name]["value"])


# the rank-0 message prints the raw feature; ndflow's tensor prints differently
_MESSAGE_PREFIX_ONLY = {"err_input_layer_rank0": "Feature (key: x) cannot have rank 0."}


def _short_classes(text: str) -> str:
    """`<class 'pkg.mod.Name'>` as `<class 'Name'>`: the libraries' module paths differ."""
    return re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"<class '\1'>", text)


@pytest.mark.parametrize("name", ERRORS)
def test_error_matches_tensorflow(name):
    want = EXPECTED[name]
    with pytest.raises(Exception) as info:
        CASES[name]()
    assert type(info.value).__name__ == want["error"]
    message = _short_classes(str(info.value).split("\n")[0])
    if name in _MESSAGE_PREFIX_ONLY:
        assert message.startswith(_MESSAGE_PREFIX_ONLY[name])
    else:
        assert message == _short_classes(want["message"])
