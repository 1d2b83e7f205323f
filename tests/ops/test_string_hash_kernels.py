"""The whole-tensor string hash kernels (kernels/string_hash_numba.py) and the vectorized
string GatherNd: TF 2.21's hashes of ~400 strings (fixture: every FarmHash length branch, NULs,
UTF-8, long strings), the pure-Python reference on both ways of finding the strings (the
bytes objects read in place, or packed), the path without numba, and NumPy's indexing."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from ndflow.kernels import string_hash, string_hash_numba
from tests import fixture_modules

CASES = fixture_modules.load("string_hash_kernels", "cases")
BIG, KEY, ROWS = CASES.BIG, CASES.KEY, CASES.ROWS
WANT = json.loads((fixture_modules.FIXTURES / "string_hash_kernels" / "values.json").read_text())
STRINGS = CASES.strings()
K0, K1 = (k & ((1 << 64) - 1) for k in KEY)


def test_ops_match_tensorflow():
    x = tf.constant(STRINGS)
    got = tf.bitcast(tf.fingerprint(x), tf.uint64).numpy().reshape(-1)
    assert [str(int(v)) for v in got] == WANT["fingerprint"]
    assert tf.strings.to_hash_bucket_fast(x, BIG).numpy().tolist() == WANT["fast"]
    assert tf.strings.to_hash_bucket_strong(x, BIG, KEY).numpy().tolist() == WANT["strong"]
    assert tf.strings.to_hash_bucket(x, BIG).numpy().tolist() == WANT["legacy"]


def test_fingerprint_rows_and_cross_hashed_match_tensorflow():
    rows = tf.constant(STRINGS[:ROWS * 4].reshape(ROWS, 4))
    assert tf.fingerprint(rows).numpy().tolist() == WANT["fingerprint_rows"]
    ints = tf.constant(np.arange(ROWS * 2, dtype=np.int64).reshape(ROWS, 2) % 7)
    cross = tf.sparse.cross_hashed([tf.sparse.from_dense(rows), ints], num_buckets=1000,
                                   hash_key=17)
    assert cross.indices.numpy().tolist() == WANT["cross_indices"]
    assert cross.values.numpy().tolist() == WANT["cross_values"]


def _references(values) -> dict:
    return {"fingerprint": [string_hash.fingerprint64(v) for v in values],
            "siphash": [string_hash.siphash24(K0, K1, v) for v in values],
            "legacy": [string_hash.legacy_hash64(v) for v in values]}


def _arrays(values) -> dict:
    return {"fingerprint": string_hash.fingerprint64_array(values).tolist(),
            "siphash": string_hash.siphash24_array(K0, K1, values).tolist(),
            "legacy": string_hash.legacy_hash64_array(values).tolist()}


def _random_strings(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=object)
    out[:] = [rng.integers(0, 256, int(k)).astype(np.uint8).tobytes()
              for k in rng.integers(0, 200, n)]
    return out


@pytest.mark.parametrize("where", ["in_place", "packed"])
def test_hashes_equal_the_reference_both_ways(where, monkeypatch):
    """Read from the bytes objects, and packed (where CPython's layout is not found)."""
    if where == "packed":
        monkeypatch.setattr(string_hash_numba, "_LAYOUT", None)
    elif string_hash_numba._LAYOUT is None:
        pytest.skip("not CPython's bytes layout: the strings are always packed")
    else:
        monkeypatch.setattr(string_hash_numba, "pack", None)   # must not be needed
    values = np.concatenate([STRINGS, _random_strings(500, 1)])
    assert _arrays(values) == _references(values)


def test_fingerprint_equals_pyfarmhash():
    """An independent implementation: pyfarmhash's C FarmHash (an ndflow dependency)."""
    farmhash = pytest.importorskip("farmhash")
    values = np.concatenate([STRINGS, _random_strings(2000, 2)])
    assert string_hash.fingerprint64_array(values).tolist() == \
        [farmhash.fingerprint64(v) for v in values]


class _Bytes(bytes):
    pass


def test_str_and_bytes_subclass_elements_hash_as_their_bytes():
    """An element that is not exactly `bytes` sends the array down the packing path."""
    text = ["", "caf\u00e9", "a\x00b", "x" * 70]
    plain = [t.encode() for t in text]
    as_str = np.array(text, dtype=object)
    subclass = np.empty(len(text), dtype=object)
    subclass[:] = plain[:-1] + [_Bytes(plain[-1])]
    for mixed in (as_str, subclass):
        assert _arrays(mixed) == _references(plain)


def test_without_numba_the_reference_runs(monkeypatch):
    monkeypatch.setattr(string_hash_numba, "kernels", lambda: None)
    values = STRINGS[:50]
    assert _arrays(values) == _references(values)
    got = tf.fingerprint(tf.constant(STRINGS[:ROWS * 4].reshape(ROWS, 4))).numpy().tolist()
    assert got == WANT["fingerprint_rows"]


@pytest.mark.parametrize("shape", [(0,), (3, 0), (2, 0, 4), (1, 1)])
def test_empty_and_tiny_tensors(shape):
    x = np.empty(shape, dtype=object)
    x.fill(b"abc")
    got = tf.strings.to_hash_bucket_fast(tf.constant(x), 7)
    assert got.shape.as_list() == list(shape)
    np.testing.assert_array_equal(got.numpy(), np.full(shape, string_hash.fingerprint64(b"abc")
                                                       % 7))


def test_fingerprint_of_number_rows_equals_the_reference():
    rng = np.random.default_rng(3)
    for rows in (rng.standard_normal((5, 7)), rng.integers(-9, 9, (4, 0, 2)).astype(np.int16),
                 np.zeros((0, 3), np.float32), rng.integers(0, 9, (3, 40)).astype(np.int64)):
        flat = rows.reshape(rows.shape[0], -1) if rows.shape[0] else rows.reshape(0, 3)
        want = [string_hash.fingerprint64(r.astype(r.dtype.newbyteorder("<")).tobytes())
                for r in flat]
        got = tf.bitcast(tf.fingerprint(tf.constant(rows)), tf.uint64).numpy().reshape(-1)
        assert got.tolist() == want


def test_large_input_matches_the_reference_on_a_sample():
    values = _random_strings(20_000, 4)
    got = tf.strings.to_hash_bucket_fast(tf.constant(values), 1 << 40).numpy()
    sample = np.random.default_rng(5).integers(0, values.size, 300)
    assert got[sample].tolist() == [string_hash.fingerprint64(values[i]) % (1 << 40)
                                    for i in sample]


# -- GatherNd on strings: NumPy's advanced indexing is the reference -------------------------

@pytest.mark.parametrize("params_shape,index_shape", [
    ((6,), (4, 1)), ((5, 3), (7, 2)), ((5, 3), (2, 3, 1)), ((4, 3, 2), (5, 2)),
    ((4, 3, 2), (2, 2, 3)), ((4, 3), (0, 2)), ((3, 0), (2, 1)), ((0, 3), (0, 1))])
def test_string_gather_nd_equals_numpy(params_shape, index_shape):
    rng = np.random.default_rng(sum(params_shape) + len(index_shape))
    params = _random_strings(int(np.prod(params_shape)), 6).reshape(params_shape)
    k = index_shape[-1]
    idx = np.stack([rng.integers(0, params_shape[j], index_shape[:-1]) for j in range(k)], -1) \
        .reshape(index_shape).astype(np.int32)
    want = params[tuple(np.moveaxis(idx, -1, 0))]
    got = tf.gather_nd(tf.constant(params), tf.constant(idx)).numpy()
    assert got.shape == want.shape and got.tolist() == want.tolist()


def test_string_gather_nd_without_coordinates_repeats_params():
    params = np.array([[b"a", b"b"], [b"c", b""]], dtype=object)
    got = tf.gather_nd(tf.constant(params), tf.zeros([3, 0], tf.int64)).numpy()
    assert got.tolist() == [params.tolist()] * 3


def test_string_gather_nd_errors_are_tensorflows():
    params = tf.constant([[b"a", b"b"], [b"c", b"d"]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[5, 0\] does not index into param shape \[2,2\]"):
        tf.gather_nd(params, [[0, 1], [5, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[0,1\] = \[0, -1\] does not index into param shape"):
        tf.gather_nd(params, [[[0, 0], [0, -1]]])
