"""SdcaOptimizer's mini-batch as the flat arrays of its numba pass (kernels/sdca_numba.py),
built with NumPy and checked as kernels/sdca_optimizer.py's `_examples` checks it (the same
errors, in the same order): each sparse group's entries of example i are the run
ptr[g, i]:ptr[g, i + 1] met scanning its example indices in order, each entry's feature id
mapped to its weight's position (the last of equal ids, as a dict keeps it) in the groups'
concatenated weights, and the dense groups side by side in one float32 matrix."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndflow.core.errors import InvalidArgumentError

_F = np.float32


class Batch(NamedTuple):
    ptr: np.ndarray     # int64 [groups, n + 1]: entry runs, into pos / val
    pos: np.ndarray     # int64: each entry's position in the concatenated sparse weights
    val: np.ndarray     # float64: each entry's value (1.0 for groups without values)
    dense: np.ndarray   # float32 [n, columns]: the dense groups' rows side by side
    cols: np.ndarray    # int64 [dense groups + 1]: group g's columns cols[g]:cols[g + 1]


def _ids(idx: np.ndarray) -> str:
    return " ".join(map(str, idx.tolist()))


def prepare(n: int, n_values: int, ex_idx: list, feat_idx: list, values: list, dense: list,
            sparse_indices: list, dense_sizes: list, runs, duplicates) -> Batch:
    """The batch's arrays; `runs`: the numba scan filling a group's ptr row, `duplicates`
    the one finding an id twice in a run (kernels/sdca_numba.py)."""
    ptr = np.zeros((len(ex_idx), n + 1), np.int64)
    pos, val = [], []
    entries = weights = 0
    for g, (ei, fi) in enumerate(zip(ex_idx, feat_idx)):
        ei, fi = ei.astype(np.int64, copy=False), fi.astype(np.int64, copy=False)
        if ei.size != fi.size:
            raise InvalidArgumentError(
                None, None, "Found mismatched example_indices and feature_indices "
                f"[{_ids(ei)}] vs [{_ids(fi)}]")
        runs(ei, n, ptr[g])
        used = fi[:ptr[g, n]]
        keys = sparse_indices[g].reshape(-1).astype(np.int64, copy=False)
        order = np.argsort(keys, kind="stable")
        at = np.searchsorted(keys[order], used, side="right") - 1
        found = (at >= 0) & (keys[order][np.maximum(at, 0)] == used) if keys.size else \
            np.zeros(used.size, bool)
        if not found.all():
            raise InvalidArgumentError(None, None, "Found sparse feature indices out of "
                                       f"valid range: {used[np.argmin(found)]}")
        pos.append(order[at] + weights if used.size else np.zeros(0, np.int64))
        val.append(values[g][:used.size].astype(np.float64) if g < n_values
                   else np.ones(used.size))
        ptr[g] += entries
        entries += used.size
        weights += keys.size
    for g, d in enumerate(dense):
        if not 0 <= d.shape[1] - 1 < dense_sizes[g]:
            raise InvalidArgumentError(None, None, "More dense features than we have "
                                       f"parameters for: {d.shape[1]}")
    for g, fi in enumerate(feat_idx):
        if duplicates(fi.astype(np.int64, copy=False), ptr[g] - ptr[g, 0]):
            raise InvalidArgumentError(None, None, "Duplicate index in sparse vector.")
    cols = np.cumsum([0] + [d.shape[1] for d in dense]).astype(np.int64)
    matrix = np.concatenate([d.astype(_F, copy=False) for d in dense], axis=1) if dense \
        else np.zeros((n, 0), _F)
    return Batch(ptr, np.concatenate(pos).astype(np.int64) if pos else np.zeros(0, np.int64),
                 np.concatenate(val) if val else np.zeros(0), np.ascontiguousarray(matrix),
                 cols)
