"""tf.make_tensor_proto / tf.make_ndarray: byte-identical to TF 2.21's protos for the cases of
tests/fixtures/tensor_protos/configs.py, TF's errors, and the round trip back to arrays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

FIXTURE_DIR = Path(__file__).parents[1] / "fixtures" / "tensor_protos"
_configs = fixture_modules.load("tensor_protos")
CASES = _configs.CASES
ERRORS = _configs.ERRORS
WANT = json.loads((FIXTURE_DIR / "protos.json").read_text())


@pytest.mark.parametrize("i", range(len(CASES)))
def test_bytes_equal_tensorflows(i):
    proto = tf.make_tensor_proto(*CASES[i](tf))
    assert proto.SerializeToString().hex() == WANT["protos"][i]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_tensorflows(i):
    kind, message = WANT["errors"][i]
    with pytest.raises({"TypeError": TypeError, "ValueError": ValueError}[kind]) as e:
        tf.make_tensor_proto(*ERRORS[i](tf))
    assert str(e.value) == message


def test_make_ndarray_round_trips():
    for value in (np.arange(6, dtype=np.int64).reshape(2, 3), np.float16([1.5, -2.0]),
                  np.array([b"x", b"yz"], dtype=object), np.array(True)):
        out = tf.make_ndarray(tf.make_tensor_proto(value))
        np.testing.assert_array_equal(out, value)
        assert out.dtype == value.dtype
    # a value broadcast to a larger shape repeats its last element
    np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(3.0, shape=[2, 2])),
                                  np.full([2, 2], 3.0, np.float32))
    np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(tf.constant([4, 5]))),
                                  [4, 5])
