"""`Dataset.window`: elements that are datasets (TensorFlow's WindowDataset).

Each output element has the input's structure with a dataset in place of every component:
`tf.data.Dataset.range(7).window(3, 2)` gives datasets of 0..2, 2..4, 4..6 and 6. A window
starts every `shift` input elements and takes every `stride`-th element up to `size` of them;
the last windows are shorter unless `drop_remainder`. The windows are `WindowComponent`
datasets over the flat tensors already read (they are complete when handed out).
"""

from __future__ import annotations

import collections

from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.data.dataset import DatasetV2, register_op
from ndflow.data.dataset_spec import DatasetSpec
from ndflow.data.unary_dataset import UnaryDataset


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class VariantDataset(DatasetV2):
    """A dataset over elements already in memory (flat tuples): one window component, or
    one group of `group_by_window`. Its repr is TensorFlow's (`<_VariantDataset ...>`)."""

    def __init__(self, flat_elements: list, element_spec):
        self._elements_flat = flat_elements
        super().__init__(element_spec)

    def _cardinality(self):
        return len(self._elements_flat)

    def _iter_flat(self):
        return iter(self._elements_flat)


def window_spec(element_spec):
    """The element_spec of a windowed dataset: a DatasetSpec for each component (a ragged
    component is one dataset of RaggedTensors)."""
    return pack_sequence_as(element_spec, [
        DatasetSpec(s) for s in flatten(element_spec, expand_composites=False)],
        expand_composites=False)


class WindowDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, size, shift=None, stride=1,
                 drop_remainder=False):
        self._input = input_dataset
        self._size = _int(size)
        self._shift = self._size if shift is None else _int(shift)
        self._stride = _int(stride)
        for value, what in ((self._size, "size"), (self._shift, "shift"),
                            (self._stride, "stride")):
            if value <= 0:
                raise tf_errors.InvalidArgumentError(
                    None, None, f"Window {what} must be greater than zero. [Op:WindowDataset]")
        self._drop = bool(_int(drop_remainder))
        # (spec, number of flat parts) of each component: a RaggedTensor travels as several
        self._component_specs = [(s, len(flatten(s))) for s in flatten(
            input_dataset.element_spec, expand_composites=False)]
        super().__init__(window_spec(input_dataset.element_spec))

    def _span(self) -> int:
        return (self._size - 1) * self._stride + 1

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        if self._drop:
            return 0 if n < self._span() else (n - self._span()) // self._shift + 1
        return -(-n // self._shift)

    def _iter_flat(self):
        span, shift, stride = self._span(), self._shift, self._stride
        source = self._input._iter_flat()
        buffer: collections.deque = collections.deque()
        exhausted = False
        while True:
            while not exhausted and len(buffer) < span:
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                else:
                    buffer.append(nxt)
            if not buffer or (self._drop and len(buffer) < span):
                return
            picked = list(buffer)[::stride]
            windows, c = [], 0
            for spec, k in self._component_specs:
                windows.append(VariantDataset([tuple(e[c:c + k]) for e in picked], spec))
                c += k
            yield tuple(windows)
            # the next window starts `shift` elements later (past the buffer: skip input)
            drop = min(shift, len(buffer))
            for _ in range(drop):
                buffer.popleft()
            for _ in range(shift - drop):
                if exhausted or next(source, None) is None:
                    exhausted = True
                    break


register_op("window")(WindowDataset)
