"""tf.io.serialize_sparse / serialize_many_sparse / deserialize_many_sparse (bytes identical to
TensorFlow 2.21's, tests/fixtures/io_serialization), decode_json_example, matching_files, and
the tf.data.experimental readers and tables built on them: parse_example_dataset,
make_batched_features_dataset, table_from_dataset, index_table_from_dataset."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.protos.example_pb import Example

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "io_serialization"
DATA = json.loads((FIXTURES / "fixtures.json").read_text())
E = tf.data.experimental


def _b64(t):
    return [base64.b64encode(v).decode() for v in t.numpy().reshape(-1).tolist()]


def _sparse(case):
    dt = tf.as_dtype(case["dtype"])
    ind = tf.constant(case["indices"], tf.int64, shape=[len(case["indices"]), len(case["shape"])])
    return tf.sparse.SparseTensor(ind, tf.constant(case["values"], dt), case["shape"]), dt


@pytest.mark.parametrize("case", DATA["serialize"], ids=lambda c: c["dtype"])
def test_sparse_serialization_matches_tensorflow(case):
    st, dt = _sparse(case)
    assert _b64(tf.io.serialize_sparse(st)) == case["one"]
    many = tf.io.serialize_many_sparse(st)
    assert many.shape == [case["many_rows"], 3]
    assert _b64(many) == case["many"]
    # TensorFlow's bytes deserialize to TensorFlow's result
    theirs = np.array([base64.b64decode(v) for v in case["many"]], dtype=object).reshape(-1, 3)
    back = tf.io.deserialize_many_sparse(theirs, dt)
    assert back.indices.numpy().tolist() == case["back_indices"]
    assert back.dense_shape.numpy().tolist() == case["back_shape"]
    values = [v.decode() if isinstance(v, bytes) else v for v in back.values.numpy().tolist()]
    assert values == case["back_values"]
    assert back.values.dtype == dt


def test_sparse_serialization_errors():
    unsorted = tf.sparse.SparseTensor([[0, 0], [1, 3], [1, 1]], [1, 2, 3], [2, 5])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[2\] = \[1,1\] is out "
                                                             "of order"):
        tf.io.serialize_many_sparse(unsorted)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Rank of input SparseTensor "
                                                             "should be > 1"):
        tf.io.serialize_many_sparse(tf.sparse.SparseTensor([[0]], [1.0], [3]))
    many = tf.io.serialize_many_sparse(tf.sparse.SparseTensor([[0, 0]], [1.0], [1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requested SparseTensor of type "
                                                             "int32"):
        tf.io.deserialize_many_sparse(many, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
        tf.io.deserialize_many_sparse([[b"junk", b"x", b"y"]], tf.float32)


def test_decode_json_example_matches_tensorflow():
    for case in DATA["json"]:
        mine = tf.io.decode_json_example([case["json"]]).numpy().tolist()
        theirs = [base64.b64decode(v) for v in case["binary"]]
        for a, b in zip(mine, theirs):  # same message (TF writes floats unpacked)
            x, y = Example(), Example()
            x.ParseFromString(a)
            y.ParseFromString(b)
            assert x == y
    for text, error in DATA["json_errors"]:
        with pytest.raises(getattr(tf.errors, error), match="Error while parsing JSON"):
            tf.io.decode_json_example(text)


def test_matching_files(tmp_path):
    for name in ("b.txt", "a.txt", ".hidden.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    got = tf.io.matching_files(str(tmp_path / "*.txt")).numpy().tolist()
    assert got == [str(tmp_path / n).encode() for n in (".hidden.txt", "a.txt", "b.txt")]
    both = tf.io.matching_files([str(tmp_path / "a.*"), str(tmp_path / "*.csv")])
    assert [Path(p.decode()).name for p in both.numpy()] == ["a.txt", "c.csv"]
    assert tf.io.matching_files(str(tmp_path / "none*")).shape == [0]


# -- tf.data readers of features, tables -------------------------------------------------------
def _write_examples(path, start):
    with tf.io.TFRecordWriter(str(path)) as w:
        for i in range(5):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[start + i, 0.5])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
            })).SerializeToString())


def test_make_batched_features_dataset_and_parse_example_dataset(tmp_path):
    for f in range(2):
        _write_examples(tmp_path / f"part{f}.tfrecord", 10 * f)
    features = {"x": tf.io.FixedLenFeature([2], tf.float32),
                "y": tf.io.FixedLenFeature([], tf.int64)}
    ds = E.make_batched_features_dataset(str(tmp_path / "part*.tfrecord"), 4, features,
                                         label_key="y", num_epochs=1, shuffle=False)
    got = [(x["x"][:, 0].numpy().tolist(), y.numpy().tolist()) for x, y in ds]
    assert got == [([0, 1, 2, 3], [0, 1, 0, 1]), ([4, 10, 11, 12], [0, 0, 1, 0]),
                   ([13, 14], [1, 0])]  # TensorFlow's batches (file order, then records)
    parsed = tf.data.TFRecordDataset(str(tmp_path / "part0.tfrecord")).batch(3).apply(
        E.parse_example_dataset({"y": tf.io.FixedLenFeature([], tf.int64)}))
    assert [b["y"].numpy().tolist() for b in parsed] == [[0, 1, 0], [1, 0]]
    with pytest.raises(TypeError, match="vectors of strings"):
        tf.data.Dataset.range(3).apply(E.parse_example_dataset(features))
    with pytest.raises(ValueError, match="must be one of the `features` keys"):
        E.make_batched_features_dataset(str(tmp_path / "*"), 2, features, label_key="z")


def test_tables_from_datasets():
    words = tf.data.Dataset.from_tensor_slices(tf.constant(["a", "b", "c"]))
    table = E.index_table_from_dataset(words, num_oov_buckets=1)
    assert int(table.size()) == 4
    assert table.lookup(tf.constant(["a", "c", "zz"])).numpy().tolist() == [0, 2, 3]
    pairs = tf.data.Dataset.from_tensor_slices((["x", "y"], [5, 7]))
    assert E.table_from_dataset(pairs, default_value=-1).lookup(
        tf.constant(["y", "q"])).numpy().tolist() == [7, -1]
    capped = E.index_table_from_dataset(words, vocab_size=2, default_value=-5)
    assert capped.lookup(tf.constant(["a", "b", "c"])).numpy().tolist() == [0, 1, -5]
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 10 "
                                                                "elements but contained only 3"):
        E.index_table_from_dataset(words, vocab_size=10)
    with pytest.raises(ValueError, match="produces 1 components instead of two"):
        E.table_from_dataset(words)
    with pytest.raises(ValueError, match="`default_value` must be specified"):
        E.table_from_dataset(tf.data.Dataset.from_tensor_slices((["a"], ["b"])))


def test_match_filenames_once(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    v = tf.io.match_filenames_once(str(tmp_path / "*.txt"))
    assert isinstance(v, tf.Variable) and not v.trainable
    assert v.numpy().tolist() == [str(tmp_path / "a.txt").encode()]


def test_dataset_to_and_from_variant():
    ds = tf.data.Dataset.range(4)
    v = E.to_variant(ds)
    assert v.dtype == tf.variant
    assert list(E.from_variant(v, tf.TensorSpec([], tf.int64)).as_numpy_iterator()) == \
        [0, 1, 2, 3]
    with pytest.raises(TypeError, match="not compatible"):
        E.from_variant(v, tf.TensorSpec([], tf.string))

    @tf.function
    def total():
        var = E.to_variant(tf.data.Dataset.range(5))
        return E.from_variant(var, tf.TensorSpec([], tf.int64)).reduce(
            tf.constant(0, tf.int64), lambda a, b: a + b)
    assert int(total()) == 10
