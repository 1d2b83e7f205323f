"""Kernel of RaggedTensorToTensor (ops/ragged_conversion_ops.py), in NumPy: each flat value
gets its coordinates from the row partitions, level by level; places no value reaches hold
the default; a requested shape pads or truncates. Strings (host kernel) and numbers share it.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import ragged_conversion_ops as ops


def _host(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x, dtype=object)


def _splits(kind: str, partition: np.ndarray, nrows: int) -> np.ndarray:
    """Row splits of one ragged level of `nrows` rows."""
    p = partition.astype(np.int64).reshape(-1)
    if kind == "ROW_SPLITS":
        splits = p
    elif kind == "ROW_LENGTHS":
        splits = np.concatenate([[0], np.cumsum(p)])
    elif kind == "VALUE_ROWIDS":
        if len(p) and (p.min() < 0 or p.max() >= nrows or np.any(np.diff(p) < 0)):
            raise InvalidArgumentError(None, None, "value_rowids must be sorted and in "
                                       f"[0, {nrows})")
        splits = np.concatenate([[0], np.cumsum(np.bincount(p, minlength=nrows))])
    else:
        raise InvalidArgumentError(None, None, f"Unsupported row partition type: {kind}")
    if len(splits) != nrows + 1 or (len(splits) and splits[0] != 0) or \
            np.any(np.diff(splits) < 0):
        raise InvalidArgumentError(None, None, f"Invalid {kind} row partition for {nrows} "
                                   "rows")
    return splits


@kernel(ops.RaggedTensorToTensor)
def _ragged_to_tensor(node):
    kinds = [t.decode() if isinstance(t, bytes) else t
             for t in node.attrs["row_partition_types"]]
    out_dtype = node.attrs["T"]

    def run(shape, values, default, *partitions):
        values, default = _host(values), _host(default)
        parts = [_host(p) for p in partitions]
        if kinds and kinds[0] == "FIRST_DIM_SIZE":
            nrows, kinds_, parts = int(parts[0].reshape(-1)[0]), kinds[1:], parts[1:]
        else:
            nrows, kinds_ = len(parts[0]) - 1, kinds
        coords = [np.arange(nrows)]
        for kind, part in zip(kinds_, parts):
            splits = _splits(kind, part, len(coords[0]))
            parent = np.repeat(np.arange(len(splits) - 1), np.diff(splits))
            coords = [c[parent] for c in coords] + [np.arange(splits[-1]) - splits[parent]]
        if len(values) != len(coords[0]):
            raise InvalidArgumentError(None, None, f"Expected {len(coords[0])} flat values, "
                                       f"got {len(values)}")
        dims = [nrows] + [int(c.max()) + 1 if len(c) else 0 for c in coords[1:]] + \
            list(values.shape[1:])
        requested = _host(shape).reshape(-1)
        if requested.size == len(dims):   # a requested shape: -1 keeps the natural size
            dims = [d if r < 0 else int(r) for d, r in zip(dims, requested.tolist())]
        out = np.empty(dims, dtype=values.dtype)
        out[...] = default
        inside = np.ones(len(values), bool)
        for c, d in zip(coords, dims):
            inside &= c < d
        out[tuple(c[inside] for c in coords)] = values[inside]
        if out.dtype == object:
            return out
        return torch.from_numpy(np.ascontiguousarray(out)).to(out_dtype.torch_dtype)
    return run


host_kernel(ops.RaggedTensorToTensor)(_ragged_to_tensor)
