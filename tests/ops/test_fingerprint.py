"""tf.fingerprint: TF 2.21's FarmHash fingerprints (fixture), graph mode, TF's errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

HERE = Path(__file__).parents[1] / "fixtures" / "fingerprint"
WANT = json.loads((HERE / "values.json").read_text())
INPUTS = {
    "int32_rows": np.array([[1, 2], [3, 4]], np.int32),
    "strings": np.array([b"a", b"bc", b""], object),
    "string_rows": np.array([[b"a", b"bc"], [b"d", b""]], object),
    "float32": np.array([1.5, 2.0, -0.0], np.float32),
    "int64_3d": np.arange(24, dtype=np.int64).reshape(2, 3, 4),
    "empty_rows": np.zeros([2, 0, 3], np.float32),
    "uint8": np.array([[0, 255, 7]], np.uint8),
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_matches_tensorflow(name):
    got = tf.fingerprint(tf.constant(INPUTS[name]))
    assert got.dtype == tf.uint8 and got.numpy().tolist() == WANT[name]


def test_graph_shape_and_errors():
    @tf.function
    def f(x):
        out = tf.fingerprint(x)
        assert out.shape.as_list() == [x.shape[0], 8]
        return out

    assert f(tf.constant(INPUTS["int32_rows"])).numpy().tolist() == WANT["int32_rows"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported fingerprint method"):
        tf.fingerprint(tf.constant([1]), method="md5")
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="rank"):
        tf.fingerprint(tf.constant(1))
