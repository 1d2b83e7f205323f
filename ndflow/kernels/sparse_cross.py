"""Host kernels of the feature crosses (SparseCross, SparseCrossV2, RaggedCross): each row's
cartesian product of its values in each input column (the last column varying fastest), as
joined strings or as TensorFlow's chained fingerprints. A string op: a Python loop over the
output elements."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.sparse_common import bad, long
from ndflow.kernels.string_hash import fingerprint64
from ndflow.ops import ragged_cross, sparse_cross

_M64 = (1 << 64) - 1
_K_MUL = 0xC6A4A7935BD1E995


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's FingerprintCat64: combines two 64-bit fingerprints."""
    result = fp1 ^ _K_MUL
    result ^= (_shift_mix((fp2 * _K_MUL) & _M64) * _K_MUL) & _M64
    result = (result * _K_MUL) & _M64
    result = (_shift_mix(result) * _K_MUL) & _M64
    return _shift_mix(result)


class Column:
    """One input: for each row, the slice [start, start + count) of its flat values."""

    def __init__(self, values, starts: np.ndarray, counts: np.ndarray):
        self.values = values.tolist() if isinstance(values, np.ndarray) else \
            values.cpu().reshape(-1).tolist()
        self.starts, self.counts = starts, counts

    def row(self, b: int) -> list:
        s = int(self.starts[b])
        return self.values[s:s + int(self.counts[b])]


def sparse_column(indices, values, shape, batch: int) -> Column:
    idx = long(indices).cpu().numpy()
    rows = idx[:, 0] if idx.size else np.zeros(0, np.int64)
    if rows.size and ((rows < 0).any() or (rows >= batch).any()):
        raise bad(f"Invalid SparseTensor: row index out of range [0, {batch})")
    counts = np.bincount(rows, minlength=batch)
    return Column(values, np.cumsum(counts) - counts, counts)


def dense_column(t, batch: int) -> Column:
    arr = t if isinstance(t, np.ndarray) else t.cpu().numpy()
    if arr.ndim != 2:
        raise bad(f"Dense inputs should be a matrix but received shape {list(arr.shape)}")
    width = arr.shape[1]
    return Column(arr.reshape(-1), np.arange(batch) * width, np.full(batch, width))


def ragged_column(values, splits) -> Column:
    s = long(splits).cpu().numpy()
    return Column(values, s[:-1], np.diff(s))


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(int(v)).encode()


def _as_hash(v) -> int:
    return fingerprint64(v) if isinstance(v, bytes) else int(v) & _M64


def cross_rows(columns: list, batch: int, hashed: bool, num_buckets: int, hash_key: int,
               sep: bytes):
    """Per row, the list of its crosses (bytes, or int ids when hashed)."""
    rows = []
    modulus = num_buckets if num_buckets > 0 else (1 << 63) - 1
    for b in range(batch):
        parts = [c.row(b) for c in columns]
        out = []
        for combo in itertools.product(*parts) if columns else ():
            if hashed:
                h = hash_key & _M64
                for v in combo:
                    h = fingerprint_cat64(h, _as_hash(v))
                out.append(h % modulus)
            else:
                out.append(sep.join(_as_bytes(v) for v in combo))
        rows.append(out)
    return rows


def _batch_size(sizes: list) -> int:
    if not sizes:
        return 0
    for i, s in enumerate(sizes[1:], 1):
        if s != sizes[0]:
            raise bad(f"Expected batch size {sizes[0]} got {s} for input {i}")
    return sizes[0]


def _values(rows: list, hashed: bool):
    flat = [v for r in rows for v in r]
    if hashed:
        return torch.tensor(np.array(flat, dtype=np.uint64).astype(np.int64)
                            if flat else np.zeros(0, np.int64))
    return np.array(flat, dtype=object) if flat else np.zeros(0, dtype=object)


def _sparse_factory(v2: bool):
    def factory(node):
        n, n_dense = node.attrs["N"], len(node.attrs["dense_types"])
        hashed = False if v2 else node.attrs["hashed_output"]
        buckets = 0 if v2 else node.attrs["num_buckets"]
        key = 0 if v2 else node.attrs["hash_key"]

        def run(*flat):
            indices, values, shapes = flat[:n], flat[n:2 * n], flat[2 * n:3 * n]
            dense = flat[3 * n:3 * n + n_dense]
            sep = bytes(np.asarray(flat[-1], dtype=object).reshape(())[()]) if v2 else b""
            sizes = [int(long(s).reshape(-1)[0]) for s in shapes] + [int(d.shape[0])
                                                                    for d in dense]
            batch = _batch_size(sizes)
            columns = [sparse_column(i, v, s, batch) for i, v, s in zip(indices, values, shapes)]
            columns += [dense_column(d, batch) for d in dense]
            rows = cross_rows(columns, batch, hashed, buckets, key, sep)
            counts = [len(r) for r in rows]
            out_idx = np.array([[b, k] for b, c in enumerate(counts) for k in range(c)],
                               dtype=np.int64).reshape(-1, 2)
            shape = torch.tensor([batch, max(counts, default=0)], dtype=torch.int64)
            return torch.from_numpy(out_idx), _values(rows, hashed), shape
        return run
    return factory


host_kernel(sparse_cross.SparseCross)(_sparse_factory(False))
host_kernel(sparse_cross.SparseCrossV2)(_sparse_factory(True))
kernel(sparse_cross.SparseCross)(_sparse_factory(False))      # int64-only inputs


@host_kernel(ragged_cross.RaggedCross)
def _ragged_cross(node):
    order = node.attrs["input_order"]
    n_ragged, n_sparse = order.count("R"), node.attrs["Nsparse"]
    hashed, buckets = node.attrs["hashed_output"], node.attrs["num_buckets"]
    key = node.attrs["hash_key"]
    splits_dtype = node.attrs["out_row_splits_type"]

    def run(*flat):
        r_vals, r_splits = flat[:n_ragged], flat[n_ragged:2 * n_ragged]
        pos = 2 * n_ragged
        s_idx, s_vals = flat[pos:pos + n_sparse], flat[pos + n_sparse:pos + 2 * n_sparse]
        s_shapes = flat[pos + 2 * n_sparse:pos + 3 * n_sparse]
        dense = flat[pos + 3 * n_sparse:]
        sizes = ([int(long(s).reshape(-1).shape[0]) - 1 for s in r_splits]
                 + [int(long(s).reshape(-1)[0]) for s in s_shapes]
                 + [int(d.shape[0]) for d in dense])
        batch = _batch_size(sizes)
        kinds = {"R": iter([ragged_column(v, s) for v, s in zip(r_vals, r_splits)]),
                 "S": iter([sparse_column(i, v, s, batch)
                            for i, v, s in zip(s_idx, s_vals, s_shapes)]),
                 "D": iter([dense_column(d, batch) for d in dense])}
        columns = [next(kinds[k]) for k in order]
        rows = cross_rows(columns, batch, hashed, buckets, key, b"_X_")
        splits = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(
            splits_dtype.np_dtype)
        return _values(rows, hashed), torch.from_numpy(splits)
    return run


kernel(ragged_cross.RaggedCross)(_ragged_cross)
