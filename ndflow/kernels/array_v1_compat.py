"""Kernels of ListDiff (`tf.compat.v1.setdiff1d`, ATen and string), SparseMatMul
(`tf.compat.v1.sparse_matmul`) and CheckPinned (`tf.check_pinned`)."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import FailedPreconditionError, InvalidArgumentError
from ndflow.kernels.registry import host_kernel, kernel
from ndflow.ops import array_v1_compat, sparse_matmul


def _check_vectors(x, y) -> None:
    for what, v in (("x", x), ("y", y)):
        if len(v.shape) != 1:
            raise InvalidArgumentError(None, None, f"{what} should be a 1D vector.")


@kernel(array_v1_compat.ListDiff)
def _list_diff(node):
    idx_dtype = node.attrs["out_idx"].torch_dtype

    def run(x, y):
        _check_vectors(x, y)
        keep = ~torch.isin(x, y) if y.numel() else torch.ones_like(x, dtype=torch.bool)
        idx = torch.nonzero(keep).reshape(-1)
        return x[idx], idx.to(idx_dtype)
    return run


@host_kernel(array_v1_compat.ListDiff)
def _list_diff_strings(node):
    idx_dtype = node.attrs["out_idx"].torch_dtype

    def run(x, y):
        _check_vectors(x, y)
        seen = set(np.asarray(y, dtype=object).tolist())
        idx = [i for i, v in enumerate(np.asarray(x, dtype=object).tolist()) if v not in seen]
        return np.asarray(x, dtype=object)[idx], torch.tensor(idx, dtype=idx_dtype)
    return run


def _dims(t) -> str:
    return "[" + ",".join(str(d) for d in t.shape) + "]"


@kernel(sparse_matmul.SparseMatMul)
def _sparse_matmul(node):
    ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])

    def run(a, b):
        if a.dim() != 2 or b.dim() != 2:
            raise InvalidArgumentError(None, None, f"Matrix size incompatible: a: "
                                       f"{_dims(a)}, b: {_dims(b)}")
        k1 = a.shape[0] if ta else a.shape[1]
        k2 = b.shape[1] if tb else b.shape[0]
        if k1 != k2:
            raise InvalidArgumentError(None, None, f"Matrix size incompatible: a: "
                                       f"{_dims(a)}, b: {_dims(b)}")
        a = a.float().t() if ta else a.float()
        b = b.float().t() if tb else b.float()
        return torch.mm(a, b)
    return run


@kernel(array_v1_compat.CheckPinned)
def _check_pinned(node):
    def run(t):
        if not torch.cuda.is_available():
            raise FailedPreconditionError(None, None, "to check pinnedness, must be built "
                                          "with `--config=cuda`")
        if t.device.type != "cpu" or not t.is_pinned():
            raise InvalidArgumentError(None, None, "Tensor is not in pinned host memory")
        return t
    return run
