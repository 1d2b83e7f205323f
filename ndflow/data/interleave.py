"""`interleave` and `flat_map`: `map_func` turns each input element into a dataset; the
outputs cycle through `cycle_length` of them, `block_length` elements from each in turn, as
TensorFlow's InterleaveDataset. `map_func` runs eagerly on the element (it returns a
Dataset object, which ndflow keeps as Python, not as a traced graph value).
"""

from __future__ import annotations

import os

from ndflow.data import graph_datasets
from ndflow.data.dataset import AUTOTUNE, INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.dataset_spec import DatasetSpec
from ndflow.data.sources import python_error
from ndflow.data.traced_function import TracedFunction, call_with_element
from ndflow.data.unary_dataset import UnaryDataset


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class InterleaveDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, map_func, cycle_length=None,
                 block_length=None, num_parallel_calls=None, deterministic=None):
        if not callable(map_func):
            raise TypeError(f"`map_func` must be callable, got {map_func!r}.")
        self._input = input_dataset
        self._func = map_func
        cycle = AUTOTUNE if cycle_length is None else _int(cycle_length)
        self._cycle = max(1, os.cpu_count() or 1) if cycle == AUTOTUNE else cycle
        self._block = 1 if block_length is None else _int(block_length)
        if self._cycle <= 0 or self._block <= 0:
            raise ValueError("cycle_length and block_length must be positive.")
        # An input read from graph tensors cannot be iterated while the graph is built:
        # map_func is then traced (as TensorFlow always does) and returns its dataset as a
        # variant value (graph_datasets.py).
        self._traced = None
        if graph_datasets.graph_tensors(input_dataset):
            self._traced = TracedFunction(map_func, input_dataset.element_spec,
                                          "InterleaveDataset")
            out = self._traced.output_spec
            if not isinstance(out, DatasetSpec):
                raise TypeError("The `map_func` argument must return a `Dataset` object. Got "
                                f"{out}.")
            first = out.element_spec
        else:
            first = self._datasets_spec()
        super().__init__(first)

    def _datasets_spec(self):
        """The element_spec of the datasets map_func returns, from its call on the first
        input element."""
        for flat in self._input._iter_flat():
            return self._apply(flat, 0).element_spec
        # an empty input: any spec will do, nothing is ever produced
        return self._input.element_spec

    def _apply(self, flat, index: int) -> DatasetV2:
        if self._traced is not None:
            try:
                return self._traced(flat)[0]
            except Exception as e:  # noqa: BLE001 - re-raised as TF's error
                raise self._traced.error(e, index) from e
        try:
            out = call_with_element(self._func, self._input._pack(flat))
        except Exception as e:  # noqa: BLE001 - user code: TF's error types
            raise python_error(e, "InterleaveDataset") from e
        if not isinstance(out, DatasetV2):
            raise TypeError("The `map_func` argument must return a `Dataset` object. Got "
                            f"{type(out)}.")
        return out

    def _cardinality(self):
        n = self._input._cardinality()
        return INFINITE if n == INFINITE else (0 if n == 0 else UNKNOWN)

    def _iter_flat(self):
        # TensorFlow's InterleaveDataset cycle: slots open lazily when the cycle reaches
        # them; an exhausted slot closes and the cycle moves on.
        source = enumerate(self._input._iter_flat())
        slots: list = [None] * self._cycle
        open_count, index, block, end_of_input = 0, 0, 0, False
        while not end_of_input or open_count:
            it = slots[index]
            if it is not None:
                try:
                    flat = next(it)
                except StopIteration:
                    slots[index] = None
                    open_count -= 1
                    index, block = (index + 1) % self._cycle, 0
                    continue
                block += 1
                if block == self._block:
                    index, block = (index + 1) % self._cycle, 0
                yield flat
            elif not end_of_input:
                nxt = next(source, None)
                if nxt is None:
                    end_of_input = True
                    continue
                slots[index] = self._apply(nxt[1], nxt[0])._iter_flat()
                open_count += 1
            else:
                index, block = (index + 1) % self._cycle, 0


register_op("interleave")(InterleaveDataset)
