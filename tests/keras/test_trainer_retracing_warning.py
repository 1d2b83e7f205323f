"""Keras' train, test and predict functions share one code object (`multi_step_on_iterator`),
so TF's retracing warning counts the calls of every model's step functions together: a loop
making, fitting and evaluating six models gets TF 2.21's two warnings, with its counts
(tests/fixtures/keras_retracing_warning), not two per step function."""

from __future__ import annotations

import json
import logging
import re
import weakref

import ndflow as tf
from ndflow.runtime import frequent_tracing
from tests import fixture_modules

CONFIGS = fixture_modules.load("keras_retracing_warning")
with open(fixture_modules.FIXTURES / "keras_retracing_warning" / "expected.json") as _f:
    EXPECTED = json.load(_f)["warnings"]


def test_model_loop_warns_as_tensorflow(caplog, monkeypatch):
    # the counts are per process: start from none, whatever ran before in this worker
    monkeypatch.setattr(frequent_tracing, "_detectors", weakref.WeakKeyDictionary())
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        CONFIGS.run(tf)
    counts = [re.match(r"(\d+ out of the last \d+ calls)", r.getMessage()).group(1)
              for r in caplog.records if "triggered tf.function retracing" in r.getMessage()]
    assert counts == EXPECTED
