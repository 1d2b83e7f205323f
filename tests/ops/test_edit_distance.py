"""tf.edit_distance: TF 2.21's distances on random sequences (fixture; ints and strings,
normalized or not, inf for a hypothesis against an empty truth), graph mode, TF's errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "edit_distance" /
                      "values.json").read_text())


def _sparse(s, strings):
    ind, val, shape = s
    val = [b"abcd"[v:v + 1] for v in val] if strings else val
    return tf.SparseTensor(tf.constant(ind, tf.int64, shape=[len(ind), 3]),
                           tf.constant(val, tf.string if strings else tf.int64), shape)


@pytest.mark.parametrize("strings", [False, True], ids=["ints", "strings"])
@pytest.mark.parametrize("normalize", [True, False])
def test_matches_tensorflow(strings, normalize):
    d = tf.edit_distance(_sparse(FIXTURE["hypothesis"], strings),
                         _sparse(FIXTURE["truth"], strings), normalize=normalize)
    want = np.array([[np.inf if x is None else x for x in row] for row in
                     FIXTURE[f"{'strings' if strings else 'ints'}_{normalize}"]], np.float32)
    assert d.dtype == tf.float32
    np.testing.assert_array_equal(d.numpy(), want)


def test_graph_and_errors():
    hyp = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], [1, 2, 3], [1, 3])
    truth = tf.SparseTensor([[0, 0], [0, 1]], [1, 3], [1, 2])
    f = tf.function(lambda h, t: tf.edit_distance(h, t))
    np.testing.assert_allclose(f(hyp, truth).numpy(), [0.5])
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor"):
        tf.edit_distance(tf.constant([1]), truth)
