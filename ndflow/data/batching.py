"""`batch`, `padded_batch` and `unbatch`.

`batch` of a dataset that can slice whole batches itself (`from_tensor_slices`, `range`:
their `_batches`) takes one slice per batch instead of stacking elements.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import element_batching, structure
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.unary_dataset import UnaryDataset


def _positive(value, name: str, op: str) -> int:
    n = int(value.numpy() if hasattr(value, "numpy") else value)
    if n <= 0:
        raise tf_errors.InvalidArgumentError(None, None, f"{name} must be greater than zero. "
                                             f"[Op:{op}]")
    return n


def _batched_cardinality(n: int, size: int, drop_remainder: bool) -> int:
    if n < 0:
        return n
    return n // size if drop_remainder else -(-n // size)


def _batched_spec(spec, size: int, drop_remainder: bool, shapes=None):
    flat = flatten(spec)
    shapes = shapes or [s.shape for s in flat]
    lead = TensorShape([size if drop_remainder else None])
    return pack_sequence_as(spec, [TensorSpec(lead.concatenate(sh), s.dtype)
                                   for s, sh in zip(flat, shapes)])


class BatchDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, batch_size, drop_remainder=False):
        self._input = input_dataset
        self._size = _positive(batch_size, "Batch size", "BatchDatasetV2")
        self._drop = bool(drop_remainder)
        spec = input_dataset.element_spec
        # ragged and sparse parts batch leaf by leaf (element_batching.py)
        self._composite = element_batching.has_composite(spec)
        super().__init__(element_batching.batched_spec(spec, self._size, self._drop)
                         if self._composite else _batched_spec(spec, self._size, self._drop))

    def _cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._size, self._drop)

    def _iter_flat(self):
        bulk = None if self._composite else self._input._batches(self._size, self._drop)
        if bulk is not None:
            yield from bulk
            return
        chunks = None if self._composite else self._input._scalar_chunks()
        if chunks is not None:
            yield from _scalar_batches(chunks, self._size, self._drop, self._flat_specs[0])
            return
        size, batch = self._size, []
        merge = (lambda b: element_batching.batch_flat(b, self._input.element_spec)) \
            if self._composite else (lambda b: structure.batch_flat(b, self._flat_specs))
        for flat in self._input._iter_flat():
            batch.append(flat)
            if len(batch) == size:
                yield merge(batch)
                batch = []
        if batch and not self._drop:
            yield merge(batch)


def _scalar_batches(chunks, size: int, drop_remainder: bool, spec):
    """Batches of lists of plain scalar values (dataset.py `_scalar_chunks`): one object
    array each."""
    def batch(values):
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return (EagerTensor(out, spec.dtype),)

    pending, at = [], 0  # values not batched yet: pending[at:]
    for chunk in chunks:
        pending = pending[at:] + chunk if at < len(pending) else chunk
        at = 0
        while len(pending) - at >= size:
            yield batch(pending[at:at + size])
            at += size
    if at < len(pending) and not drop_remainder:
        yield batch(pending[at:])


class PaddedBatchDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, batch_size, padded_shapes=None,
                 padding_values=None, drop_remainder=False):
        self._input = input_dataset
        self._size = _positive(batch_size, "Batch size", "PaddedBatchDatasetV2")
        self._drop = bool(drop_remainder)
        spec = input_dataset.element_spec
        for leaf in flatten(spec, expand_composites=False):
            if not isinstance(leaf, TensorSpec):  # TF's rule: ragged_batch pads nothing
                raise TypeError("`padded_batch` is only supported for datasets that produce "
                                "tensor elements but type spec of elements in the input "
                                f"dataset is not a subclass of TensorSpec: `{leaf}`.")
        flat = flatten(spec)
        if padded_shapes is None:
            for s in flat:
                if s.shape.rank is None:
                    raise ValueError("You must provide `padded_shapes` argument because "
                                     "component 0 has unknown rank.")
            shapes = [s.shape for s in flat]
        else:
            shapes = [as_shape(p) for p in _up_to(spec, padded_shapes)]
            for s, p in zip(flat, shapes):
                if not _fits(p, s.shape):
                    raise ValueError(f"The padded shape {_tuple(p)} is not compatible with "
                                     f"the shape {_tuple(s.shape)} of the corresponding input "
                                     "component.")
        self._shapes = shapes
        if padding_values is None:
            values = [b"" if s.dtype.name == "string" else 0 for s in flat]
        else:
            values = [v.numpy() if hasattr(v, "numpy") else v
                      for v in _up_to(spec, padding_values)]
        self._values = values
        super().__init__(_batched_spec(spec, self._size, self._drop, shapes))

    def _cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._size, self._drop)

    def _iter_flat(self):
        batch = []
        for flat in self._input._iter_flat():
            batch.append(flat)
            if len(batch) == self._size:
                yield self._pad(batch)
                batch = []
        if batch and not self._drop:
            yield self._pad(batch)

    def _pad(self, batch: list) -> tuple:
        out = []
        for c, (spec, padded, fill) in enumerate(zip(self._flat_specs, self._shapes,
                                                     self._values)):
            values = [e[c]._value for e in batch]
            rank = values[0].ndim if isinstance(values[0], np.ndarray) else values[0].dim()
            for v in values:
                if len(v.shape) != rank:
                    raise tf_errors.InvalidArgumentError(
                        None, None, f"All elements in a batch must have the same rank as the "
                        f"padded shape for component{c}: expected rank {rank} but got "
                        f"element with rank {len(v.shape)}")
            target = [max(v.shape[d] for v in values) if padded.rank is None or
                      padded.as_list()[d] is None else padded.as_list()[d]
                      for d in range(rank)]
            for v in values:
                if any(s > t for s, t in zip(v.shape, target)):
                    raise tf_errors.InvalidArgumentError(
                        None, None, "Attempted to pad to a smaller size than the input "
                        f"element. Component {c}: element shape {list(v.shape)}, padded "
                        f"shape {target}.")
            if isinstance(values[0], torch.Tensor):
                full = torch.full([len(values)] + target, fill, dtype=values[0].dtype)
                for i, v in enumerate(values):
                    full[(i,) + tuple(slice(0, s) for s in v.shape)] = v
            else:
                full = np.empty([len(values)] + target, dtype=object)
                full[...] = fill
                for i, v in enumerate(values):
                    full[(i,) + tuple(slice(0, s) for s in v.shape)] = v
            out.append(EagerTensor(full, spec.dtype))
        return tuple(out)


def _fits(padded: TensorShape, shape: TensorShape) -> bool:
    """TF's check: same rank, and no padded dim smaller than a known input dim."""
    if padded.rank is None or shape.rank is None:
        return True
    return padded.rank == shape.rank and all(
        p is None or d is None or p >= d for p, d in zip(padded.as_list(), shape.as_list()))


def _tuple(shape: TensorShape):
    return "<unknown>" if shape.rank is None else tuple(shape.as_list())


def _up_to(spec, value) -> list:
    """`value` (padded shapes or values) matched to the components of `spec`: one value
    for a whole structure is used for each component."""
    if not isinstance(spec, (tuple, list, dict)):
        return [value]
    if not isinstance(value, (tuple, list, dict)) or (
            isinstance(value, list) and all(isinstance(v, (int, type(None))) for v in value)
            and isinstance(spec, (tuple, list)) and len(spec) != len(value)):
        return [value for _ in flatten(spec)]
    return structure.flatten_up_to(spec, value)


class UnbatchDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2):
        self._input = input_dataset
        flat = flatten(input_dataset.element_spec)
        for s in flat:
            if s.shape.rank == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(pack_sequence_as(input_dataset.element_spec, [
            TensorSpec(s.shape.as_list()[1:] if s.shape.rank is not None else None, s.dtype)
            for s in flat]))

    def _cardinality(self):
        n = self._input._cardinality()
        return INFINITE if n == INFINITE else (0 if n == 0 else UNKNOWN)

    def _iter_flat(self):
        for flat in self._input._iter_flat():
            values = [t._value for t in flat]
            rows = {v.shape[0] for v in values}
            if len(rows) != 1:
                raise tf_errors.InvalidArgumentError(
                    None, None, "Input element must have the same batch size in each "
                    f"component. Component 0 had size {values[0].shape[0]} but component "
                    f"{next(i for i, v in enumerate(values) if v.shape[0] != values[0].shape[0])}"
                    " had a different size.")
            dts = [t.dtype for t in flat]
            for i in range(values[0].shape[0] if values else 0):
                yield tuple(EagerTensor(v[i] if isinstance(v, torch.Tensor) else v[i, ...], d)
                            for v, d in zip(values, dts))


register_op("batch")(BatchDataset)
register_op("padded_batch")(PaddedBatchDataset)
@register_op("unbatch")
def _unbatch(input_dataset: DatasetV2) -> DatasetV2:
    if element_batching.has_composite(input_dataset.element_spec):
        return element_batching.CompositeUnbatchDataset(input_dataset)
    return UnbatchDataset(input_dataset)
