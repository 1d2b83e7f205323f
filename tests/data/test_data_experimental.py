"""tf.data.Options' sub-options, tf.experimental.Optional, IteratorSpec, get_structure and the
experimental transformations (ignore_errors, at, pad_to_cardinality, dense_to_sparse_batch,
rejection_resample, snapshot, TFRecordWriter, enable_debug_mode), against TensorFlow 2.21's
defaults and outputs (tests/fixtures/data_experimental) and NumPy."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from ndflow.data import traced_function

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data_experimental"
DATA = json.loads((FIXTURES / "fixtures.json").read_text())
E = tf.data.experimental


# -- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize("sub", sorted(DATA["options"]))
def test_option_defaults_match_tensorflow(sub):
    options = getattr(tf.data.Options(), sub)
    for name, expected in DATA["options"][sub].items():
        value = getattr(options, name)
        assert (value.name if hasattr(value, "name") else value) == expected, name
    assert sorted(n for n in type(options)._option_names()) == sorted(DATA["options"][sub])


def test_option_enums_match_tensorflow():
    for enum_name, members in DATA["enums"].items():
        assert {m.name: m.value for m in getattr(E, enum_name)} == members
    assert E.SHARD_HINT == -1
    assert int(E.AutoShardPolicy.DATA) == 2  # an IntEnum, as TF's


def test_options_type_checks_unknown_names_and_merge():
    o = tf.data.Options()
    with pytest.raises(TypeError, match='Property "cpu_budget" must be of type'):
        o.autotune.cpu_budget = "a"
    with pytest.raises(AttributeError, match="Cannot set the property foo on "
                                             "OptimizationOptions"):
        o.experimental_optimization.foo = 1
    o.experimental_deterministic = False  # the deprecated alias writes deterministic
    assert o.deterministic is False
    o.autotune.enabled = False
    o.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.DATA
    other = tf.data.Options()
    other.autotune.cpu_budget = 3
    other.experimental_optimization.map_parallelization = True
    merged = o.merge(other)
    assert merged.autotune.enabled is False and merged.autotune.cpu_budget == 3
    assert merged.experimental_distribute.auto_shard_policy == E.AutoShardPolicy.DATA
    assert merged.experimental_optimization.map_parallelization is True
    assert merged.deterministic is False
    with pytest.raises(TypeError, match="Could not merge incompatible options"):
        o.merge(3)


def test_dataset_options_are_read_only_and_travel():
    o = tf.data.Options()
    o.experimental_distribute.auto_shard_policy = E.AutoShardPolicy.OFF
    o.threading.private_threadpool_size = 4
    ds = tf.data.Dataset.range(3).with_options(o).map(lambda x: x + 1)
    assert ds.options().experimental_distribute.auto_shard_policy == E.AutoShardPolicy.OFF
    assert ds.options().threading.private_threadpool_size == 4
    with pytest.raises(ValueError, match="Mutating `tf.data.Options"):
        ds.options().autotune.enabled = True
    with pytest.raises(ValueError, match="Mutating"):
        tf.data.Dataset.range(1).options().deterministic = True
    assert tf.data.Dataset.range(1).options() == tf.data.Options()
    assert list(ds.as_numpy_iterator()) == [1, 2, 3]


def test_autotune_disabled_downstream_runs_autotuned_maps_sequentially():
    import threading
    threads = set()

    def record(v):
        threads.add(threading.current_thread().name)
        return v
    ds = tf.data.Dataset.range(20).map(lambda x: tf.py_function(record, [x], tf.int64),
                                       num_parallel_calls=tf.data.AUTOTUNE)
    assert sorted(ds.as_numpy_iterator()) == list(range(20))
    assert all(t.startswith("tf_data_map") for t in threads)  # parallel by default
    threads.clear()
    o = tf.data.Options()
    o.autotune.enabled = False
    assert list(ds.with_options(o).as_numpy_iterator()) == list(range(20))
    assert threads == {threading.current_thread().name}  # set downstream, honoured upstream
    threads.clear()
    fixed = tf.data.Dataset.range(20).map(lambda x: tf.py_function(record, [x], tf.int64),
                                          num_parallel_calls=2).with_options(o)
    assert sorted(fixed.as_numpy_iterator()) == list(range(20))
    assert all(t.startswith("tf_data_map") for t in threads)  # an explicit count stays


# -- Optional, specs ---------------------------------------------------------------------------
def test_optional_and_specs():
    opt = tf.experimental.Optional.from_value({"a": tf.constant(1)})
    assert isinstance(opt, tf.experimental.Optional) and bool(opt.has_value())
    assert int(opt.get_value()["a"]) == 1
    assert opt.element_spec == {"a": tf.TensorSpec([], tf.int32)}
    empty = tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32))
    assert not bool(empty.has_value())
    with pytest.raises(tf.errors.InvalidArgumentError):
        empty.get_value()
    it = iter(tf.data.Dataset.range(1))
    assert isinstance(it.get_next_as_optional(), tf.data.experimental.Optional)
    assert not bool(it.get_next_as_optional().has_value())
    spec = tf.OptionalSpec(tf.TensorSpec([], tf.int32))
    assert spec == tf.OptionalSpec(tf.TensorSpec([], tf.int32))
    assert spec != tf.OptionalSpec(tf.TensorSpec([], tf.int64))
    assert repr(spec) == "OptionalSpec(TensorSpec(shape=(), dtype=tf.int32, name=None),)"
    it_spec = tf.data.IteratorSpec(tf.TensorSpec([None], tf.float32))
    assert it_spec.is_compatible_with(iter(tf.data.Dataset.from_tensors([1.0, 2.0])))
    ds = tf.data.Dataset.range(3)
    assert E.get_structure(ds) == tf.TensorSpec([], tf.int64)
    assert E.get_structure(iter(ds)) == tf.TensorSpec([], tf.int64)
    with pytest.raises(TypeError, match="must be a `tf.data.Dataset` or tf.data.Iterator"):
        E.get_structure(3)


# -- transformations ---------------------------------------------------------------------------
def test_ignore_errors_skips_failing_elements(caplog):
    ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 0.0, 4.0]).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "bad"))
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(ds)
    assert list(ds.ignore_errors().as_numpy_iterator()) == [1.0, 0.5, 0.25]
    with caplog.at_level(logging.WARNING, logger="ndflow.data"):
        kept = list(ds.apply(E.ignore_errors(log_warning=True)).filter(
            lambda x: x < 1.0).as_numpy_iterator())
    assert kept == [0.5, 0.25]
    assert "ignoring error" in caplog.text


def test_at():
    ds = tf.data.Dataset.range(10).map(lambda x: x * x)
    assert int(E.at(ds, 3)) == 9
    for i in (10, -1):
        with pytest.raises(tf.errors.OutOfRangeError, match=rf"Index out of range \[0, 10\):{i}"):
            E.at(ds, i)


def test_pad_to_cardinality():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0, 2.0], [3.0, 4.0]]})
    out = list(ds.apply(E.pad_to_cardinality(4)).as_numpy_iterator())
    assert [bool(e["valid"]) for e in out] == [True, True, False, False]
    np.testing.assert_array_equal([e["b"] for e in out], [[1, 2], [3, 4], [0, 0], [0, 0]])
    assert ds.apply(E.pad_to_cardinality(4)).cardinality() == 4
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary"):
        tf.data.Dataset.range(3).apply(E.pad_to_cardinality(4))
    with pytest.raises(ValueError, match="must have a known cardinalty, but has cardinality -2"):
        ds.filter(lambda x: True).apply(E.pad_to_cardinality(4))
    with pytest.raises(ValueError, match=r"less than the target cardinality \(1\)"):
        ds.apply(E.pad_to_cardinality(1))


def test_dense_to_sparse_batch_matches_tensorflow():
    rows = [[1, 2], [3], [], [4, 5, 6]]
    ds = tf.data.Dataset.from_generator(lambda: iter(rows),
                                        output_signature=tf.TensorSpec([None], tf.int32))
    got = [{"indices": s.indices.numpy().tolist(), "values": s.values.numpy().tolist(),
            "shape": s.dense_shape.numpy().tolist()}
           for s in ds.apply(E.dense_to_sparse_batch(3, [5]))]
    assert got == DATA["sparse_batch"]
    widest = [s.dense_shape.numpy().tolist() for s in ds.sparse_batch(2, [None])]
    assert widest == [[2, 2], [2, 3]]
    with pytest.raises(tf.errors.DataLossError, match=r"shape \(\[3\]\) that is larger than "
                                                      r"the row shape \(\[2\]\)"):
        list(ds.apply(E.dense_to_sparse_batch(4, [2])))


def test_rejection_resample_reaches_the_target_distribution():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(1000) % 4)
    target = np.array([0.1, 0.2, 0.3, 0.4])
    out = ds.rejection_resample(lambda x: tf.cast(x, tf.int32), target, seed=1)
    assert out.element_spec[0] == tf.TensorSpec([], tf.int32)
    pairs = list(out.as_numpy_iterator())
    assert all(int(c) == int(v) for c, v in pairs)
    freq = np.bincount([int(c) for c, _ in pairs], minlength=4) / len(pairs)
    assert np.abs(freq - target).max() < 0.06  # about 625 samples: 3 sigma (seeded)
    known = ds.apply(E.rejection_resample(lambda x: tf.cast(x, tf.int32), [0.5, 0.5, 0, 0],
                                          initial_dist=[0.25] * 4, seed=2))
    classes = {int(c) for c, _ in known.as_numpy_iterator()}
    assert classes == {0, 1}


def test_enable_debug_mode_runs_functions_eagerly(monkeypatch):
    monkeypatch.setattr(traced_function, "DEBUG_MODE", [False])
    seen = []

    def fn(x):
        if tf.executing_eagerly():
            seen.append(int(x.numpy()))
        return x * 2
    traced = tf.data.Dataset.range(3).map(fn)
    assert list(traced.as_numpy_iterator()) == [0, 2, 4] and seen == []
    E.enable_debug_mode()
    debug = tf.data.Dataset.range(3).map(fn, num_parallel_calls=2)
    assert list(debug.as_numpy_iterator()) == [0, 2, 4]
    assert seen == [0, 1, 2]  # each element ran the Python body, in order


# -- snapshot, TFRecordWriter ------------------------------------------------------------------
def test_snapshot_writes_once_then_reads(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from range(5)
    source = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))
    ds = source.map(lambda x: x * 2).snapshot(str(tmp_path))
    it = iter(ds)
    next(it)
    del it  # an interrupted pass leaves no snapshot
    [fp] = os.listdir(tmp_path)
    assert not os.path.exists(tmp_path / fp / "snapshot.metadata")
    assert list(ds.as_numpy_iterator()) == [0, 2, 4, 6, 8]
    assert os.path.exists(tmp_path / fp / "snapshot.metadata")
    n = len(calls)
    again = source.map(lambda x: x * 2).apply(E.snapshot(str(tmp_path)))
    assert sorted(again.as_numpy_iterator()) == [0, 2, 4, 6, 8]
    assert len(calls) == n  # read from disk: the generator did not run
    assert sorted(tf.data.Dataset.load(str(tmp_path / fp)).as_numpy_iterator()) == \
        [0, 2, 4, 6, 8]
    with pytest.raises(tf.errors.UnimplementedError, match="SNAPPY"):
        source.snapshot(str(tmp_path), compression="SNAPPY")


def test_snapshot_gzip_and_distinct_pipelines(tmp_path):
    a = tf.data.Dataset.range(4).snapshot(str(tmp_path), compression="GZIP")
    b = tf.data.Dataset.range(4).map(lambda x: x + 10).snapshot(str(tmp_path))
    assert list(a.as_numpy_iterator()) == [0, 1, 2, 3]
    assert list(b.as_numpy_iterator()) == [10, 11, 12, 13]
    assert len(os.listdir(tmp_path)) == 2
    assert list(a.as_numpy_iterator()) == [0, 1, 2, 3]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_writer(tmp_path, compression):
    path = str(tmp_path / "out.tfrecord")
    records = [b"a", b"", b"xyz" * 100]
    E.TFRecordWriter(path, compression).write(tf.data.Dataset.from_tensor_slices(records))
    back = tf.data.TFRecordDataset(path, compression_type=compression or "")
    assert list(back.as_numpy_iterator()) == records
    assert os.listdir(tmp_path) == ["out.tfrecord"]  # no temporary file left
    with pytest.raises(TypeError, match="produces scalar `tf.string` elements"):
        E.TFRecordWriter(path).write(tf.data.Dataset.range(2))
    with pytest.raises(TypeError, match="Expected a `tf.data.Dataset`"):
        E.TFRecordWriter(path).write([b"a"])


# -- SqlDataset --------------------------------------------------------------------------------
def test_sql_dataset_matches_tensorflow(tmp_path):
    import sqlite3
    db = str(tmp_path / "t.db")
    conn = sqlite3.connect(db)
    conn.execute("create table t(name text, age int, h real)")
    conn.executemany("insert into t values (?,?,?)",
                     [("ann", 30, 1.5), ("bob", None, 2.0), ("c\u00e9", 7, None)])
    conn.commit()
    conn.close()
    ds = E.SqlDataset("sqlite", db, "select name, age, h from t",
                      (tf.string, tf.int32, tf.float64))
    # TensorFlow 2.21's rows for this table (NULL reads as 0 / 0.0)
    assert [tuple(v.item() if hasattr(v, "item") else v for v in row)
            for row in ds.as_numpy_iterator()] == [
        (b"ann", 30, 1.5), (b"bob", 0, 2.0), ("c\u00e9".encode(), 7, 0.0)]
    as_text = E.SqlDataset("sqlite", db, "select age from t", (tf.string,))
    assert [r[0] for r in as_text.as_numpy_iterator()] == [b"30", b"", b"7"]
    as_bool = E.SqlDataset("sqlite", db, "select age from t", (tf.bool,))
    assert [bool(r[0]) for r in as_bool.as_numpy_iterator()] == [True, False, True]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"number of columns in query \(2\)"):
        list(E.SqlDataset("sqlite", db, "select name, age from t", (tf.string,)))
    with pytest.raises(tf.errors.UnknownError, match="no such column: nam"):
        list(E.SqlDataset("sqlite", db, "select nam from t", (tf.string,)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sqlite::Open"):
        list(E.SqlDataset("sqlite", str(tmp_path / "no" / "t.db"), "select 1", (tf.int64,)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="mysql, is not supported"):
        E.SqlDataset("mysql", db, "select 1", (tf.int64,))
