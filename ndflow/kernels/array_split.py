"""ATen kernels for Split and SplitV: `torch.split` views (values are immutable)."""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import array_split


def _invalid(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _axis(split_dim, x) -> int:
    d, r = int(split_dim), x.dim()
    if not -r <= d < r:
        raise _invalid(f"-input rank(-{r}) <= split_dim < input rank ({r}), but got {d}")
    return d + r if d < 0 else d


def _result(parts, n: int):
    return parts[0] if n == 1 else tuple(parts)


@kernel(array_split.Split)
def _split(node):
    n = node.attrs["num_split"]

    def split(split_dim, x):
        axis = _axis(split_dim, x)
        size = x.shape[axis]
        if size % n:
            raise _invalid("Number of ways to split should evenly divide the split dimension, "
                           f"but got split_dim {axis} (size = {size}) and num_split {n}")
        return _result(torch.split(x, size // n, axis), n)
    return split


def _v_sizes(sizes: list, total: int) -> list:
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise _invalid("There can only be one -1 in the input.")
    known = sum(s for s in sizes if s != -1)
    if unknown:
        if known > total:
            raise _invalid("Determined shape must either match input shape along split_dim "
                           "exactly if fully specified, or be less than the size of the input "
                           f"along split_dim if not fully specified.  Got: {known}")
        sizes = list(sizes)
        sizes[unknown[0]] = total - known
    elif known != total:
        raise _invalid("Determined shape must either match input shape along split_dim exactly "
                       "if fully specified, or be less than the size of the input along "
                       f"split_dim if not fully specified.  Got: {known}")
    for s in sizes:
        if s < 0:
            raise _invalid(f"Split size must be non-negative, got {s}")
    return sizes


@kernel(array_split.SplitV)
def _split_v(node):
    n = node.attrs["num_split"]

    def split_v(x, size_splits, split_dim):
        axis = _axis(split_dim, x)
        sizes = size_splits.tolist()
        if len(sizes) != n:
            raise _invalid(f"size_splits should have num_split ({n}) elements, got "
                           f"{len(sizes)}")
        return _result(torch.split(x, _v_sizes(sizes, x.shape[axis]), axis), n)
    return split_v
