"""tf.io.RaggedFeature (row lengths/splits/starts/limits/value row ids/uniform length,
nested partitions, row_splits_dtype) and tf.io.SparseFeature in parse_example and
parse_single_example, against what TensorFlow 2.21 returns for the same serialized Examples
(tests/fixtures/ragged_parsing, written by generate.py there)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "ragged_parsing" /
                      "parsed.json").read_text())
SERIALIZED = [base64.b64decode(s) for s in FIXTURE["examples"]]

R = tf.io.RaggedFeature
CONFIGS = {
    "plain": {"v": R(tf.int64)},
    "lengths": {"r": R(tf.float32, value_key="f", partitions=[R.RowLengths("lens")])},
    "splits64": {"r": R(tf.int64, value_key="v", partitions=[R.RowSplits("splits")],
                        row_splits_dtype=tf.int64)},
    "uniform": {"r": R(tf.int64, value_key="v4", partitions=[R.UniformRowLength(2)])},
    "rowids": {"r": R(tf.int64, value_key="v", partitions=[R.ValueRowIds("ids")])},
    "starts_limits": {"a": R(tf.int64, value_key="v", partitions=[R.RowStarts("starts")]),
                      "b": R(tf.int64, value_key="v", partitions=[R.RowLimits("limits")])},
    "bytes": {"s": R(tf.string), "n": tf.io.VarLenFeature(tf.int64)},
    "nested": {"r": R(tf.float32, value_key="f", partitions=[R.RowLengths("outer"),
                                                             R.RowLengths("lens")])},
    "sparse": {"sp": tf.io.SparseFeature("idx", "sv", tf.float32, 10)},
    "sparse2d": {"sp": tf.io.SparseFeature(["idx", "idx2"], "sv", tf.float32, [10, 5])},
}


def _values(t):
    v = t.numpy()
    return [x.decode() if isinstance(x, bytes) else x for x in v.reshape(-1).tolist()]


def _check(got, want):
    if want["kind"] == "ragged":
        assert isinstance(got, tf.RaggedTensor)
        assert got.dtype.name == want["dtype"]
        assert got.row_splits.dtype.name == want["splits_dtype"]
        assert [s.numpy().tolist() for s in got.nested_row_splits] == want["splits"]
        assert got.flat_values.shape.as_list() == want["values_shape"]
        np.testing.assert_array_equal(np.array(_values(got.flat_values), dtype=object),
                                      np.array(want["values"], dtype=object))
    elif want["kind"] == "sparse":
        assert isinstance(got, tf.SparseTensor) and got.dtype.name == want["dtype"]
        assert got.indices.numpy().tolist() == (want["indices"] or
                                                np.zeros(got.indices.shape).tolist())
        assert _values(got.values) == want["values"]
        assert got.dense_shape.numpy().tolist() == want["dense_shape"]
    else:
        assert not isinstance(got, (tf.RaggedTensor, tf.SparseTensor))
        assert got.dtype.name == want["dtype"] and list(got.shape) == want["shape"]
        assert _values(got) == want["value"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parse_example_matches_tensorflow(name):
    want = FIXTURE["results"][name]
    batch = tf.io.parse_example(tf.constant(SERIALIZED), CONFIGS[name])
    assert sorted(batch) == sorted(want["batch"])
    for key, expected in want["batch"].items():
        _check(batch[key], expected)
    for serialized, expected_one in zip(SERIALIZED, want["single"]):
        one = tf.io.parse_single_example(serialized, CONFIGS[name])
        assert sorted(one) == sorted(expected_one)
        for key, expected in expected_one.items():
            _check(one[key], expected)


def test_parsing_ragged_in_a_dataset_map():
    ds = tf.data.Dataset.from_tensor_slices(SERIALIZED).batch(3).map(
        lambda s: tf.io.parse_example(s, CONFIGS["lengths"])["r"])
    assert ds.element_spec == tf.RaggedTensorSpec([None, None, None], tf.float32, 2,
                                                  tf.int32)
    (got,) = list(ds)
    assert got.to_list() == [[[1.5, 2.5], [3.5]], [], [[], [9.0]]]


def test_feature_config_validation():
    with pytest.raises(ValueError, match="row_splits_dtype"):
        R(tf.int64, row_splits_dtype=tf.float32)
    with pytest.raises(TypeError, match="partitions"):
        R(tf.int64, partitions=["lens"])
    with pytest.raises(ValueError, match="dtype"):
        R(tf.int32)
