"""The EditDistance kernel (ndflow/ops/edit_distance.py), for numbers and (as a host kernel)
strings: sequences grouped by index prefix in last-index order, Levenshtein distance per
output position."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import edit_distance as ops


def _np(x) -> np.ndarray:
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _sequences(indices, values, shape) -> tuple[list, dict]:
    ind, val, dims = _np(indices), _np(values), [int(d) for d in _np(shape)]
    rows = sorted(zip(map(tuple, ind.tolist()), val.tolist()))
    seqs: dict = {}
    for idx, v in rows:
        seqs.setdefault(idx[:-1], []).append(v)
    return dims, seqs


def levenshtein(a: list, b: list) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@kernel(ops.EditDistance)
@host_kernel(ops.EditDistance)
def _edit_distance(node):
    normalize = bool(node.attrs["normalize"])

    def run(h_ind, h_val, h_shape, t_ind, t_val, t_shape):
        h_dims, hyp = _sequences(h_ind, h_val, h_shape)
        t_dims, truth = _sequences(t_ind, t_val, t_shape)
        if len(h_dims) != len(t_dims):
            raise InvalidArgumentError(None, None, "hypothesis and truth must have the same "
                                       f"rank: {len(h_dims)} vs. {len(t_dims)}")
        out_shape = [max(a, b) for a, b in zip(h_dims[:-1], t_dims[:-1])]
        out = np.zeros(out_shape, np.float32)
        for pos in itertools.product(*map(range, out_shape)):
            h, t = hyp.get(pos, []), truth.get(pos, [])
            d = float(levenshtein(h, t))
            if normalize:
                d = d / len(t) if t else (np.inf if h else 0.0)
            out[pos] = d
        return torch.from_numpy(out)
    return run
