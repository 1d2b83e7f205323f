"""parse_example's array fast path for batches of alike records (parsing_uniform.py): the
same outputs as the per-example decode, and None (the per-example path) whenever the
records are not alike or a feature is missing or of another type."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels.parsing_kernels import ExampleParser
from ndflow.kernels.parsing_uniform import parse_uniform


def _example(i, label=None, extra=True, floats=3):
    feature = {
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[bytes((i + k) % 256 for k in range(20)), bytes([i % 256]) * 4])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(
            value=[i % 100 if label is None else label, -5, 1 << 40])),
        "xy": tf.train.Feature(float_list=tf.train.FloatList(
            value=[i / 3.0 + k for k in range(floats)])),
    }
    if extra:  # a feature nobody asks for, with per-record values
        feature["id"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 100]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


FEATURES = {"image": tf.io.FixedLenFeature([2], tf.string),
            "label": tf.io.FixedLenFeature([3], tf.int64),
            "xy": tf.io.FixedLenFeature([3], tf.float32)}


def _per_example(records):
    out = [tf.io.parse_single_example(r, FEATURES) for r in records]
    return {k: np.stack([o[k].numpy() for o in out]) for k in FEATURES}


def _dense_plans(features):
    specs = list(features.items())
    parser = ExampleParser(dense_types=[f.dtype for _, f in specs],
                           dense_shapes=[tf.TensorShape(f.shape) for _, f in specs])
    defaults = [np.zeros(0, object if f.dtype is tf.string else f.dtype.np_dtype)
                for _, f in specs]
    dense, _ = parser._plan(np.array([], object), np.array([k.encode() for k, _ in specs],
                                                           object), defaults)
    return dense


@pytest.mark.parametrize("n", [8, 33])
def test_alike_records_parse_as_the_per_example_path(n):
    records = [_example(i) for i in range(n)]
    assert parse_uniform(records, _dense_plans(FEATURES)) is not None
    got = tf.io.parse_example(records, FEATURES)
    want = _per_example(records)
    for k in FEATURES:
        assert got[k].dtype == tf.as_dtype(FEATURES[k].dtype)
        np.testing.assert_array_equal(got[k].numpy(), want[k], err_msg=k)


def test_records_that_differ_take_the_per_example_path():
    dense = _dense_plans(FEATURES)
    uneven = [_example(i, label=1000 if i == 5 else 7) for i in range(10)]  # 2-byte varint
    assert parse_uniform(uneven, dense) is None
    short = [_example(i, floats=3 if i else 2) for i in range(10)]
    assert parse_uniform(short, dense) is None
    got = tf.io.parse_example(uneven, FEATURES)
    np.testing.assert_array_equal(got["label"].numpy(), _per_example(uneven)["label"])
    # a missing feature with a default, and a type mismatch, stay TensorFlow's
    plain = [_example(i, extra=False) for i in range(10)]
    with_default = dict(FEATURES, id=tf.io.FixedLenFeature([], tf.int64, default_value=-1))
    assert tf.io.parse_example(plain, with_default)["id"].numpy().tolist() == [-1] * 10
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        tf.io.parse_example(plain, {"xy": tf.io.FixedLenFeature([3], tf.int64)})


def test_a_layout_byte_that_differs_is_seen_in_any_record_and_in_the_cached_layout():
    """Records of the same length whose keys differ (one renamed byte): the layout check
    (the gathered key, tag and length bytes) sends them to the per-example path, whether the
    odd record is inside the batch or first in a batch after a cached layout."""
    dense = _dense_plans(FEATURES)
    renamed = _example(3).replace(b"label", b"labeL")
    assert len(renamed) == len(_example(3)) and renamed != _example(3)
    batch = [_example(i) for i in range(10)]
    assert parse_uniform(batch, dense) is not None   # caches this layout
    odd = batch[:3] + [renamed] + batch[4:]
    assert parse_uniform(odd, dense) is None
    assert parse_uniform([renamed] + batch[1:], dense) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match="label"):
        tf.io.parse_example(odd, FEATURES)   # record 3 has no "label": TF's error
