"""Helpers of the sparse kernels: entry keys (row-major linear positions), and value gathers
that work for ATen tensors and for string values (NumPy object arrays on the host)."""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError


def bad(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def long(x) -> torch.Tensor:
    """An int64 ATen tensor of `x` (host kernels may get NumPy arrays)."""
    if isinstance(x, torch.Tensor):
        return x.long()
    return torch.as_tensor(np.asarray(x, dtype=np.int64))


def dims(shape) -> list[int]:
    return [int(d) for d in long(shape).reshape(-1).tolist()]


def strides(shape_dims: list[int], device=None) -> torch.Tensor:
    """Row-major strides of a dense shape (int64)."""
    out, acc = [], 1
    for d in reversed(shape_dims):
        out.append(acc)
        acc *= max(int(d), 1)
    return torch.tensor(out[::-1], dtype=torch.int64, device=device)


def linear(indices: torch.Tensor, shape_dims: list[int]) -> torch.Tensor:
    """Each entry's row-major position in the dense tensor (its sort key)."""
    if indices.shape[1] == 0:
        return torch.zeros(indices.shape[0], dtype=torch.int64, device=indices.device)
    return (indices * strides(shape_dims, indices.device)).sum(1)


def unravel(lin: torch.Tensor, shape_dims: list[int]) -> torch.Tensor:
    """Indices [N, rank] of row-major positions `lin` in a dense tensor of `shape_dims`."""
    cols = []
    for d in reversed(shape_dims):
        d = max(int(d), 1)
        cols.append(lin % d)
        lin = torch.div(lin, d, rounding_mode="floor")
    return torch.stack(cols[::-1], 1) if cols else torch.zeros(
        (lin.shape[0], 0), dtype=torch.int64, device=lin.device)


def common_keys(*index_sets: torch.Tensor) -> list[torch.Tensor]:
    """Row-major keys of several index sets over a box holding all of them (for matching
    entries of tensors whose dense shape is not an input)."""
    rank = index_sets[0].shape[1]
    every = torch.cat([i.reshape(-1, rank) for i in index_sets], 0)
    if every.numel() == 0:
        return [torch.zeros(i.shape[0], dtype=torch.int64) for i in index_sets]
    lo = every.min(0).values
    box = (every.max(0).values - lo + 1).tolist()
    return [linear(i - lo, box) for i in index_sets]


def take(values, positions: torch.Tensor):
    """values[positions] for ATen or NumPy (string) values."""
    if isinstance(values, np.ndarray):
        return values[positions.cpu().numpy()]
    return values.index_select(0, positions.to(values.device))   # (faster than values[pos])


def cat(parts: list):
    if parts and isinstance(parts[0], np.ndarray):
        return np.concatenate([np.asarray(p, dtype=object).reshape(-1) for p in parts])
    return torch.cat([p.reshape(-1) for p in parts])


def size(values) -> int:
    return int(values.shape[0]) if values.ndim else 1


def check_entries(indices: torch.Tensor, values, shape=None, what: str = "input"):
    """TF's checks that indices is a matrix, values a vector of as many entries and shape a
    vector of the indices' width."""
    if indices.dim() != 2:
        raise bad(f"Input indices should be a matrix but received shape "
                  f"{list(indices.shape)}")
    if values.ndim != 1:
        raise bad(f"Input values should be a vector but received shape {list(values.shape)}")
    if indices.shape[0] != values.shape[0]:
        raise bad(f"Number of elements in indices ({indices.shape[0]}) and values "
                  f"({values.shape[0]}) do not match")
    if shape is not None:
        if shape.dim() != 1:
            raise bad(f"Input shape should be a vector but received shape {list(shape.shape)}")
        if shape.shape[0] != indices.shape[1]:
            raise bad(f"Dimension mismatch: indices has rank {indices.shape[1]} but shape "
                      f"has {shape.shape[0]} dimensions ({what})")


def same_shape(a: list[int], b: list[int]):
    """TF's check that two SparseTensor operands have one dense shape."""
    if len(a) != len(b):
        raise bad(f"Operands do not have the same ranks; got shapes: "
                  f"[{','.join(map(str, a))}] and [{','.join(map(str, b))}]")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            raise bad(f"Operands' shapes do not match: got {x} and {y} for dimension {i}")


def invalid_index(indices: np.ndarray, shape: np.ndarray) -> str | None:
    """TensorFlow's SparseTensor::IndicesValid: the first index out of bounds, out of
    (row-major) order or repeated, as TF words it; None when all are valid."""
    if len(indices) == 0:
        return None
    bad = ((indices < 0) | (indices >= shape)).any(axis=1)
    unordered = np.zeros(len(indices), dtype=bool)
    repeated = np.zeros(len(indices), dtype=bool)
    if len(indices) > 1 and indices.shape[1]:
        diff = indices[1:] - indices[:-1]
        nonzero = diff != 0
        first = nonzero.argmax(axis=1)
        different = nonzero.any(axis=1)
        unordered[1:] = different & (diff[np.arange(len(diff)), first] < 0)
        repeated[1:] = ~different
    elif len(indices) > 1:
        repeated[1:] = True
    wrong = np.nonzero(bad | unordered | repeated)[0]
    if not len(wrong):
        return None
    n = int(wrong[0])
    index = f"indices[{n}] = [{','.join(str(int(v)) for v in indices[n])}]"
    if bad[n]:
        return (f"{index} is out of bounds: need 0 <= index < "
                f"[{','.join(str(int(d)) for d in shape)}]")
    if unordered[n]:
        return (f"{index} is out of order. Many sparse ops require sorted indices.\n"
                "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n")
    return f"{index} is repeated"
