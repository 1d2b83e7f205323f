"""tf.sparse.cross / cross_hashed and tf.ragged.cross / cross_hashed against TensorFlow 2.21's
results (tests/fixtures/sparse_cross): joined strings, and hashed ids bit for bit."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sparse_cross"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
sys.path.insert(0, str(FIXTURE))
try:
    from cross_cases import cases, to_python  # noqa: E402
finally:
    sys.path.remove(str(FIXTURE))

CASES = cases(tf)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_eager_matches_tensorflow(name):
    assert to_python(CASES[name]()) == EXPECTED[name]["value"]


@pytest.mark.parametrize("name", ["cross_mixed", "hashed_buckets", "ragged_hashed"])
def test_tf_function_matches_tensorflow(name):
    assert to_python(tf.function(CASES[name])()) == EXPECTED[name]["value"]


def test_session_cross_hashed_of_fed_strings():
    g = tf.Graph()
    with g.as_default():
        words = tf.compat.v1.placeholder(tf.string, [None, 1])
        out = tf.sparse.cross_hashed([words, tf.constant([[b"x"], [b"y"]])], num_buckets=10)
    with tf.compat.v1.Session(graph=g) as sess:
        got = sess.run(out, {words: np.array([[b"a"], [b"b"]], dtype=object)})
    assert got.indices.tolist() == [[0, 0], [1, 0]]
    eager = tf.sparse.cross_hashed([tf.constant([[b"a"], [b"b"]]),
                                    tf.constant([[b"x"], [b"y"]])], num_buckets=10)
    assert got.values.tolist() == eager.values.numpy().tolist()


def test_cross_rejects_float_inputs_and_mismatched_batches():
    with pytest.raises(ValueError, match="Unexpected dtype for inputs"):
        tf.ragged.cross([tf.constant([[1.5]])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch size"):
        tf.sparse.cross([tf.constant([[b"a"]]), tf.constant([[b"b"], [b"c"]])])
