"""Kernels of the set ops (ndflow/ops/sets_ops.py), the same functions for numbers and (as
host kernels) strings: sets grouped by all but the last index, combined per group, emitted in
ascending order; TF's shape errors."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import sets_ops

_COMBINE = {"intersection": lambda a, b: a & b, "union": lambda a, b: a | b,
            "a-b": lambda a, b: a - b, "b-a": lambda a, b: b - a}


def _np(x) -> np.ndarray:
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _dense_sets(values) -> tuple[list, dict]:
    """(group shape, {group index: set}) of a dense operand."""
    v = _np(values)
    if v.ndim < 2:
        raise InvalidArgumentError(None, None, f"Invalid rank {v.ndim}.")
    groups = {}
    for idx in itertools.product(*map(range, v.shape[:-1])):
        groups[idx] = set(v[idx].tolist())
    return list(v.shape[:-1]), groups


def _sparse_sets(indices, values, shape) -> tuple[list, dict]:
    ind, val, dense = _np(indices), _np(values), [int(d) for d in _np(shape)]
    if len(dense) < 2:
        raise InvalidArgumentError(None, None, f"Invalid rank {len(dense)}.")
    groups: dict = {}
    for row, value in zip(ind.tolist(), val.tolist()):
        groups.setdefault(tuple(row[:-1]), set()).add(value)
    return dense[:-1], groups


def _result(group_shape: list, sets: dict, dtype):
    rows = sorted((k, sorted(s)) for k, s in sets.items() if s)
    width = max((len(s) for _, s in rows), default=0)
    indices = [[*k, j] for k, s in rows for j in range(len(s))]
    values = [x for _, s in rows for x in s]
    ind = torch.tensor(indices, dtype=torch.int64).reshape(-1, len(group_shape) + 1)
    if dtype is object:
        vals = np.empty(len(values), dtype=object)
        vals[:] = values
    else:
        vals = torch.from_numpy(np.array(values, dtype=dtype))
    return ind, vals, torch.tensor([*group_shape, width], dtype=torch.int64)


def _check_groups(s1: list, s2: list) -> None:
    if s1 != s2:
        raise InvalidArgumentError(None, None, f"Mismatched shapes {s1} vs {s2}".replace(
            ", ", ","))


def _operation(node, read_operands):
    combine = _COMBINE.get(node.attrs["set_operation"])
    if combine is None:
        raise InvalidArgumentError(None, None, "Invalid set_operation "
                                   f"{node.attrs['set_operation']}.")

    def run(*args):
        (shape1, sets1, dtype), (shape2, sets2) = read_operands(args)
        _check_groups(shape1, shape2)
        out = {k: combine(sets1.get(k, set()), sets2.get(k, set()))
               for k in set(sets1) | set(sets2)}
        return _result(shape1, out, dtype)
    return run


def _dtype(values):
    return object if not isinstance(values, torch.Tensor) else _np(values).dtype


@kernel(sets_ops.DenseToDenseSetOperation)
@host_kernel(sets_ops.DenseToDenseSetOperation)
def _dense_dense(node):
    def read(args):
        s1, s2 = args
        return (*_dense_sets(s1), _dtype(s1)), _dense_sets(s2)
    return _operation(node, read)


@kernel(sets_ops.DenseToSparseSetOperation)
@host_kernel(sets_ops.DenseToSparseSetOperation)
def _dense_sparse(node):
    def read(args):
        s1, i2, v2, sh2 = args
        return (*_dense_sets(s1), _dtype(s1)), _sparse_sets(i2, v2, sh2)
    return _operation(node, read)


@kernel(sets_ops.SparseToSparseSetOperation)
@host_kernel(sets_ops.SparseToSparseSetOperation)
def _sparse_sparse(node):
    def read(args):
        i1, v1, sh1, i2, v2, sh2 = args
        return (*_sparse_sets(i1, v1, sh1), _dtype(v1)), _sparse_sets(i2, v2, sh2)
    return _operation(node, read)


@kernel(sets_ops.SetSize)
@host_kernel(sets_ops.SetSize)
def _set_size(node):  # noqa: ARG001
    def run(indices, values, shape):
        group_shape, sets = _sparse_sets(indices, values, shape)
        out = np.zeros(group_shape, np.int32)
        for k, s in sets.items():
            out[k] = len(s)
        return torch.from_numpy(out)
    return run
