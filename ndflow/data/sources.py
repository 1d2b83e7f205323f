"""Source datasets: `from_tensor_slices`, `from_tensors`, `range`, `from_generator`, and the
combinators `zip` and `concatenate`.

`from_tensor_slices` and `range` also produce whole batches in one slice (`_batches`), which
`batch` uses instead of stacking elements one by one.
"""

from __future__ import annotations

import traceback

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op


def _row(value, i):
    return value[i] if isinstance(value, torch.Tensor) else value[i, ...]


class TensorSliceDataset(DatasetV2):
    def __init__(self, tensors):
        element = structure.normalize(tensors)
        flat = flatten(element)
        for t in flat:
            if t.shape.rank == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        n = None
        for t in flat:
            rows = t.shape.as_list()[0]
            if n is not None and rows != n:
                raise ValueError(f"Dimensions {n} and {rows} are not compatible")
            n = rows
        self._values = [t._value for t in flat]
        self._dtypes = [t.dtype for t in flat]
        self._n = n or 0
        super().__init__(pack_sequence_as(element, [
            TensorSpec(t.shape.as_list()[1:], t.dtype) for t in flat]))

    def _cardinality(self):
        return self._n

    def _iter_flat(self):
        values, dts = self._values, self._dtypes
        for i in range(self._n):
            yield tuple(EagerTensor(_row(v, i), d) for v, d in zip(values, dts))

    def _batches(self, size: int, drop_remainder: bool):
        return self._slices(size, drop_remainder, None)

    def _slices(self, size: int, drop_remainder: bool, order):
        """Batches of rows in order, or of the rows `order` (a permutation) lists."""
        values, dts, n = self._values, self._dtypes, self._n
        stop = n - n % size if drop_remainder else n
        for start in range(0, stop, size):
            if order is None:
                yield tuple(EagerTensor(v[start:start + size], d) for v, d in zip(values, dts))
            else:
                rows = order[start:start + size]
                index = torch.from_numpy(rows)
                yield tuple(EagerTensor(torch.index_select(v, 0, index) if isinstance(
                    v, torch.Tensor) else v[rows], d) for v, d in zip(values, dts))


class TensorDataset(DatasetV2):
    def __init__(self, tensors):
        element = structure.normalize(tensors)
        self._flat = tuple(flatten(element))
        super().__init__(structure.specs_of(element))

    def _cardinality(self):
        return 1

    def _iter_flat(self):
        yield self._flat


class RangeDataset(DatasetV2):
    def __init__(self, *args, output_type=dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid `args`. The length of `args` should be between 1 and 3 "
                             f"but was {len(args)}.")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else \
            (args[0], args[1], args[2] if len(args) == 3 else 1)
        self._start, self._stop, self._step = (int(_scalar(a)) for a in (start, stop, step))
        if self._step == 0:
            raise tf_errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self._dtype = dtypes.as_dtype(output_type)
        super().__init__(TensorSpec([], self._dtype))

    def _cardinality(self):
        return len(range(self._start, self._stop, self._step))

    def _iter_flat(self):
        td, d = self._dtype.torch_dtype, self._dtype
        for i in range(self._start, self._stop, self._step):
            yield (EagerTensor(torch.tensor(i, dtype=td), d),)

    def _batches(self, size: int, drop_remainder: bool):
        return self._slices(size, drop_remainder)

    def _slices(self, size: int, drop_remainder: bool):
        values = torch.arange(self._start, self._stop, self._step, dtype=self._dtype.torch_dtype)
        n = values.shape[0]
        stop = n - n % size if drop_remainder else n
        for start in range(0, stop, size):
            yield (EagerTensor(values[start:start + size], self._dtype),)


def _scalar(x):
    return x.numpy() if hasattr(x, "numpy") else x


_PY_ERRORS = ((ValueError, tf_errors.InvalidArgumentError),
              (TypeError, tf_errors.InvalidArgumentError),
              (StopIteration, tf_errors.OutOfRangeError),
              (IndexError, tf_errors.OutOfRangeError),
              (MemoryError, tf_errors.ResourceExhaustedError),
              (NotImplementedError, tf_errors.UnimplementedError))


def python_error(e: Exception, where: str):
    """A Python exception from user code as TensorFlow's py_func errors map it."""
    if isinstance(e, tf_errors.OpError):
        return e
    cls = next((c for py, c in _PY_ERRORS if isinstance(e, py)), tf_errors.UnknownError)
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return cls(None, None, f"{type(e).__name__}: {e}\n{text}\n\t [[{{{{node {where}}}}}]]")


class GeneratorDataset(DatasetV2):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None:
                raise TypeError("The `output_types` argument can not be used together with "
                                "the `output_signature` argument.")
            if output_shapes is not None:
                raise TypeError("The `output_shapes` argument can not be used together with "
                                "the `output_signature` argument.")
            structure.check_spec(output_signature, "`output_signature`")
            spec = output_signature
        else:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either "
                                "the `output_signature` argument or the `output_types` "
                                "argument.")
            types = _map_lists(output_types, dtypes.as_dtype)
            if output_shapes is None:
                spec = _map_lists(types, lambda d: TensorSpec(None, d))
            else:
                flat_types = flatten(types)
                shapes = _shapes_like(types, output_shapes)
                spec = pack_sequence_as(types, [TensorSpec(s, d) for d, s in
                                                zip(flat_types, shapes)])
        self._generator = generator
        self._args = tuple(np.asarray(a.numpy() if hasattr(a, "numpy") else a)
                           for a in (args or ()))
        super().__init__(spec)

    def __repr__(self):
        # TF builds from_generator as a flat_map over a range of generator ids
        return f"<_FlatMapDataset element_spec={self._element_spec}>"

    def _iter_flat(self):
        try:
            it = iter(self._generator(*self._args))
        except Exception as e:  # noqa: BLE001 - user code: TF's error types
            raise python_error(e, "PyFunc") from e
        specs = self._flat_specs
        while True:
            try:
                value = next(it)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - user code: TF's error types
                raise python_error(e, "PyFunc") from e
            try:
                flat = structure.flatten_up_to(self._element_spec, value)
            except structure.SparseMismatch as e:
                raise tf_errors.InvalidArgumentError(
                    None, None, f"TypeError: `generator` yielded an element of {e.got} where "
                    f"an element of {e.expected} was expected.") from None
            except (TypeError, ValueError, KeyError):
                raise tf_errors.InvalidArgumentError(
                    None, None, "TypeError: `generator` yielded an element that did not match "
                    f"the expected structure. The expected structure was {self._element_spec}"
                    f", but the yielded element was {value}.") from None
            yield _generator_element(flat, specs)


def _generator_element(flat: list, specs) -> tuple:
    out = []
    for v, spec in zip(flat, specs):
        try:
            t = structure.to_eager(v, spec.dtype)
        except (TypeError, ValueError):
            raise tf_errors.InvalidArgumentError(
                None, None, "TypeError: `generator` yielded an element that could not be "
                f"converted to the expected type. The expected type was {spec.dtype.name}, "
                f"but the yielded element was {v}.") from None
        if not spec.shape.is_compatible_with(t.shape):
            raise tf_errors.InvalidArgumentError(
                None, None, "TypeError: `generator` yielded an element of shape "
                f"{tuple(t.shape.as_list())} where an element of shape "
                f"{_shape_text(spec.shape)} was expected.")
        out.append(t)
    return tuple(out)


def _shape_text(shape: TensorShape) -> str:
    return "<unknown>" if shape.rank is None else str(tuple(shape.as_list()))


def _map_lists(structure_, fn):
    if isinstance(structure_, (list, tuple)) and not hasattr(structure_, "_fields"):
        return tuple(_map_lists(s, fn) for s in structure_)
    if isinstance(structure_, dict):
        return {k: _map_lists(v, fn) for k, v in structure_.items()}
    return fn(structure_)


def _shapes_like(types, shapes) -> list:
    """output_shapes for each component of output_types (a shape is a list of dims)."""
    if not isinstance(types, (tuple, dict)):
        return [TensorShape(shapes)]
    if isinstance(types, dict):
        return [s for k in sorted(types) for s in _shapes_like(types[k], shapes[k])]
    return [s for t, sh in zip(types, shapes) for s in _shapes_like(t, sh)]


class ZipDataset(DatasetV2):
    def __init__(self, datasets):
        for d in flatten(datasets):
            if not isinstance(d, DatasetV2):
                raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                                "structures of `tf.data.Dataset` objects but encountered "
                                f"object of type {type(d)}.")
        self._datasets = datasets
        self._flat_datasets = flatten(datasets)
        super().__init__(pack_sequence_as(datasets, [d.element_spec
                                                     for d in self._flat_datasets]))

    def _inputs(self):
        return self._flat_datasets

    def _cardinality(self):
        cards = [d._cardinality() for d in self._flat_datasets]
        finite = [c for c in cards if c >= 0]
        if finite:
            return min(finite)
        return UNKNOWN if UNKNOWN in cards else INFINITE

    def _iter_flat(self):
        its = [d._iter_flat() for d in self._flat_datasets]
        while True:
            parts = []
            for it in its:
                try:
                    parts.extend(next(it))
                except StopIteration:
                    return
            yield tuple(parts)


class ConcatenateDataset(DatasetV2):
    def __init__(self, first: DatasetV2, second: DatasetV2):
        self._first, self._second = first, second
        super().__init__(structure.common_spec(first.element_spec, second.element_spec))

    def _inputs(self):
        return [self._first, self._second]

    def _cardinality(self):
        a, b = self._first._cardinality(), self._second._cardinality()
        if a == INFINITE or b == INFINITE:
            return INFINITE
        if a == UNKNOWN or b == UNKNOWN:
            return UNKNOWN
        return a + b

    def _iter_flat(self):
        yield from self._first._iter_flat()
        yield from self._second._iter_flat()

    def _make_unread_iterator(self):
        self._first._make_unread_iterator()  # TF makes the second's when the first ends


register_op("from_tensor_slices")(TensorSliceDataset)
register_op("from_tensors")(TensorDataset)
register_op("range")(RangeDataset)
register_op("from_generator")(GeneratorDataset)
register_op("concatenate")(ConcatenateDataset)


@register_op("zip")
def zip_datasets(*args, datasets=None):
    if datasets is not None and args:
        raise TypeError("Both `*args` and `datasets` cannot be set.")
    if datasets is None:
        if not args:
            raise TypeError("Must pass at least one dataset to `zip`.")
        datasets = args[0] if len(args) == 1 else tuple(args)
    return ZipDataset(datasets)
