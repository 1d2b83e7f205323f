"""`repeat`, `take`, `skip` and `enumerate`.

`repeat` makes a new iterator of its input per epoch. As TensorFlow's, a finite repeat makes
one more after its last epoch (TF's FiniteIterator; `repeat(1)` is removed by the default
`noop_elimination`), and a repeat right after a shuffle is TF's fused ShuffleAndRepeat (the
default `shuffle_and_repeat_fusion`), which does not: the iterators a shuffle makes take its
seed pairs (shuffling.py), so the orders of later iterations depend on it. A fused repeat
refuses a count of 0 or below -1 when its iterator is made (TF's kernel check).
"""

from __future__ import annotations

import itertools

import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.options import pipeline_options
from ndflow.data.shuffling import ShuffleDataset
from ndflow.data.unary_dataset import UnaryDataset


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class RepeatDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, count=None):
        self._input = input_dataset
        self._count = -1 if count is None else _int(count)
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count < 0 or n == INFINITE:
            return INFINITE
        return UNKNOWN if n == UNKNOWN else n * self._count

    def _plan(self) -> bool:
        """Whether this iterator makes one more input iterator after its last epoch (TF's
        unfused finite repeat), checking a fused repeat's count as TF's kernel does."""
        optimization = pipeline_options(self).experimental_optimization
        defaults = optimization.apply_default_optimizations is not False
        if isinstance(self._input, ShuffleDataset) and (
                optimization.shuffle_and_repeat_fusion or
                (optimization.shuffle_and_repeat_fusion is None and defaults)):
            if self._count == 0 or self._count < -1:  # ShuffleAndRepeatDataset's check
                raise tf_errors.InvalidArgumentError(
                    None, None, "count must be greater than zero or equal to -1.\n\t "
                    "[[{{node ShuffleAndRepeatDataset}}]] [Op:MakeIterator]")
            return False
        if self._count == 1:  # noop_elimination drops repeat(1)
            return optimization.noop_elimination is False or (
                optimization.noop_elimination is None and not defaults)
        return self._count > 0

    def _iter_flat(self):
        return self._epochs(self._plan())

    def _epochs(self, extra: bool):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            produced = False
            for flat in self._input._iter_flat():
                produced = True
                yield flat
            if not produced:  # TF: repeating an empty dataset ends
                return
            epoch += 1
        if extra:
            self._input._make_unread_iterator()

    def _make_unread_iterator(self):
        if self._count:  # TF's repeat(0) makes no input iterator
            self._input._make_unread_iterator()

    def _batches(self, size: int, drop_remainder: bool):
        # whole epochs batch in bulk when each epoch fills whole batches
        n = self._input._cardinality()
        if n <= 0 or n % size or self._input._batches(size, drop_remainder) is None:
            return None
        return self._repeat_bulk(size, drop_remainder, self._plan())

    def _repeat_bulk(self, size, drop_remainder, extra: bool):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            yield from self._input._batches(size, drop_remainder)
            epoch += 1
        if extra:
            self._input._make_unread_iterator()


class _CountDataset(UnaryDataset):
    """A dataset of the elements of `input_dataset` chosen by a `count` (take, skip)."""

    def __init__(self, input_dataset: DatasetV2, count):
        self._input = input_dataset
        self._count = _int(count)
        super().__init__(input_dataset.element_spec)


class TakeDataset(_CountDataset):
    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == UNKNOWN:
            return UNKNOWN
        return self._count if n == INFINITE else min(n, self._count)

    def _iter_flat(self):
        if self._count < 0:
            yield from self._input._iter_flat()
            return
        if self._count:
            yield from itertools.islice(self._input._iter_flat(), self._count)

    def _make_unread_iterator(self):
        if self._count:  # TF's take(0) makes no input iterator
            self._input._make_unread_iterator()


class SkipDataset(_CountDataset):
    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return 0 if self._count < 0 else max(0, n - self._count)

    def _iter_flat(self):
        if self._count < 0:
            for _ in self._input._iter_flat():
                pass
            return
        yield from itertools.islice(self._input._iter_flat(), self._count, None)


class EnumerateDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, start=0):
        self._input = input_dataset
        self._start = _int(start)
        super().__init__((TensorSpec([], dtypes.int64), input_dataset.element_spec))

    def _iter_flat(self):
        for i, flat in enumerate(self._input._iter_flat(), self._start):
            yield (EagerTensor(torch.tensor(i, dtype=torch.int64), dtypes.int64),) + flat


register_op("repeat")(RepeatDataset)
register_op("take")(TakeDataset)
register_op("skip")(SkipDataset)
register_op("enumerate")(EnumerateDataset)
