"""TFRecord files: ndflow reads TensorFlow 2.21's (plain, GZIP, ZLIB; fixtures made by
tests/fixtures/tfrecord/generate.py) and writes the same bytes; CRC and truncation errors as
TensorFlow reports them."""

import base64
import gzip
import json
import os
import zlib

import pytest

import ndflow as tf
from ndflow.data import tfrecord_format

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tfrecord")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
RAW = [base64.b64decode(r) for r in EXPECTED["raw_records"]]
FILES = {"": "raw.tfrecord", "GZIP": "raw.tfrecord.gz", "ZLIB": "raw.tfrecord.zz"}


def fixture(name):
    return os.path.join(FIXTURES, name)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("kind", ["", "GZIP", "ZLIB"])
def test_reads_tensorflows_files(kind):
    options = tf.io.TFRecordOptions(kind)
    assert list(tf.compat.v1.io.tf_record_iterator(fixture(FILES[kind]), options)) == RAW
    assert list(tf.compat.v1.io.tf_record_iterator(fixture(FILES[kind]), kind)) == RAW


@pytest.mark.parametrize("kind", ["", "GZIP", "ZLIB"])
def test_writes_tensorflows_bytes(tmp_path, kind):
    path = str(tmp_path / "out")
    with tf.io.TFRecordWriter(path, kind) as w:
        for r in RAW:
            w.write(r)
    ours, theirs = read_bytes(path), read_bytes(fixture(FILES[kind]))
    if kind == "":
        assert ours == theirs
    else:  # same stream once inflated (a zlib build may choose other deflate blocks)
        wbits = 31 if kind == "GZIP" else 15
        assert zlib.decompress(ours, wbits) == zlib.decompress(theirs, wbits)
        assert ours[:2] == theirs[:2]  # gzip magic / zlib header
    if kind == "GZIP":
        assert gzip.decompress(ours) == read_bytes(fixture(FILES[""]))


def test_masked_crc_and_framing():
    from ndflow.data import tfrecord_format
    framed = tfrecord_format.encode_record(b"hello")
    assert framed == read_bytes(fixture("raw.tfrecord"))[:len(framed)]
    assert tfrecord_format.masked_crc32c(b"") == 0xA282EAD8  # crc32c("") = 0, masked


def test_writer_str_flush_close(tmp_path):
    path = str(tmp_path / "w.tfrecord")
    w = tf.io.TFRecordWriter(path)
    w.write("text")
    w.write(bytearray(b"ab"))
    w.flush()
    assert list(tf.compat.v1.io.tf_record_iterator(path)) == [b"text", b"ab"]
    w.close()
    w.close()  # a second close is a no-op
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
        w.write(b"x")
    with pytest.raises(TypeError, match="bytes or str"):
        tf.io.TFRecordWriter(str(tmp_path / "t")).write(5)


def test_gzip_flush_makes_records_readable(tmp_path):
    path = str(tmp_path / "g.tfrecord")
    with tf.io.TFRecordWriter(path, "GZIP") as w:
        w.write(b"a" * 50)
        w.flush()
        assert list(tf.compat.v1.io.tf_record_iterator(path, "GZIP")) == [b"a" * 50]
        w.write(b"b")
    assert list(tf.compat.v1.io.tf_record_iterator(path, "GZIP")) == [b"a" * 50, b"b"]


def test_options_and_compression_types():
    opts = tf.io.TFRecordOptions
    assert opts.get_compression_type_string(None) == ""
    assert opts.get_compression_type_string(opts("GZIP")) == "GZIP"
    assert opts.get_compression_type_string(tf.compat.v1.io.TFRecordCompressionType.ZLIB) == \
        "ZLIB"
    with pytest.raises(ValueError, match='Not a valid compression_type: "BAD"'):
        opts("BAD")
    with pytest.raises(ValueError, match='Not a valid compression_type: "BAD"'):
        tf.io.TFRecordWriter("/tmp/never", "BAD")


def _damaged(tmp_path, data):
    path = str(tmp_path / "bad.tfrecord")
    with open(path, "wb") as f:
        f.write(data)
    return path


# records of raw.tfrecord: b"hello" at 0 (21 bytes), b"" at 21 (16), b"x"*300 at 37
@pytest.mark.parametrize("flip, message", [
    (12, "corrupted record at 12"),  # the first record's data
    (9, r"corrupted record at 0 \(Is this even a TFRecord file\?\)"),  # its length's CRC
    (21, "corrupted record at 21"),  # the second record's length
])
def test_corrupted_record_is_data_loss(tmp_path, flip, message):
    data = bytearray(read_bytes(fixture("raw.tfrecord")))
    data[flip] ^= 1
    path = _damaged(tmp_path, bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=message):
        list(tf.compat.v1.io.tf_record_iterator(path))


@pytest.mark.parametrize("keep, count, error", [
    (5, 0, None),     # inside the first header: a clean end, as TensorFlow
    (43, 2, None),    # inside the third header
    (49, None, "truncated record at 37"),   # header complete, data missing
    (-1, None, "truncated record at 353"),  # the last CRC cut short (record 4 at 353)
])
def test_truncated_file(tmp_path, keep, count, error):
    path = _damaged(tmp_path, read_bytes(fixture("raw.tfrecord"))[:keep])
    if error is None:
        assert len(list(tf.compat.v1.io.tf_record_iterator(path))) == count
    else:
        with pytest.raises(tf.errors.DataLossError, match=error):
            list(tf.compat.v1.io.tf_record_iterator(path))


def test_missing_file_and_bad_compressed_stream(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.compat.v1.io.tf_record_iterator(str(tmp_path / "nope"))
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.io.TFRecordWriter(str(tmp_path / "no" / "dir"))
    with pytest.raises(tf.errors.DataLossError, match="inflate\\(\\) failed with error -3"):
        list(tf.compat.v1.io.tf_record_iterator(fixture("raw.tfrecord"), "GZIP"))


def test_records_before_a_corrupted_one_come_out_first(tmp_path):
    path = str(tmp_path / "many.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(300):
            w.write(b"r%03d" % i)
    data = bytearray(read_bytes(path))
    data[150 * 20 + 12] ^= 1  # record 150's data (20 bytes a record)
    path = _damaged(tmp_path, bytes(data))
    got = []
    with pytest.raises(tf.errors.DataLossError, match=f"corrupted record at {150 * 20 + 12}"):
        for r in tf.compat.v1.io.tf_record_iterator(path):
            got.append(r)
    assert got == [b"r%03d" % i for i in range(150)]


def _write(path, records):
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path


def test_runs_of_records_of_one_length_read_in_bulk_and_mixed(tmp_path):
    """Runs of records sharing a length are framed and CRC-checked in bulk
    (tfrecord_format._alike_run); other lengths between them, and runs cut by the read
    buffer, read as before."""
    records = [b"%05d" % i for i in range(40)] + [b"odd"] + [b"%07d" % i for i in range(25)] \
        + [b""] * 12 + [b"x" * 1000] * 9 + [b"%05d" % i for i in range(5)]
    path = _write(str(tmp_path / "mixed.tfrecord"), records)
    assert list(tf.compat.v1.io.tf_record_iterator(path)) == records
    for size in (100, 1017):  # read buffers that cut runs and records
        got = list(tf.data.TFRecordDataset(path, buffer_size=size).as_numpy_iterator())
        assert got == records
    buf = read_bytes(path)
    out = []
    end = tfrecord_format._alike_run(buf, 0, out)
    assert out == records[:40] and end == 40 * 21


@pytest.mark.parametrize("what", ["data", "length", "length_crc", "data_crc"])
def test_a_damaged_record_inside_a_run_of_one_length(tmp_path, what):
    """Inside a bulk-read run, a damaged record is TF's DataLossError at its offset, after
    the records before it."""
    records = [b"r%04d" % i for i in range(100)]  # 21 bytes a record
    data = bytearray(read_bytes(_write(str(tmp_path / "run.tfrecord"), records)))
    at = 60 * 21
    flip, offset = {"data": (at + 13, at + 12), "length": (at + 1, at),
                    "length_crc": (at + 9, at), "data_crc": (at + 18, at + 12)}[what]
    data[flip] ^= 1
    path = _damaged(tmp_path, bytes(data))
    got = []
    with pytest.raises(tf.errors.DataLossError, match=f"corrupted record at {offset}$"):
        for r in tf.compat.v1.io.tf_record_iterator(path):
            got.append(r)
    assert got == records[:60]
