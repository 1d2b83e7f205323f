"""`tf.compat`'s Python helpers (ndflow/core/compat_helpers.py) against TF 2.21's results
(tests/fixtures/compat)."""

from __future__ import annotations

import json

import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("compat")
TF_VALUES = json.loads((fixture_modules.FIXTURES / "compat" / "values.json").read_text())
CASES = CONFIGS.cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_match_tensorflow(name):
    assert CONFIGS.record(CASES[name]) == TF_VALUES[name]


def test_the_horizon_moves_with_the_delta_days_variable(monkeypatch):
    c = tf.compat
    assert not c.forward_compatible(2026, 2, 1)
    monkeypatch.setenv("TF_FORWARD_COMPATIBILITY_DELTA_DAYS", "30")  # 2026-01-16 + 30 days
    assert c.forward_compatible(2026, 2, 1) and not c.forward_compatible(2026, 3, 1)
    monkeypatch.setenv("TF_FORWARD_COMPATIBILITY_DELTA_DAYS", "-30")  # the past: ignored
    assert c.forward_compatible(2026, 1, 15) and not c.forward_compatible(2026, 1, 16)
