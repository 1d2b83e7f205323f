"""tf.io.RaggedFeature (row lengths/splits/starts/limits/value row ids/uniform length,
nested partitions, row_splits_dtype) and tf.io.SparseFeature in parse_example and
parse_single_example, against what TensorFlow 2.21 returns for the same serialized Examples
(tests/fixtures/ragged_parsing, written by generate.py there)."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ragged_parsing"
FIXTURE = json.loads((FIXTURES / "parsed.json").read_text())
SERIALIZED = [base64.b64decode(s) for s in FIXTURE["examples"]]

_spec = importlib.util.spec_from_file_location("ragged_parsing_configs", FIXTURES / "configs.py")
_configs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_configs)
CONFIGS = _configs.feature_configs(tf)   # the configs TensorFlow parsed with
R = tf.io.RaggedFeature


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
