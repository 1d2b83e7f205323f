"""tf.function's frequent-retracing WARNING, against the messages TensorFlow 2.21 logged for
the same call patterns (tests/fixtures/function_retracing)."""

from __future__ import annotations

import json
import logging
import re

import pytest

import ndflow as tf
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

cases = fixture_modules.load("function_retracing", "cases")
EXPECTED = json.loads((FIXTURES / "function_retracing" / "expected.json").read_text())


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(re.sub(r" at 0x[0-9a-fA-F]+>", " at 0x>", record.getMessage()))


def _warnings(case) -> list:
    handler = _Collect()
    logger = tf.get_logger()
    logger.addHandler(handler)
    try:
        case(tf)
    finally:
        logger.removeHandler(handler)
    return [m for m in handler.messages if "retracing" in m]


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.__name__)
def test_warnings_as_tensorflow(case):
    assert _warnings(case) == EXPECTED[case.__name__]


def test_no_warning_without_retracing_or_in_graphs():
    @tf.function
    def f(x):
        return x + 1.0

    def steady():
        for _ in range(20):
            f(tf.constant([1.0, 2.0]))
    assert _warnings(lambda _: steady()) == []

    @tf.function
    def g(x):
        return x * 2.0

    def in_graph():
        with tf.Graph().as_default():   # calls building a graph are not counted, as TF
            for n in range(1, 8):
                g(tf.zeros([n]))
    assert _warnings(lambda _: in_graph()) == []
