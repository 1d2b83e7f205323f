"""More `tf.data.experimental` transformations: `ignore_errors`, `at`, `pad_to_cardinality`,
`dense_to_sparse_batch` (and `Dataset.sparse_batch`), `rejection_resample` (the Dataset
method's, data/resampling.py) and `enable_debug_mode`, with TensorFlow's semantics and
errors."""

from __future__ import annotations

import logging

import numpy as np
import torch

from ndflow.core import context, dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure, traced_function
from ndflow.data.dataset import UNKNOWN, DatasetV2, register_op
from ndflow.data.mapping import FilterDataset, MapDataset
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec

_log = logging.getLogger("ndflow.data")


# -- ignore_errors -----------------------------------------------------------------------------
def _tolerant(dataset: DatasetV2, on_error):
    """Flat elements of `dataset`, with elements whose map/filter function fails dropped
    (reported to `on_error`). A map or filter runs here element by element, so an error skips
    one element and iteration goes on, as does a dataset with its own
    `_iter_flat_ignoring_errors` (CsvDataset: bad records); an error raised by any other
    dataset ends it."""
    if isinstance(dataset, (MapDataset, FilterDataset)):
        fn, is_map = dataset._fn, isinstance(dataset, MapDataset)
        for i, flat in enumerate(_tolerant(dataset._input, on_error)):
            try:
                out = fn(flat)
            except Exception as e:  # noqa: BLE001 - TF drops the element whatever the error
                on_error(fn.error(e, i))
                continue
            if is_map:
                yield out
            elif bool(out[0]._value):
                yield flat
        return
    own = getattr(dataset, "_iter_flat_ignoring_errors", None)  # a reader that can go on
    if own is not None:
        yield from own(on_error)
        return
    try:
        yield from dataset._iter_flat()
    except tf_errors.OpError as e:
        on_error(e)


class IgnoreErrorsDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, log_warning: bool = False):
        self._input, self._log = input_dataset, bool(log_warning)
        super().__init__(input_dataset.element_spec)

    def _report(self, error):
        if self._log:
            _log.warning("IgnoreErrorsDataset: ignoring error %s", error)

    def _iter_flat(self):
        return _tolerant(self._input, self._report)

    def _cardinality(self):
        return UNKNOWN  # an element count that only running can tell


@tf_export("data.experimental.ignore_errors")
def ignore_errors(log_warning=False):
    """A transformation dropping the elements whose computation raises an error."""
    return lambda dataset: IgnoreErrorsDataset(dataset, log_warning)


register_op("ignore_errors")(IgnoreErrorsDataset)


# -- at ----------------------------------------------------------------------------------------
def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


@tf_export("data.experimental.at", v1=[])
def at(dataset: DatasetV2, index):
    """The element at `index` (TF's GetElementAtIndex: OutOfRangeError outside
    [0, cardinality))."""
    i = _int(index)
    n = dataset._cardinality()
    if i < 0 or (n >= 0 and i >= n):
        raise tf_errors.OutOfRangeError(None, None, f"Index out of range [0, {n}):{i}")
    for k, flat in enumerate(dataset._iter_flat()):
        if k == i:
            return dataset._pack(flat)
    raise tf_errors.OutOfRangeError(None, None, f"Index out of range [0, {k + 1 if i else 0})"
                                    f":{i}")


# -- pad_to_cardinality ------------------------------------------------------------------------
class PadToCardinalityDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, cardinality: int, mask_key: str):
        spec = input_dataset.element_spec
        if not isinstance(spec, dict):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        n = input_dataset._cardinality()
        if n < 0:
            raise ValueError("The dataset passed into `pad_to_cardinality` must have a known "
                             f"cardinalty, but has cardinality {n}")
        if n > cardinality:
            raise ValueError("The dataset passed into `pad_to_cardinality` must have a "
                             "cardinalty less than the target cardinality "
                             f"({cardinality}), but has cardinality {n}")
        for key, s in spec.items():
            if not s.shape.is_fully_defined():
                raise ValueError(f"`pad_to_cardinality` needs fully defined shapes to pad "
                                 f"with: `{key}` has shape {s.shape}.")
        self._input, self._target, self._padded = input_dataset, cardinality, n
        super().__init__({**spec, mask_key: TensorSpec([], dtypes.bool)})

    def _cardinality(self):
        return self._target

    def _iter_flat(self):
        true, false = (EagerTensor(torch.tensor(v), dtypes.bool) for v in (True, False))
        specs = self.element_spec
        mask_at = flatten(specs).index(specs[self._mask_key()])
        for flat in self._input._iter_flat():
            yield flat[:mask_at] + (true,) + flat[mask_at:]
        zeros = [structure.to_eager(np.zeros(s.shape.as_list(), s.dtype.as_numpy_dtype)
                                    if s.dtype is not dtypes.string else
                                    np.full(s.shape.as_list(), b"", object), s.dtype)
                 for s in flatten(specs)]
        zeros[mask_at] = false
        for _ in range(self._target - self._padded):
            yield tuple(zeros)

    def _mask_key(self):
        return next(k for k in self.element_spec if k not in self._input.element_spec)


@tf_export("data.experimental.pad_to_cardinality")
def pad_to_cardinality(cardinality, mask_key="valid"):
    """A transformation padding a dataset of dicts to `cardinality` elements with zeros,
    adding a bool `mask_key` entry (True for the original elements)."""
    return lambda dataset: PadToCardinalityDataset(dataset, _int(cardinality), mask_key)


# -- dense_to_sparse_batch ---------------------------------------------------------------------
class DenseToSparseBatchDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, batch_size: int, row_shape):
        spec = input_dataset.element_spec
        if not isinstance(spec, TensorSpec):
            raise TypeError("`dense_to_sparse_batch` needs a dataset of single tensors, got "
                            f"elements of {spec}.")
        if batch_size <= 0:
            raise tf_errors.InvalidArgumentError(None, None, "Batch size must be greater than "
                                                 f"zero, but got {batch_size}")
        self._input, self._size = input_dataset, batch_size
        self._row_shape = TensorShape(row_shape)
        rank = self._row_shape.rank
        if spec.shape.rank is not None and spec.shape.rank != rank:
            raise ValueError(f"Input element has rank {spec.shape.rank}, which is not the "
                             f"rank of row_shape {self._row_shape} ({rank}).")
        super().__init__(SparseTensorSpec(TensorShape([None]).concatenate(self._row_shape),
                                          spec.dtype))
        self._dense_spec = TensorShape([None]).concatenate(self._row_shape)

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n < 0 else -(-n // self._size)

    def _iter_flat(self):
        source = self._input._iter_flat()
        fixed = self._row_shape.as_list()
        while True:
            rows = []
            for flat in source:
                rows.append(flat[0])
                if len(rows) == self._size:
                    break
            if not rows:
                return
            yield self._sparse(rows, fixed)

    def _sparse(self, rows, fixed):
        dims = [0] * len(fixed)
        indices, values = [], []
        for b, t in enumerate(rows):
            v = structure.to_numpy(t)
            v = np.asarray(v)
            if v.ndim != len(fixed) or any(f is not None and s > f
                                           for s, f in zip(v.shape, fixed)):
                shape = ", ".join(str(s) for s in v.shape)
                row = ", ".join("?" if f is None else str(f) for f in fixed)
                raise tf_errors.DataLossError(None, None, f"Input element had shape ([{shape}])"
                                              f" that is larger than the row shape ([{row}]).")
            dims = [max(d, s) for d, s in zip(dims, v.shape)]
            idx = np.indices(v.shape).reshape(v.ndim, -1).T
            indices.append(np.concatenate([np.full((len(idx), 1), b), idx], axis=1))
            values.append(v.reshape(-1))
        shape = [len(rows)] + [d if f is None else f for d, f in zip(dims, fixed)]
        spec = self.element_spec
        dtype = spec.dtype
        vals = np.concatenate(values)
        return (EagerTensor(torch.from_numpy(np.concatenate(indices).astype(np.int64)),
                            dtypes.int64),
                structure.to_eager(vals.astype(object) if dtype is dtypes.string
                                   else vals.astype(dtype.as_numpy_dtype), dtype),
                EagerTensor(torch.tensor(shape, dtype=torch.int64), dtypes.int64))


@tf_export("data.experimental.dense_to_sparse_batch")
def dense_to_sparse_batch(batch_size, row_shape):
    """A transformation batching tensors of varying shape into `tf.sparse.SparseTensor`s of
    dense shape [batch] + row_shape (None dimensions: the batch's largest)."""
    return lambda dataset: DenseToSparseBatchDataset(dataset, _int(batch_size), row_shape)


register_op("sparse_batch")(DenseToSparseBatchDataset)


# -- rejection_resample (data/resampling.py) ------------------------------------------------
@tf_export("data.experimental.rejection_resample")
def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """A transformation resampling a dataset to `target_dist` over the classes `class_func`
    gives; elements become `(class, element)` pairs."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist,
                                                      seed)


# -- debug mode --------------------------------------------------------------------------------
@tf_export("data.experimental.enable_debug_mode")
def enable_debug_mode():
    """Functions of datasets built from now on run their Python body eagerly on each element
    (breakpoints and prints work; still traced once for the output structure), and parallel
    maps run sequentially."""
    if not context.executing_eagerly():
        raise ValueError("`enable_debug_mode() is only supported in eager mode.")
    traced_function.DEBUG_MODE[0] = True

