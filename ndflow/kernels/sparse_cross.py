"""Host kernels of the feature crosses (SparseCross, SparseCrossV2, RaggedCross): each row's
cartesian product of its values in each input column (the last column varying fastest), as
joined strings or as TensorFlow's chained fingerprints. Positions and hashes are computed
with NumPy for all rows at once; only joining strings loops over the output."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels.registry import host_kernel, kernel
from ndflow.kernels.sparse_common import bad, long
from ndflow.kernels.string_hash import fingerprint64_array
from ndflow.ops import ragged_cross, sparse_cross

_M64 = (1 << 64) - 1
_K_MUL = np.uint64(0xC6A4A7935BD1E995)
_SHIFT = np.uint64(47)


def _shift_mix(v: np.ndarray) -> np.ndarray:
    return v ^ (v >> _SHIFT)


def fingerprint_cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """TensorFlow's FingerprintCat64, elementwise on uint64 arrays (products wrap mod 2**64
    as in C++)."""
    with np.errstate(over="ignore"):
        result = fp1 ^ _K_MUL
        result ^= _shift_mix(fp2 * _K_MUL) * _K_MUL
        result *= _K_MUL
        result = _shift_mix(result) * _K_MUL
        return _shift_mix(result)


class Column:
    """One input: for each row, the slice [start, start + count) of its flat values."""

    def __init__(self, values, starts: np.ndarray, counts: np.ndarray):
        self.values = values if isinstance(values, np.ndarray) else values.cpu().reshape(-1) \
            .numpy()
        self.starts, self.counts = np.asarray(starts, np.int64), np.asarray(counts, np.int64)

    def hashes(self) -> np.ndarray:
        """uint64 of each value: FarmHash Fingerprint64 of a string (hashing all of them at
        once costs less than finding the distinct ones), an int64 as its two's-complement
        bits."""
        if self.values.dtype != object:
            return self.values.astype(np.int64).view(np.uint64)
        return fingerprint64_array(self.values)

    def texts(self) -> list:
        return [v if isinstance(v, bytes) else str(int(v)).encode() for v in self.values]


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


def cross(columns: list, batch: int, hashed: bool, num_buckets: int, hash_key: int,
          sep: bytes):
    """(crosses per row, the crosses in row order: int64 ids or bytes). Each row's crosses
    run through the cartesian product of its columns' values, the last column fastest; the
    positions are computed for all rows at once (mixed-radix digits of each cross's rank)."""
    if not columns:
        return np.zeros(batch, np.int64), np.zeros(0, np.int64 if hashed else object)
    per_row = np.ones(batch, np.int64)
    for c in columns:
        per_row = per_row * c.counts
    total = int(per_row.sum())
    row = np.repeat(np.arange(batch), per_row)
    rank = np.arange(total) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    positions, stride = [], np.ones(total, np.int64)
    for c in reversed(columns):
        counts = c.counts[row]
        positions.append(c.starts[row] + (rank // stride) % np.maximum(counts, 1))
        stride = stride * counts
    positions.reverse()
    if hashed:
        h = np.full(total, np.uint64(hash_key & _M64), dtype=np.uint64)
        for c, pos in zip(columns, positions):
            h = fingerprint_cat64(h, c.hashes()[pos])
        modulus = np.uint64(num_buckets if num_buckets > 0 else (1 << 63) - 1)
        return per_row, (h % modulus).astype(np.int64)
    texts = [c.texts() for c in columns]
    out = np.empty(total, dtype=object)
    for i in range(total):
        out[i] = sep.join(t[p[i]] for t, p in zip(texts, positions))
    return per_row, out


def _batch_size(sizes: list) -> int:
    if not sizes:
        return 0
    for i, s in enumerate(sizes[1:], 1):
        if s != sizes[0]:
            raise bad(f"Expected batch size {sizes[0]} got {s} for input {i}")
    return sizes[0]


def _values(values: np.ndarray, hashed: bool):
    return torch.from_numpy(values) if hashed else values


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
            counts, values = cross(columns, batch, hashed, buckets, key, sep)
            rows = np.repeat(np.arange(batch), counts)
            within = np.arange(rows.size) - np.repeat(np.cumsum(counts) - counts, counts)
            out_idx = np.stack([rows, within], 1).astype(np.int64).reshape(-1, 2)
            shape = torch.tensor([batch, int(counts.max()) if batch else 0], dtype=torch.int64)
            return torch.from_numpy(out_idx), _values(values, hashed), shape
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
        counts, values = cross(columns, batch, hashed, buckets, key, b"_X_")
        splits = np.concatenate([[0], np.cumsum(counts)]).astype(splits_dtype.np_dtype)
        return _values(values, hashed), torch.from_numpy(splits)
    return run


kernel(ragged_cross.RaggedCross)(_ragged_cross)
