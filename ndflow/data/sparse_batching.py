"""Sparse elements in `tf.data`: the rules for a `SparseTensorSpec` leaf of an element in
`from_tensor_slices`, `batch` and `unbatch` (element_batching.py applies them leaf by leaf).

A sparse leaf travels as its three components (indices [N, rank], values [N], dense_shape
[rank]). As in TensorFlow (which boxes them with SerializeManySparse / DeserializeSparse):

- slicing rows (`from_tensor_slices`, `unbatch`) needs rank >= 2 and indices in canonical
  (row-major) order, in bounds and unique; row i is the entries whose first index is i, with
  that index dropped and dense shape `dense_shape[1:]`;
- batching stacks elements of one rank into a rank+1 SparseTensor: each entry's index gains
  its element's position, and the dense shape is [batch size] + the largest of each dimension
  over the batch.

The work is on the ATen (or, for strings, NumPy object) values behind the components.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.kernels.sparse_common import invalid_index
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec


def batched_spec(spec: SparseTensorSpec, lead: TensorShape) -> SparseTensorSpec:
    return SparseTensorSpec(lead.concatenate(spec.shape), spec.dtype)


def unbatched_spec(spec: SparseTensorSpec) -> SparseTensorSpec:
    if spec.shape.rank == 0:
        raise ValueError("Unbatching a sparse tensor is only supported for rank >= 1. "
                         f"Obtained input: a SparseTensor of {spec}.")
    return SparseTensorSpec(spec.shape[1:] if spec.shape.rank is not None else None,
                            spec.dtype)


def _cat(values: list):
    if isinstance(values[0], torch.Tensor):
        return torch.cat(values)
    return np.concatenate([np.asarray(v, dtype=object) for v in values])


def merge(comps: list, spec: SparseTensorSpec) -> list:
    """One batched element's components from the components of a batch of sparse elements
    (`comps`: [indices of each element], [values of each], [dense_shape of each])."""
    indices, values, shapes = comps
    rank = int(shapes[0].shape[0])
    for i, s in enumerate(shapes[1:], 1):
        if int(s.shape[0]) != rank:
            raise tf_errors.InvalidArgumentError(
                None, None, "Inconsistent shape across SparseTensors: rank prior to "
                f"SparseTensor[{i}] was: {rank} but rank of SparseTensor[{i}] is: "
                f"{int(s.shape[0])} [Op:DeserializeSparse] name: ")
    n = len(indices)
    inner = torch.stack(shapes).amax(dim=0) if rank else torch.zeros(0, dtype=torch.int64)
    batched = torch.cat([torch.full((int(ix.shape[0]), 1), b, dtype=torch.int64)
                         for b, ix in enumerate(indices)])
    out_indices = torch.cat([batched, torch.cat(indices)], dim=1)
    out_shape = torch.cat([torch.tensor([n], dtype=torch.int64), inner])
    return [EagerTensor(out_indices, dtypes.int64), EagerTensor(_cat(values), spec.dtype),
            EagerTensor(out_shape, dtypes.int64)]


def rows(comps: list, dtypes_: list, suffix: str = ""):
    """(row count, row(i) -> its three components) of one sparse value given as host
    components; TF's InvalidArgumentError (text + `suffix`) for rank < 2 or bad indices."""
    indices, values, shape = comps
    rank = int(shape.shape[0])
    if rank < 2:
        raise tf_errors.InvalidArgumentError(
            None, None, f"Rank of input SparseTensor should be > 1, but saw rank: {rank}{suffix}")
    problem = invalid_index(indices.cpu().numpy(), shape.cpu().numpy())
    if problem is not None:
        raise tf_errors.InvalidArgumentError(None, None, problem + suffix)
    n = int(shape[0])
    bounds = torch.searchsorted(indices[:, 0].contiguous(),
                                torch.arange(n + 1, dtype=torch.int64)).tolist()
    inner = shape[1:].clone()

    def row(i: int) -> list:
        a, b = bounds[i], bounds[i + 1]
        return [EagerTensor(indices[a:b, 1:].contiguous(), dtypes_[0]),
                EagerTensor(values[a:b], dtypes_[1]), EagerTensor(inner, dtypes_[2])]

    return n, row
