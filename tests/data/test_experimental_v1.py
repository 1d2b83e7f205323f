"""The TF1-only `tf.compat.v1.data.experimental` names (Structure factories,
map_and_batch_with_legacy_function) against TensorFlow 2.21's results
(tests/fixtures/data_experimental_v1/expected.json, generate.py beside it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ndflow as tf

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" /
                       "data_experimental_v1" / "expected.json").read_text())
v1 = tf.compat.v1.data.experimental


def test_structures_are_type_specs():
    assert (v1.Structure is tf.TypeSpec) == EXPECTED["structure_is_typespec"]
    spec = v1.TensorStructure(tf.float32, [2, None])
    assert spec == tf.TensorSpec([2, None], tf.float32)
    assert repr(spec) == EXPECTED["tensor"]
    sparse = v1.SparseTensorStructure(tf.int64, [3, 4])
    assert isinstance(sparse, tf.SparseTensorSpec) and sparse.dtype == tf.int64
    assert sparse.shape == tf.TensorShape([3, 4])
    ragged = v1.RaggedTensorStructure(tf.int32, [2, None, 3], 1)
    assert isinstance(ragged, tf.RaggedTensorSpec) and ragged.ragged_rank == 1
    assert ragged.shape.as_list() == [2, None, 3] and ragged.dtype == tf.int32
    ta = v1.TensorArrayStructure(tf.float32, [2], True, False)
    assert isinstance(ta, tf.TensorArraySpec)
    assert ta._dynamic_size is True and ta._infer_shape is False


@pytest.mark.parametrize("key, fn, kwargs", [
    ("batches", lambda x: x * x + 1, {}),
    ("batches_drop", lambda x: x - 3, {"num_parallel_batches": 2, "drop_remainder": True}),
])
def test_map_and_batch_with_legacy_function(key, fn, kwargs):
    ds = tf.data.Dataset.range(11).apply(
        v1.map_and_batch_with_legacy_function(fn, 4, **kwargs))
    assert [b.numpy().tolist() for b in ds] == EXPECTED[key]


def test_map_and_batch_with_legacy_function_both_parallelisms():
    with pytest.raises(ValueError) as e:
        v1.map_and_batch_with_legacy_function(lambda x: x, 4, num_parallel_batches=1,
                                              num_parallel_calls=2)
    assert str(e.value) == EXPECTED["both_error"]
