"""`shard`, `take_while`, `unique`, `scan` and `get_single_element`: transformations that
keep, stop at or fold over elements (TensorFlow's semantics, cardinalities and errors)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.data import structure
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.traced_function import TracedFunction, traced_predicate
from ndflow.data.unary_dataset import UnaryDataset


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class ShardDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, num_shards, index):
        n, i = _int(num_shards), _int(index)
        if n <= 0:
            raise tf_errors.InvalidArgumentError(
                None, None, "Number of shards must be greater than zero (currently num_shards "
                f"= {n}). [Op:ShardDataset]")
        if not 0 <= i < n:
            raise tf_errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {n - 1} (currently index = {i}). "
                "[Op:ShardDataset]")
        self._input, self._n, self._i = input_dataset, n, i
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        c = self._input._cardinality()
        return c if c < 0 else c // self._n + (1 if c % self._n > self._i else 0)

    def _iter_flat(self):
        for k, flat in enumerate(self._input._iter_flat()):
            if k % self._n == self._i:
                yield flat


class TakeWhileDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, predicate):
        self._input = input_dataset
        self._fn = traced_predicate(predicate, input_dataset.element_spec, "TakeWhileDataset")
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _iter_flat(self):
        for k, flat in enumerate(self._input._iter_flat()):
            try:
                keep = bool(self._fn(flat)[0]._value)
            except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                raise self._fn.error(e, k) from e
            if not keep:
                return
            yield flat


class UniqueDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2):
        spec = input_dataset.element_spec
        if not hasattr(spec, "dtype") or spec.dtype not in (
                dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError("`tf.data.Dataset.unique` does not support type "
                            f"{spec}: only a single tf.int32, tf.int64 or tf.string component.")
        self._input = input_dataset
        super().__init__(spec)

    def _iter_flat(self):
        seen = set()
        for flat in self._input._iter_flat():
            key = structure.to_numpy(flat[0])
            key = key.item() if hasattr(key, "item") else key
            if key not in seen:
                seen.add(key)
                yield flat

    def _cardinality(self):
        return UNKNOWN  # an element count that only running can tell


class ScanDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, initial_state, scan_func):
        self._input = input_dataset
        state = structure.normalize(initial_state)
        self._state_spec = structure.specs_of(state)
        self._initial = tuple(flatten(state))
        fn = TracedFunction(lambda s, e: _call_scan(scan_func, s, e),
                            (self._state_spec, input_dataset.element_spec), "ScanDataset")
        out = fn.output_spec
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("The scan function must return a pair comprising the new state "
                            f"and the output value, got {out}.")
        new_state = flatten(out[0])
        old = flatten(self._state_spec)
        if len(new_state) != len(old) or any(a.dtype is not b.dtype
                                             for a, b in zip(new_state, old)):
            raise TypeError("The element types for the new state must match the initial "
                            f"state. Expected {self._state_spec}; got {out[0]}.")
        self._fn, self._n_state = fn, len(old)
        super().__init__(out[1])

    def _iter_flat(self):
        state = self._initial
        for k, flat in enumerate(self._input._iter_flat()):
            try:
                out = self._fn(state + tuple(flat))
            except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                raise self._fn.error(e, k) from e
            state, value = out[:self._n_state], out[self._n_state:]
            yield value


def _call_scan(scan_func, state, element):
    if type(element) is tuple:
        return scan_func(state, *element)
    return scan_func(state, element)


register_op("shard")(ShardDataset)
register_op("take_while")(TakeWhileDataset)
register_op("unique")(UniqueDataset)
register_op("scan")(ScanDataset)


@register_op("get_single_element")
def get_single_element(dataset: DatasetV2):
    it = dataset._iter_flat()
    first = next(it, None)
    if first is None:
        raise tf_errors.InvalidArgumentError(None, None, "Dataset was empty. "
                                             "[Op:DatasetToSingleElement]")
    if next(it, None) is not None:
        raise tf_errors.InvalidArgumentError(None, None, "Dataset had more than one element. "
                                             "[Op:DatasetToSingleElement]")
    return pack_sequence_as(dataset.element_spec, list(first))
