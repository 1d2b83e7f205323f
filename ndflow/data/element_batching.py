"""`from_tensor_slices`, `batch` and `unbatch` of elements with composite parts
(`RaggedTensorSpec`, `SparseTensorSpec` leaves), leaf by leaf.

Each leaf of the element_spec (structure.leaves: a composite is one leaf) has its rules: a
dense `TensorSpec` leaf stacks and slices along its first axis; a ragged leaf
(ragged_batching.py) gains or loses a ragged dimension; a sparse leaf (sparse_batching.py)
gains or loses a leading dimension of its dense shape. Elements without composite parts take
the dense paths of batching.py and sources.py, which slice or stack whole components.
"""

from __future__ import annotations

import torch

from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import extension_batching, ragged_batching, sparse_batching, structure
from ndflow.data.dataset import UNKNOWN, DatasetV2
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec

_COMPOSITE = (RaggedTensor, RaggedTensorSpec, SparseTensor, SparseTensorValue,
              SparseTensorSpec)


def has_composite(structure_or_spec) -> bool:
    """Whether a nest of values or specs holds a ragged, sparse or ExtensionType part."""
    return any(isinstance(x, _COMPOSITE) or extension_batching.is_extension(x)
               for x in structure.leaves(structure_or_spec))


# -- batching ------------------------------------------------------------------------------------
def batched_spec(spec, size: int, drop_remainder: bool):
    """The element_spec of `batch` on elements of `spec`."""
    lead = TensorShape([size if drop_remainder else None])

    def one(s):
        if extension_batching.is_extension(s):
            return extension_batching.batched_spec(s, lead.as_list()[0])
        if isinstance(s, SparseTensorSpec):
            return sparse_batching.batched_spec(s, lead)
        if isinstance(s, RaggedTensorSpec):
            return ragged_batching.batched_spec(s, lead)
        if isinstance(s, TensorSpec):
            return TensorSpec(lead.concatenate(s.shape), s.dtype)
        return s

    return structure.map_leaves(one, spec)


def batch_flat(elements: list, spec) -> tuple:
    """Flat elements -> one flat batched element."""
    out, c = [], 0
    for leaf, n in structure.leaf_sizes(spec):
        comps = [[e[c + k]._value for e in elements] for k in range(n)]
        if extension_batching.is_extension(leaf):
            out += extension_batching.merge([e[c:c + n] for e in elements], leaf, None,
                                            batch_flat)
        elif isinstance(leaf, SparseTensorSpec):
            out += sparse_batching.merge(comps, leaf)
        elif isinstance(leaf, RaggedTensorSpec):
            out += ragged_batching.merge(comps, leaf, c)
        else:
            out.append(EagerTensor(structure.stack_values(comps[0], leaf.dtype, c), leaf.dtype))
        c += n
    return tuple(out)


# -- slicing rows ---------------------------------------------------------------------------------
def unbatched_spec(leaf):
    if extension_batching.is_extension(leaf):
        return extension_batching.unbatched_spec(leaf)
    if isinstance(leaf, SparseTensorSpec):
        return sparse_batching.unbatched_spec(leaf)
    if isinstance(leaf, RaggedTensorSpec):
        return ragged_batching.unbatched_spec(leaf)
    return TensorSpec(leaf.shape[1:] if leaf.shape.rank is not None else None, leaf.dtype)


def row_getter(flat: tuple, spec, suffix: str = ""):
    """(row count, row(i) -> flat row i) of one flat element (every leaf's first
    dimension); `suffix` ends the texts of a sparse leaf's errors (the op that raised them in
    TF)."""
    per_leaf, c, n = [], 0, None
    for leaf, k in structure.leaf_sizes(spec):
        comps = [t._value for t in flat[c:c + k]]
        dts = [t.dtype for t in flat[c:c + k]]
        if extension_batching.is_extension(leaf):
            count, get = extension_batching.rows(flat[c:c + k], leaf, row_getter)
        elif isinstance(leaf, SparseTensorSpec):
            count, get = sparse_batching.rows(comps, dts, suffix)
        elif isinstance(leaf, RaggedTensorSpec) and leaf.ragged_rank > 0:
            count, get = ragged_batching.rows(comps, dts)
        else:
            count = int(comps[0].shape[0])
            get = (lambda i, v=comps[0], d=dts[0]: [EagerTensor(
                v[i] if isinstance(v, torch.Tensor) else v[i, ...], d)])
        if n is not None and count != n:
            raise tf_errors.InvalidArgumentError(
                None, None, "Input element must have the same batch size in each component "
                f"({n} and {count}).")
        n = count
        per_leaf.append(get)
        c += k
    return n or 0, lambda i: tuple(x for get in per_leaf for x in get(i))


def _leading_dim(value):
    """A leaf value's static number of rows (a SparseTensor's dense_shape[0])."""
    if extension_batching.is_extension(value):
        return extension_batching.leading_dim(value, _leading_dim)
    shape = structure.sparse_spec_of(value).shape if isinstance(value, SparseTensor) \
        else value.shape
    if shape.rank == 0 and isinstance(value, SparseTensor):
        return None  # unbatched_spec says why it cannot be sliced
    if shape.rank == 0:
        raise ValueError("Unbatching a tensor is only supported for rank >= 1")
    return shape.as_list()[0] if shape.rank is not None else None


def slices_spec(element) -> tuple:
    """(element_spec, static row count or UNKNOWN) of `from_tensor_slices(element)`; TF's
    ValueError when the leaves' known row counts differ or a leaf is a scalar."""
    n = None
    for leaf in structure.leaves(element):
        rows_ = _leading_dim(leaf)
        if n is not None and rows_ is not None and rows_ != n:
            raise ValueError(f"Dimensions {n} and {rows_} are not compatible")
        n = rows_ if n is None else n
    spec = structure.map_leaves(unbatched_spec, structure.specs_of(element))
    return spec, UNKNOWN if n is None else n


class CompositeSliceDataset(DatasetV2):
    """`from_tensor_slices` of a structure holding RaggedTensors or SparseTensors: row i of
    every part."""

    def __init__(self, tensors):
        element = structure.normalize(tensors)
        unbatched, _ = slices_spec(element)
        self._n, self._row = row_getter(tuple(flatten(element)), structure.specs_of(element),
                                        " [Op:SerializeManySparse] name: ")
        super().__init__(unbatched)

    def _cardinality(self):
        return self._n

    def _iter_flat(self):
        for i in range(self._n):
            yield self._row(i)


class CompositeUnbatchDataset(UnaryDataset):
    """`unbatch` of elements holding ragged or sparse parts."""

    def __init__(self, input_dataset: DatasetV2):
        self._input = input_dataset
        spec = input_dataset.element_spec
        for leaf in structure.leaves(spec):
            if not extension_batching.is_extension(leaf) and leaf.shape.rank == 0 and \
                    not isinstance(leaf, SparseTensorSpec):
                raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(structure.map_leaves(unbatched_spec, spec))

    def _iter_flat(self):
        spec = self._input.element_spec
        for flat in self._input._iter_flat():
            n, row = row_getter(flat, spec)
            for i in range(n):
                yield row(i)

    def _cardinality(self):
        return UNKNOWN  # an element count that only running can tell

