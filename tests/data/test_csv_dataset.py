"""tf.data.experimental.CsvDataset and make_csv_dataset against TensorFlow 2.21's results on
the same files (tests/fixtures/data_experimental, generate.py beside it)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data_experimental"
DATA = json.loads((FIXTURES / "fixtures.json").read_text())
E = tf.data.experimental


def _plain(v):
    v = v.numpy() if hasattr(v, "numpy") else v
    v = v.tolist() if hasattr(v, "tolist") else v
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, list):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


def _defaults(spec):
    return [tf.as_dtype(v) if v in ("int32", "int64", "float32", "float64", "string") else v
            for v in spec]


@pytest.fixture
def csv_dir(tmp_path, monkeypatch):
    for name in DATA["csv_files"]:
        shutil.copy(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("case", DATA["csv"], ids=lambda c: f"{c['file']}-{c['kwargs']}")
def test_csv_dataset_matches_tensorflow(csv_dir, case):
    kwargs = dict(case["kwargs"], record_defaults=_defaults(case["kwargs"]["record_defaults"]))
    rows, error = [], None
    try:
        for record in E.CsvDataset(case["file"], **kwargs):
            rows.append([_plain(v) for v in record])
    except tf.errors.OpError as e:
        error = [type(e).__name__, e.message.split(" [Op:")[0]]
    assert rows == case["rows"]
    assert error == case["error"]
    batched, batch_error = [], None  # the bulk path (whole batches of columns)
    try:
        for batch in E.CsvDataset(case["file"], **kwargs).batch(2):
            cols = [_plain(c) for c in batch]
            batched.extend([list(r) for r in zip(*cols)])
    except tf.errors.OpError as e:
        batch_error = [type(e).__name__, e.message.split(" [Op:")[0]]
    expected = case["rows"] if case["error"] is None else case["rows"][:len(rows) // 2 * 2]
    assert batched == expected
    assert batch_error == case["error"]


def test_csv_dataset_spec_and_types(csv_dir):
    ds = E.CsvDataset("basic.csv", [tf.constant(0, tf.int64), np.float64(0), ""], header=True)
    assert [s.dtype for s in ds.element_spec] == [tf.int64, tf.float64, tf.string]
    assert all(s.shape == [] for s in ds.element_spec)
    with pytest.raises(TypeError, match="tf.bool"):
        E.CsvDataset("basic.csv", [tf.bool])


def test_csv_dataset_compression_and_many_files(csv_dir):
    data = (csv_dir / "basic.csv").read_bytes()
    (csv_dir / "basic.csv.gz").write_bytes(gzip.compress(data))
    ds = E.CsvDataset(["basic.csv.gz", "basic.csv.gz"], [0, 0.0, ""], header=True,
                      compression_type="GZIP")
    assert [int(r[0]) for r in ds] == [1, 3, 0, 1, 3, 0]
    bad = E.CsvDataset("basic.csv", [0, 0.0, ""], compression_type="GZIP")
    with pytest.raises(tf.errors.DataLossError):
        list(bad)


@pytest.mark.parametrize("case", DATA["make_csv"], ids=lambda c: f"{c['file']}-{c['kwargs']}")
def test_make_csv_dataset_matches_tensorflow(csv_dir, case):
    ds = E.make_csv_dataset(case["file"], **case["kwargs"])
    spec = ds.element_spec
    feats = spec[0] if isinstance(spec, tuple) else spec
    assert list(feats.keys()) == case["columns"]
    assert [s.dtype.name for s in feats.values()] == case["dtypes"]
    batches = []
    for el in ds:
        f, label = el if isinstance(el, tuple) else (el, None)
        batches.append({"features": {k: _plain(v) for k, v in f.items()},
                        "label": None if label is None else _plain(label)})
    assert batches == case["batches"]


def test_make_csv_dataset_repeats_forever_with_static_batches(csv_dir):
    ds = E.make_csv_dataset("basic.csv", batch_size=2, shuffle=True, shuffle_seed=3)
    assert ds.element_spec["a"].shape == [2]  # drop_remainder when num_epochs is None
    firsts = sorted(int(v) for b in ds.take(6) for v in b["a"].numpy())
    assert firsts == [0] * 4 + [1] * 4 + [3] * 4  # four whole epochs of the three rows


def test_make_csv_dataset_errors(csv_dir):
    with pytest.raises(ValueError, match="must be one of the columns"):
        E.make_csv_dataset("types.csv", 2, label_name="zz")
    with pytest.raises(ValueError, match="No files match"):
        E.make_csv_dataset("nomatch*.csv", 2)
    with pytest.raises(ValueError, match="Neither is provided"):
        E.make_csv_dataset("types.csv", 2, header=False)
    with pytest.raises(ValueError, match="Problem inferring types: CSV row 2 has 5"):
        E.make_csv_dataset("types.csv", 2, column_names=["a", "b"])


def test_csv_dataset_ignore_errors_skips_bad_records(tmp_path):
    (tmp_path / "mixed.csv").write_text('1,2\n3\nx,5\n6,7\n"8,9\n')
    path = str(tmp_path / "mixed.csv")
    ds = E.CsvDataset(path, [0, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 1"):
        list(ds)
    # TensorFlow 2.21: [[1, 2], [6, 7]] (the unterminated quote ends the file)
    assert [[int(v) for v in r] for r in ds.ignore_errors()] == [[1, 2], [6, 7]]
    assert [int(v) for v in ds.map(lambda a, b: a + b).ignore_errors()] == [3, 13]
    (tmp_path / "t.csv").write_text("a,b\n1,2\nx,3\n4,5\n")
    batches = E.make_csv_dataset(str(tmp_path / "t.csv"), 4, column_defaults=[0, 0],
                                 label_name="b", num_epochs=1, shuffle=False,
                                 ignore_errors=True)
    assert [(f["a"].numpy().tolist(), y.numpy().tolist()) for f, y in batches] == \
        [([1, 4], [2, 5])]
