"""The quantized dtypes (tf.qint8 & co) and the narrow ones (tf.experimental.float8_*,
float4_e2m1fn, int4, uint4, int2, uint2): DType properties, as_dtype, constants, every Cast TF
has between them and the ordinary types (and TF's errors for the rest), bitcasts, TensorProtos
and TensorBundle checkpoints, against TF 2.21 (tests/fixtures/narrow_dtypes)."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

CONFIGS = fixture_modules.load("narrow_dtypes")
FIXTURE = fixture_modules.FIXTURES / "narrow_dtypes"
TF_VALUES = json.loads((FIXTURE / "values.json").read_text())
CASES = CONFIGS.cases(tf)


def _same_error(got: dict, want: dict) -> None:
    assert got["error"] == want["error"], (got, want)
    if "message" not in want:
        return
    # an op's attr errors list its allowed types in its OpDef's order and then summarize the
    # OpDef in TF's wording: compared up to the list
    if "\t; NodeDef" in want["message"]:
        head = want["message"].split(" allowed values:")[0]
        assert got["message"].split(" allowed values:")[0] == head
    elif "in user code" in want["message"]:   # a traceback of the traced function
        assert want["message"].split("\n")[-1].split(":")[0] in got["message"]
    else:
        assert got["message"] == want["message"]


def _compare(got, want) -> None:
    if isinstance(want, dict) and "error" in want:
        assert isinstance(got, dict) and "error" in got, f"expected {want}, got {got}"
        _same_error(got, want)
    elif isinstance(want, dict) and "values" in want:
        assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"]
        assert got["values"] == want["values"]
    else:
        assert isinstance(got, dict) and sorted(got) == sorted(want)
        for key in want:
            if isinstance(want[key], dict):
                _compare(got[key], want[key])
            else:
                assert got[key] == want[key], key


def _defined(src: str, dst: str, got: dict, want: dict) -> tuple:
    """A float cast to an integer type out of its range (or NaN, inf) is undefined in TF's C++
    (its vectorized and scalar paths differ): such elements are left out."""
    s = CONFIGS.dtype(tf, src)
    d = CONFIGS.dtype(tf, dst)
    if not (s.is_floating and (d.is_integer or d.is_quantized)) or "values" not in want:
        return got, want
    x = CONFIGS._source(tf, src).numpy().astype(np.float64).reshape(-1)
    info = np.iinfo(d.as_numpy_dtype if d.is_integer and dst not in CONFIGS.NARROW
                    else {"int4": np.int8, "uint4": np.uint8}.get(dst, np.int64)) \
        if dst not in CONFIGS.QUANTIZED else np.iinfo(CONFIGS._STORAGE[dst])
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(x) & (np.trunc(x) >= info.min) & (np.trunc(x) <= info.max)
    pick = lambda r: {**r, "values": [v for v, k in zip(r["values"], keep) if k]}  # noqa: E731
    return pick(got), pick(want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    got, want = CONFIGS.record(CASES[name]), TF_VALUES[name]
    if name.startswith("cast/"):
        src = name.split("/")[1]
        assert sorted(got) == sorted(want)
        for dst in want:
            _compare(*_defined(src, dst, got[dst], want[dst])[::1])
        return
    _compare(got, want)


def test_fixture_covers_every_case():
    assert sorted(TF_VALUES) == sorted(CASES)


def test_quantized_dtypes_set():
    assert tf.dtypes.QUANTIZED_DTYPES == {tf.qint8, tf.quint8, tf.qint16, tf.quint16, tf.qint32}
    assert tf.compat.v1.QUANTIZED_DTYPES is tf.dtypes.QUANTIZED_DTYPES
    assert tf.experimental.float8_e4m3fn is tf.as_dtype("float8_e4m3fn")


def test_storage_is_aten():
    # the float8s ATen has are ATen's; quantized values sit in their integer type
    import torch  # (the storage is what this checks)
    assert tf.constant([1.0], tf.experimental.float8_e5m2).value.dtype == torch.float8_e5m2
    assert tf.constant([1], tf.qint16).value.dtype == torch.int16
    assert tf.constant([-3], tf.experimental.int4).value.dtype == torch.int8


def test_checkpoint_reads_tensorflows_bundle():
    names = list(CONFIGS.CHECKPOINT_TENSORS)
    got = tf.raw_ops.RestoreV2(prefix=str(FIXTURE / "ckpt"), tensor_names=names,
                               shape_and_slices=[""] * len(names),
                               dtypes=[CONFIGS.dtype(tf, n) for n in names])
    for name, t in zip(names, got):
        assert t.dtype.name == name
        assert CONFIGS.summary(t) == CONFIGS.summary(CONFIGS._source(tf, name))


def test_checkpoint_writes_tensorflows_bytes(tmp_path: Path):
    names = list(CONFIGS.CHECKPOINT_TENSORS)
    tensors = [CONFIGS._source(tf, n) for n in names]
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "ckpt"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=tensors)
    data = "ckpt.data-00000-of-00001"
    assert (tmp_path / data).read_bytes() == (FIXTURE / data).read_bytes()


def test_numpy_values_are_ml_dtypes():
    t = tf.constant(np.array([0.5, -2.0], ml_dtypes.float8_e4m3b11fnuz))
    assert t.numpy().dtype == np.dtype(ml_dtypes.float8_e4m3b11fnuz)
    assert t.numpy().tolist() == [0.5, -2.0]
    assert tf.constant([1, -2], tf.qint8).numpy().dtype == np.int8


def test_graph_constants_fold_and_fetch():
    # graph constants of these types go through constant folding, GraphDefs and Session fetches
    values = np.array([1.0, 2.5, -0.3125], np.float32)
    f = tf.function(lambda: (tf.constant(values, tf.experimental.float8_e4m3fn),
                             tf.constant([3, -1], tf.qint8), tf.constant([5, -3],
                                                                         tf.experimental.int4)))
    f8, q8, i4 = f()
    np.testing.assert_array_equal(f8.numpy(), values.astype(ml_dtypes.float8_e4m3fn))
    assert q8.numpy().tolist() == [3, -1] and i4.numpy().tolist() == [5, -3]
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(values, tf.experimental.float8_e5m2)
        d = tf.constant([7, -8], tf.experimental.int4)
        back = tf.cast(c, tf.float32)
    with tf.compat.v1.Session(graph=g) as sess:
        got_c, got_d, got_back = sess.run([c, d, back])
    assert got_c.dtype == np.dtype(ml_dtypes.float8_e5m2)
    np.testing.assert_array_equal(got_c, values.astype(ml_dtypes.float8_e5m2))
    assert got_d.dtype == np.dtype(ml_dtypes.int4) and got_d.tolist() == [7, -8]
    np.testing.assert_array_equal(got_back, values.astype(ml_dtypes.float8_e5m2)
                                  .astype(np.float32))
    imported = tf.Graph()
    with imported.as_default():
        tf.import_graph_def(g.as_graph_def(), name="")
    with tf.compat.v1.Session(graph=imported) as sess:
        np.testing.assert_array_equal(sess.run(c.name), got_c)


def test_variables_checkpoint_with_their_dtypes(tmp_path: Path):
    f8 = np.array([1.0, -2.5], ml_dtypes.float8_e4m3fn)
    v = tf.Variable(tf.constant(f8))
    q = tf.Variable(tf.constant([3, -4], tf.qint8))
    i4 = tf.Variable(tf.constant([3, -4], tf.experimental.int4))
    ck = tf.train.Checkpoint(v=v, q=q, i4=i4)
    path = ck.save(str(tmp_path / "ck"))
    dtypes_saved = dict(tf.train.load_checkpoint(path).get_variable_to_dtype_map())
    assert dtypes_saved["q/.ATTRIBUTES/VARIABLE_VALUE"] == tf.qint8   # not int8
    assert dtypes_saved["i4/.ATTRIBUTES/VARIABLE_VALUE"] == tf.experimental.int4
    v.assign(tf.constant(np.zeros(2, ml_dtypes.float8_e4m3fn)))
    q.assign(tf.constant([0, 0], tf.qint8))
    i4.assign(tf.constant([0, 0], tf.experimental.int4))
    ck.restore(path)
    np.testing.assert_array_equal(v.numpy(), f8)
    assert q.numpy().tolist() == [3, -4] and i4.numpy().tolist() == [3, -4]
