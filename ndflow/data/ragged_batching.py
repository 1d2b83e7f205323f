"""Ragged elements in `tf.data`: the rules for a RaggedTensorSpec leaf in `from_tensor_slices`
and `batch`/`unbatch` (element_batching.py applies them leaf by leaf), `Dataset.ragged_batch`
and `tf.data.experimental.dense_to_ragged_batch`.

A ragged element travels as its components (flat values, then one row-splits vector per
ragged dimension; core/composite_tensor.py), described by a `RaggedTensorSpec`. As in
TensorFlow, a spec of ragged_rank 0 is a dense tensor whose rows may differ in length from
element to element: batching it gives a RaggedTensor of ragged_rank 1, and batching a ragged
element adds one ragged dimension. The work here is on the ATen (or, for strings, NumPy)
values behind the components: offsets added to the splits, values concatenated.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.nest import map_structure
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.dataset import DatasetV2, _op, register_op
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec


def _cat(values: list):
    if isinstance(values[0], torch.Tensor):
        return torch.cat(values)
    return np.concatenate([np.asarray(v, dtype=object) for v in values])


def _splits_value(ints, dtype) -> torch.Tensor:
    return torch.as_tensor(np.asarray(ints, dtype=np.int64), dtype=dtype.torch_dtype)


# -- batching ------------------------------------------------------------------------------------
def batched_spec(spec: RaggedTensorSpec, lead: TensorShape) -> RaggedTensorSpec:
    """A batched ragged leaf: one more ragged dimension in front."""
    return RaggedTensorSpec(lead.concatenate(spec.shape), spec.dtype, spec.ragged_rank + 1,
                            spec.row_splits_dtype)


def merge(comps: list, leaf: RaggedTensorSpec, component: int) -> list:
    """One batched element's components from those of a batch of ragged elements (`comps`:
    for each component, its value in each element)."""
    flat, levels = comps[0], comps[1:]
    if leaf.ragged_rank == 0:
        if any(len(v.shape) == 0 for v in flat):
            raise tf_errors.InvalidArgumentError(None, None, "Cannot batch scalars into a "
                                                 "RaggedTensor.")
        nrows = [int(v.shape[0]) for v in flat]
    else:
        nrows = [int(s.shape[0]) - 1 for s in levels[0]]
    inner = {tuple(v.shape[1:]) for v in flat}
    if len(inner) > 1:
        raise tf_errors.InvalidArgumentError(
            None, None, f"Cannot batch tensors with different inner shapes in component "
            f"{component}: {sorted(inner)}.")
    sd = leaf.row_splits_dtype
    out = [EagerTensor(_cat(flat), leaf.dtype),
           EagerTensor(_splits_value(np.concatenate([[0], np.cumsum(nrows)]), sd), sd)]
    for level in levels:
        parts, offset = [level[0]], level[0][-1]
        for s in level[1:]:
            parts.append(s[1:] + offset)
            offset = offset + s[-1]
        out.append(EagerTensor(torch.cat(parts), sd))
    return out


# -- slicing rows ---------------------------------------------------------------------------------
def _row_of(comps: list, i: int) -> list:
    """The components of row `i` of a ragged value given as host components."""
    flat, levels = comps[0], comps[1:]
    a, b = int(levels[0][i]), int(levels[0][i + 1])
    out_levels = []
    for s in levels[1:]:
        piece = s[a:b + 1]
        out_levels.append(piece - piece[0])
        a, b = int(piece[0]), int(piece[-1])
    return [flat[a:b]] + out_levels


def rows(comps: list, dts: list):
    """(row count, row(i) -> its components) of a ragged value (ragged_rank >= 1) given as
    host components."""
    return int(comps[1].shape[0]) - 1, lambda i: [
        EagerTensor(v, d) for v, d in zip(_row_of(comps, i), dts)]


def unbatched_spec(leaf: RaggedTensorSpec):
    """A ragged leaf without its first dimension (a dense spec once no ragged one is left)."""
    if leaf.ragged_rank == 0:
        return TensorSpec(leaf.shape[1:], leaf.dtype)
    return RaggedTensorSpec(leaf.shape[1:], leaf.dtype, leaf.ragged_rank - 1,
                            leaf.row_splits_dtype)


# -- ragged_batch ---------------------------------------------------------------------------------
def _to_ragged_spec(spec, row_splits_dtype):
    """TensorFlow's rule: a dense spec with unknown dimensions becomes a RaggedTensorSpec
    whose ragged_rank is the last unknown dimension (0: only the rows' length varies)."""
    def one(s):
        if not isinstance(s, TensorSpec) or s.shape.rank is None or \
                s.shape.is_fully_defined():
            return s
        ragged_rank = max(i for i, d in enumerate(s.shape.as_list()) if d is None)
        return RaggedTensorSpec(s.shape, s.dtype, ragged_rank, row_splits_dtype)

    return map_structure(one, spec, expand_composites=False)


class DenseToRaggedDataset(UnaryDataset):
    """The input's elements with the dense parts of unknown shape seen as ragged (their
    values given uniform row splits), ready for `batch`."""

    def __init__(self, input_dataset: DatasetV2, row_splits_dtype):
        self._input = input_dataset
        self._splits_dtype = dtypes.as_dtype(row_splits_dtype)
        self._source_leaves = structure.leaf_sizes(input_dataset.element_spec)
        super().__init__(_to_ragged_spec(input_dataset.element_spec, self._splits_dtype))

    def _iter_flat(self):
        targets = structure.leaves(self._element_spec)
        for flat in self._input._iter_flat():
            out, c = [], 0
            for (leaf, k), target in zip(self._source_leaves, targets):
                if isinstance(target, RaggedTensorSpec) and not isinstance(leaf,
                                                                           RaggedTensorSpec):
                    out += self._uniform(flat[c], target.ragged_rank)
                else:
                    out += flat[c:c + k]
                c += k
            yield tuple(out)

    def _uniform(self, t: EagerTensor, ragged_rank: int) -> list:
        if ragged_rank == 0:
            return [t]
        v, dims = t._value, [int(d) for d in t._value.shape]
        flat = v.reshape([int(np.prod(dims[:ragged_rank + 1]))] + dims[ragged_rank + 1:])
        sd = self._splits_dtype
        splits = [EagerTensor(_splits_value(np.arange(int(np.prod(dims[:j + 1])) + 1) *
                                            dims[j + 1], sd), sd) for j in range(ragged_rank)]
        return [EagerTensor(flat, t.dtype)] + splits


@register_op("ragged_batch")
def ragged_batch(dataset, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64):
    return _op("batch")(DenseToRaggedDataset(dataset, row_splits_dtype), batch_size,
                        drop_remainder)


@tf_export("data.experimental.dense_to_ragged_batch")
def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64):
    """`dataset.apply(dense_to_ragged_batch(n))`: `dataset.ragged_batch(n)` (TF's older
    name)."""
    def apply(dataset):
        return dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)
    return apply

