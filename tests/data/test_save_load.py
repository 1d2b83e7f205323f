"""`Dataset.save` / `Dataset.load` in TensorFlow's snapshot format: ndflow loads snapshots
TensorFlow 2.21 wrote (tests/fixtures/tf_data_snapshot, with the elements TF loaded back) and
writes byte-identical shard and spec files for the same data; bad input is TF's errors."""

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
from tensorboard.compat.proto import struct_pb2

import ndflow as tf
from ndflow.core.protos.snapshot_pb import SnapshotMetadataRecord

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_data_snapshot"
_spec = importlib.util.spec_from_file_location("tf_data_snapshot", FIXTURES / "datasets.py")
datasets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(datasets)
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["snapshots"]


def _shard_files(path: Path) -> dict:
    meta = SnapshotMetadataRecord()
    meta.ParseFromString((path / "snapshot.metadata").read_bytes())
    run = path / meta.run_id
    return {f"{d.name}/{f.name}": f.read_bytes() for d in sorted(run.iterdir())
            for f in sorted(d.iterdir())}


def _metadata(path: Path) -> SnapshotMetadataRecord:
    meta = SnapshotMetadataRecord()
    meta.ParseFromString((path / "snapshot.metadata").read_bytes())
    return meta


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_tensorflows_snapshot(name):
    _, kwargs = datasets.SNAPSHOTS[name]
    ds = tf.data.Dataset.load(str(FIXTURES / name), compression=kwargs.get("compression"))
    want = EXPECTED[name]
    assert int(ds.cardinality()) == want["cardinality"]
    got = [datasets.plain(e) for e in ds.as_numpy_iterator()]
    if name == "sharded":  # the default reader interleaves as many shards as CPUs
        assert sorted(got) == sorted(want["elements"])
        one_by_one = tf.data.Dataset.load(str(FIXTURES / name),
                                          reader_func=lambda d: d.flat_map(lambda s: s))
        assert [int(v) for v in one_by_one] == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    else:
        assert got == want["elements"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_writes_tensorflows_files(name, tmp_path):
    make, kwargs = datasets.SNAPSHOTS[name]
    make(tf).save(str(tmp_path), **kwargs)
    theirs = FIXTURES / name
    # the spec proto's dict entries come in a map: TensorFlow writes them in hash order
    # (different per process), ndflow in sorted order; the messages are equal
    specs = [struct_pb2.StructuredValue.FromString((p / "dataset_spec.pb").read_bytes())
             for p in (tmp_path, theirs)]
    assert specs[0] == specs[1]
    if name != "mixed":
        assert (tmp_path / "dataset_spec.pb").read_bytes() == \
            (theirs / "dataset_spec.pb").read_bytes()
    mine, tfs = _metadata(tmp_path), _metadata(theirs)
    assert mine.run_id != tfs.run_id and mine.finalized and mine.creation_timestamp > 0
    for m in (mine, tfs):
        m.run_id, m.creation_timestamp = "", 0
    assert mine == tfs  # version 2, dtypes, element count
    ours = _shard_files(tmp_path)
    expected = _shard_files(theirs)
    assert sorted(ours) == sorted(expected)
    if not kwargs.get("compression"):
        assert ours == expected  # byte for byte (a GZIP stream's bytes may differ)
    loaded = tf.data.Dataset.load(str(tmp_path), compression=kwargs.get("compression"),
                                  reader_func=lambda d: d.flat_map(lambda s: s))
    reference = tf.data.Dataset.load(str(theirs), compression=kwargs.get("compression"),
                                     reader_func=lambda d: d.flat_map(lambda s: s))
    assert [datasets.plain(e) for e in loaded.as_numpy_iterator()] == \
        [datasets.plain(e) for e in reference.as_numpy_iterator()]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_round_trip_of_every_dtype(compression, tmp_path):
    data = {"f16": np.arange(6, dtype=np.float16).reshape(3, 2),
            "f64": np.linspace(0, 1, 3), "i8": np.array([-1, 0, 7], np.int8),
            "u8": np.array([0, 128, 255], np.uint8), "b": np.array([True, False, True]),
            "s": np.array([[b"a", b""], [b"\x00\xff", b"long" * 40], [b"c", b"d"]], object),
            "empty": np.zeros((3, 0), np.int32), "c64": np.array([1 + 2j, 0, -1j], np.complex64)}
    ds = tf.data.Dataset.from_tensor_slices(data)
    tf.data.experimental.save(ds, str(tmp_path), compression=compression)
    back = tf.data.experimental.load(str(tmp_path), compression=compression)
    assert back.element_spec == ds.element_spec
    assert int(back.cardinality()) == 3
    for got, want in zip(back.as_numpy_iterator(), ds.as_numpy_iterator()):
        for k in data:
            np.testing.assert_array_equal(got[k], want[k])


def test_an_interrupted_save_keeps_the_previous_snapshot(tmp_path):
    tf.data.Dataset.range(4).save(str(tmp_path))

    def failing():
        yield 1
        raise ValueError("disk on fire")
    bad = tf.data.Dataset.from_generator(failing, output_signature=tf.TensorSpec([], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="disk on fire"):
        bad.save(str(tmp_path))
    assert [int(v) for v in tf.data.Dataset.load(str(tmp_path))] == [0, 1, 2, 3]
    runs = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(runs) == 1  # the failed run's directory is removed


def test_missing_and_corrupted_snapshots_are_tensorflows_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="element_spec file not found"):
        tf.data.Dataset.load(str(tmp_path / "nothing"))
    with pytest.raises(tf.errors.NotFoundError, match="Could not find metadata file"):
        tf.data.Dataset.load(str(tmp_path), element_spec=tf.TensorSpec([], tf.int64))
    path = tmp_path / "s"
    tf.data.Dataset.range(3).save(str(path), compression="GZIP")
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        list(tf.data.Dataset.load(str(path)))  # read as uncompressed
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Data type mismatch at component 0: expected float32 but got "
                             "int64"):
        list(tf.data.Dataset.load(str(path), element_spec=tf.TensorSpec([], tf.float32),
                                  compression="GZIP"))
    plain = tmp_path / "p"
    tf.data.Dataset.range(3).save(str(plain))
    (shard,) = _shard_files(plain)
    run = plain / _metadata(plain).run_id / shard
    raw = bytearray(run.read_bytes())
    raw[20] ^= 0xFF
    run.write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record"):
        list(tf.data.Dataset.load(str(plain)))


def test_save_argument_errors(tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="`shard_func` must return a scalar int64"):
        tf.data.Dataset.range(3).save(str(tmp_path), shard_func=lambda v: tf.cast(v, tf.int32))
    with pytest.raises(ValueError, match="not allowed to include 'checkpoint'"):
        tf.data.Dataset.range(3).save(str(tmp_path), checkpoint_args={"checkpoint": 1})
    with pytest.raises(tf.errors.UnimplementedError, match="SNAPPY"):
        tf.data.Dataset.range(3).save(str(tmp_path), compression="SNAPPY")
    with pytest.raises(TypeError, match="cannot write elements that are datasets"):
        tf.data.Dataset.range(3).window(2).save(str(tmp_path))
    assert not os.path.exists(tmp_path / "snapshot.metadata")
