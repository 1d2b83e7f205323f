"""tf.sets: TF 2.21's results (fixture: configs.py's calls, dense/sparse/string operands),
graph mode, TF's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ndflow as tf
from tests import fixture_modules

HERE = Path(__file__).parents[1] / "fixtures" / "sets"
_configs = fixture_modules.load("sets")
cases = _configs.cases
WANT = json.loads((HERE / "results.json").read_text())
CASES = cases(tf)


def _plain(x):
    if isinstance(x, tf.SparseTensor):
        return {"indices": x.indices.numpy().tolist(),
                "dense_shape": x.dense_shape.numpy().tolist(),
                "values": [v.decode("latin-1") if isinstance(v, bytes) else v
                           for v in x.values.numpy().tolist()]}
    return {"dense": x.numpy().tolist(), "dtype": x.dtype.name}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    assert _plain(CASES[name]()) == WANT[name]


def test_in_a_graph_and_errors():
    @tf.function
    def f(a, b):
        return tf.sets.size(tf.sets.union(a, b))

    assert f(tf.constant([[1, 2]]), tf.constant([[2, 3]])).numpy().tolist() == [3]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Mismatched shapes \[1\] vs \[2\]"):
        tf.sets.intersection(tf.constant([[1, 2]]), tf.constant([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="'a' has invalid dtype"):
        tf.sets.union(tf.constant([[1.0]]), tf.constant([[1.0]]))
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.size(tf.constant([[1, 2]]))
