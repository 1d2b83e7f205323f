"""`tf.cast` of a Python value as TF 2.21: the value becomes a tensor of its own type first
(`tf.cast(0.1, tf.float64)` is float32's 0.1, a float too large for float32 TF's ValueError),
and in a graph the constant is `Cast/x` (a NumPy float64 cast to float64 makes no Cast op).
Expected: TF 2.21's (tests/fixtures/tf_cast_python_values, generate.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_cast_python_values",
                       "expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.mark.parametrize("i", range(len(EXPECTED["cases"])))
def test_python_values_convert_first_as_tensorflow(i):
    (value, dtype), want = EXPECTED["cases"][i], EXPECTED["values"][i]
    try:
        out = tf.cast(value, dtype).numpy()
    except (TypeError, ValueError) as e:
        assert [type(e).__name__, str(e)] == want
        return
    assert [np.asarray(out).tolist(), str(out.dtype)] == want


def test_graph_names_are_tensorflows():
    g = tf.Graph()
    with g.as_default():
        tf.cast(0.5, tf.float64)
        tf.cast(tf.constant(1), tf.float32, name="c")
        tf.cast(np.float64(2.0), tf.float64)
        assert [[op.name, op.type] for op in g.get_operations()] == EXPECTED["graph"]
