"""tf.data.TFRecordDataset on TensorFlow 2.21's files (tests/fixtures/tfrecord): plain and
compressed, several files (in TF's interleave order), parsing in map, eagerly and in
tf.function, and TF's errors for damaged files."""

import base64
import json
import os

import numpy as np
import pytest

import ndflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tfrecord")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
RAW = [base64.b64decode(r) for r in EXPECTED["raw_records"]]
EXAMPLES = [base64.b64decode(s) for s in EXPECTED["examples"]]
SPEC = {"label": tf.io.FixedLenFeature([], tf.int64),
        "image": tf.io.FixedLenFeature([], tf.string),
        "ids": tf.io.VarLenFeature(tf.int64)}


def fixture(name):
    return os.path.join(FIXTURES, name)


@pytest.mark.parametrize("name, kind", [("raw.tfrecord", None), ("raw.tfrecord.gz", "GZIP"),
                                        ("raw.tfrecord.zz", "ZLIB")])
def test_reads_tensorflows_files(name, kind):
    ds = tf.data.TFRecordDataset(fixture(name), compression_type=kind, buffer_size=7)
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert list(ds.as_numpy_iterator()) == RAW
    assert list(ds.as_numpy_iterator()) == RAW  # a fresh pass each time


def test_several_files_and_parallel_reads_order():
    files = [fixture("raw.tfrecord"), fixture("examples.tfrecord"), fixture("raw.tfrecord")]
    assert list(tf.data.TFRecordDataset(files).as_numpy_iterator()) == RAW + EXAMPLES + RAW
    # TensorFlow 2.21's order for the same call (interleave, cycle 2, block 1)
    want = [RAW[0], EXAMPLES[0], RAW[1], EXAMPLES[1], RAW[2], EXAMPLES[2], RAW[3]] + RAW
    got = tf.data.TFRecordDataset(files, num_parallel_reads=2).as_numpy_iterator()
    assert list(got) == want
    as_tensor = tf.data.TFRecordDataset(tf.constant(files[:2]))
    assert list(as_tensor.as_numpy_iterator()) == RAW + EXAMPLES
    from_dataset = tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(files[:1]))
    assert list(from_dataset.as_numpy_iterator()) == RAW


def test_parse_in_map_eagerly_and_in_function():
    def parse(s):
        f = tf.io.parse_single_example(s, SPEC)
        return f["label"], tf.io.decode_raw(f["image"], tf.uint8), tf.sparse.to_dense(f["ids"])

    ds = tf.data.TFRecordDataset(fixture("examples.tfrecord")).map(parse)
    rows = list(ds.as_numpy_iterator())
    assert [r[0] for r in rows] == [7, 3, -5]
    np.testing.assert_array_equal(rows[1][1], np.arange(16, 32, dtype=np.uint8))
    assert [r[2].tolist() for r in rows] == [[1, 2, 3], [9], []]

    @tf.function
    def total():
        t = tf.constant(0, tf.int64)
        for label, _, _ in ds:
            t += label
        return t
    assert int(total()) == 5


def test_batched_parse_example():
    ds = tf.data.TFRecordDataset(fixture("examples.tfrecord")).batch(2).map(
        lambda s: tf.io.parse_example(s, {"label": SPEC["label"]})["label"])
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[7, 3], [-5]]


def test_damaged_files(tmp_path):
    with open(fixture("raw.tfrecord"), "rb") as f:
        data = bytearray(f.read())
    data[12] ^= 0xFF
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 12"):
        list(tf.data.TFRecordDataset(str(bad)))
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        list(tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")))
    with pytest.raises(ValueError, match='Not a valid compression_type: "LZ4"'):
        tf.data.TFRecordDataset(str(bad), compression_type="LZ4")


def _records_file(tmp_path, n=300, name="many.tfrecord"):
    records = [bytes([i % 256]) * (i % 37) + str(i).encode() for i in range(n)]
    path = str(tmp_path / name)
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path, records


def _batches(ds):
    return [b.tolist() for b in ds.as_numpy_iterator()]


@pytest.mark.parametrize("buffer_size, batch, drop", [(1, 16, False), (50, 32, True),
                                                      (1000, 7, False), (300, 300, False)])
def test_shuffle_and_batch_of_records_move_bytes_like_elements(tmp_path, buffer_size, batch,
                                                               drop):
    """TFRecordDataset -> shuffle -> batch moves the records as lists of bytes (dataset
    `_scalar_chunks`), with the element path's order and batches; a `map` in between takes
    the element path."""
    path, records = _records_file(tmp_path)
    fast = tf.data.TFRecordDataset(path).shuffle(buffer_size, seed=5).batch(batch, drop)
    assert fast._input._scalar_chunks() is not None
    slow = tf.data.TFRecordDataset(path).map(lambda r: r).shuffle(buffer_size, seed=5).batch(
        batch, drop)
    assert slow._input._scalar_chunks() is None
    got = _batches(fast)
    assert got == _batches(slow)
    assert _batches(fast) == _batches(slow)  # the next epoch reshuffles alike
    flat = sum(got, [])
    if drop:
        assert all(len(b) == batch for b in got) and len(flat) == len(records) // batch * batch
        assert set(flat) <= set(records)
    else:
        assert sorted(flat) == sorted(records)
    plain = tf.data.TFRecordDataset([path, path], num_parallel_reads=2).batch(batch, drop)
    assert _batches(plain) == _batches(
        tf.data.TFRecordDataset([path, path], num_parallel_reads=2).map(lambda r: r).batch(
            batch, drop))


def test_shuffled_records_keep_the_readers_errors(tmp_path):
    path, _ = _records_file(tmp_path, 40)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[-3] ^= 0xFF  # the last record's data CRC
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    for ds in (tf.data.TFRecordDataset(str(bad)).shuffle(8, seed=1).batch(16),
               tf.data.TFRecordDataset(str(bad)).batch(16)):
        with pytest.raises(tf.errors.DataLossError, match="corrupted record at"):
            list(ds)
    # several files read round-robin (chunked after the interleave): the batches before the
    # error are the element path's
    good, _ = _records_file(tmp_path, 100, "good.tfrecord")

    def before_the_error(ds):
        got = []
        with pytest.raises(tf.errors.DataLossError, match="corrupted record at"):
            for b in ds.as_numpy_iterator():
                got.append(b.tolist())
        return got
    files = [good, str(bad)]
    fast = tf.data.TFRecordDataset(files, num_parallel_reads=2).shuffle(8, seed=2).batch(8)
    slow = tf.data.TFRecordDataset(files, num_parallel_reads=2).map(lambda r: r).shuffle(
        8, seed=2).batch(8)
    want = before_the_error(slow)
    assert len(want) >= 8 and before_the_error(fast) == want
    missing = tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord")).shuffle(4).batch(2)
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        list(missing)
