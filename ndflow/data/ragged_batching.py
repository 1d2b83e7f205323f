"""Ragged elements in `tf.data`: `from_tensor_slices` of a RaggedTensor, `batch`/`unbatch`
of ragged elements, `Dataset.ragged_batch` and `tf.data.experimental.dense_to_ragged_batch`.

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
from ndflow.core.nest import flatten, map_structure
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.dataset import DatasetV2, _op, register_op
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec


def has_ragged(structure_or_spec) -> bool:
    """Whether a nest of values or specs holds a RaggedTensor or RaggedTensorSpec."""
    return any(isinstance(x, (RaggedTensor, RaggedTensorSpec))
               for x in flatten(structure_or_spec, expand_composites=False))


def _leaves(spec) -> list:
    """(leaf spec, number of flat components) for each top-level spec."""
    return [(s, len(flatten(s))) for s in flatten(spec, expand_composites=False)]


def _cat(values: list):
    if isinstance(values[0], torch.Tensor):
        return torch.cat(values)
    return np.concatenate([np.asarray(v, dtype=object) for v in values])


def _splits_value(ints, dtype) -> torch.Tensor:
    return torch.as_tensor(np.asarray(ints, dtype=np.int64), dtype=dtype.torch_dtype)


# -- batching ------------------------------------------------------------------------------------
def batched_spec(spec, size: int, drop_remainder: bool):
    """The element_spec of `batch` on elements of `spec` (ragged leaves gain a dimension)."""
    lead = TensorShape([size if drop_remainder else None])

    def one(s):
        if isinstance(s, RaggedTensorSpec):
            return RaggedTensorSpec(lead.concatenate(s.shape), s.dtype, s.ragged_rank + 1,
                                    s.row_splits_dtype)
        if isinstance(s, TensorSpec):
            return TensorSpec(lead.concatenate(s.shape), s.dtype)
        return s

    return map_structure(one, spec, expand_composites=False)


def batch_flat(elements: list, spec) -> tuple:
    """Flat elements -> one flat batched element: dense components stacked, ragged ones
    merged into one more ragged dimension."""
    out, c = [], 0
    for leaf, n in _leaves(spec):
        comps = [[e[c + k]._value for e in elements] for k in range(n)]
        if isinstance(leaf, RaggedTensorSpec):
            out += _merge(comps, leaf, c)
        else:
            out.append(EagerTensor(structure.stack_values(comps[0], leaf.dtype, c), leaf.dtype))
        c += n
    return tuple(out)


def _merge(comps: list, leaf: RaggedTensorSpec, component: int) -> list:
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


def _unbatched(leaf):
    if isinstance(leaf, RaggedTensorSpec):
        if leaf.ragged_rank == 0:
            return TensorSpec(leaf.shape[1:], leaf.dtype)
        return RaggedTensorSpec(leaf.shape[1:], leaf.dtype, leaf.ragged_rank - 1,
                                leaf.row_splits_dtype)
    return TensorSpec(leaf.shape[1:], leaf.dtype)


def _rows(flat: tuple, spec) -> list:
    """The rows of one flat element (every component's first dimension), as flat rows."""
    per_leaf, c, n = [], 0, None
    for leaf, k in _leaves(spec):
        comps = [t._value for t in flat[c:c + k]]
        dts = [t.dtype for t in flat[c:c + k]]
        if isinstance(leaf, RaggedTensorSpec) and leaf.ragged_rank > 0:
            rows = int(comps[1].shape[0]) - 1
            per_leaf.append(lambda i, comps=comps, dts=dts: [
                EagerTensor(v, d) for v, d in zip(_row_of(comps, i), dts)])
        else:
            rows = int(comps[0].shape[0])
            per_leaf.append(lambda i, v=comps[0], d=dts[0]: [EagerTensor(
                v[i] if isinstance(v, torch.Tensor) else v[i, ...], d)])
        if n is not None and rows != n:
            raise tf_errors.InvalidArgumentError(
                None, None, "Input element must have the same batch size in each component "
                f"({n} and {rows}).")
        n = rows
        c += k
    return [tuple(x for get in per_leaf for x in get(i)) for i in range(n or 0)]


class RaggedSliceDataset(DatasetV2):
    """`from_tensor_slices` of a structure holding RaggedTensors: row i of every part."""

    def __init__(self, tensors):
        element = structure.normalize(tensors)
        spec = structure.specs_of(element)
        for leaf in flatten(spec, expand_composites=False):
            if leaf.shape.rank == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        self._rows = _rows(tuple(flatten(element)), spec)
        super().__init__(map_structure(_unbatched, spec, expand_composites=False))

    def _cardinality(self):
        return len(self._rows)

    def _iter_flat(self):
        yield from self._rows


class RaggedUnbatchDataset(DatasetV2):
    """`unbatch` of elements holding ragged parts."""

    def __init__(self, input_dataset: DatasetV2):
        self._input = input_dataset
        spec = input_dataset.element_spec
        for leaf in flatten(spec, expand_composites=False):
            if leaf.shape.rank == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(map_structure(_unbatched, spec, expand_composites=False))

    def _inputs(self):
        return [self._input]

    def _iter_flat(self):
        spec = self._input.element_spec
        for flat in self._input._iter_flat():
            yield from _rows(flat, spec)


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


class DenseToRaggedDataset(DatasetV2):
    """The input's elements with the dense parts of unknown shape seen as ragged (their
    values given uniform row splits), ready for `batch`."""

    def __init__(self, input_dataset: DatasetV2, row_splits_dtype):
        self._input = input_dataset
        self._splits_dtype = dtypes.as_dtype(row_splits_dtype)
        self._source_leaves = _leaves(input_dataset.element_spec)
        super().__init__(_to_ragged_spec(input_dataset.element_spec, self._splits_dtype))

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

    def _iter_flat(self):
        targets = flatten(self._element_spec, expand_composites=False)
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

