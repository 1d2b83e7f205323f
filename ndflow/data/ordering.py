"""`shuffle`, `repeat`, `take`, `skip` and `enumerate`.

Shuffle keeps TensorFlow's buffer semantics: the buffer fills with the first `buffer_size`
elements, then each output is a uniformly chosen buffer slot, refilled with the next input
element; at the end the buffer drains in random order. Seeds follow TF's rules
(`tf.random.set_seed` and the op seed); the same seeds give the same order in every run,
and `reshuffle_each_iteration=False` the same order in every epoch. The random stream is
ndflow's own (NumPy's PCG64), so orders differ from TensorFlow's for the same seed.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.sources import TensorSliceDataset
from ndflow.ops.random_seed import get_seed


def _int(value) -> int:
    return int(value.numpy() if hasattr(value, "numpy") else value)


class ShuffleDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, buffer_size, seed=None,
                 reshuffle_each_iteration=True):
        self._input = input_dataset
        size = _int(buffer_size)
        if size == UNKNOWN or size == INFINITE:  # TF: the whole input
            size = 2 ** 62
        if size <= 0:
            raise tf_errors.InvalidArgumentError(
                None, None, "buffer_size must be greater than zero or UNKNOWN_CARDINALITY "
                "[Op:ShuffleDatasetV3]")
        self._size = size
        seed1, seed2 = get_seed(None if seed is None else _int(seed))
        if seed1 is None:
            seed1, seed2 = random.SystemRandom().getrandbits(62), 0
        self._seed = (int(seed1), int(seed2))
        self._reshuffle = bool(reshuffle_each_iteration)
        self.epoch = 0   # the next pass's stream (an iterator checkpoint records it)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

    # the per-pass stream number, for iterator checkpoints (dataset.pass_states)
    def _pass_state(self) -> int:
        return self.epoch

    def _set_pass_state(self, epoch: int) -> None:
        self.epoch = epoch

    def _rng(self) -> np.random.Generator:
        epoch, self.epoch = (self.epoch, self.epoch + 1) if self._reshuffle else (0, 0)
        return np.random.Generator(np.random.PCG64([self._seed[0], self._seed[1], epoch]))

    def _iter_flat(self):
        return _buffer_shuffle(self._input._iter_flat(), self._size, self._rng())

    def _batches(self, size: int, drop_remainder: bool):
        """For tensor slices: the same buffer algorithm run on row indices, then one gather
        per batch (instead of moving elements one by one)."""
        src = self._input
        if not isinstance(src, TensorSliceDataset):
            return None
        rng = self._rng()
        if self._size >= src._n:  # the buffer holds everything: a uniform permutation
            order = rng.permutation(src._n)
        else:
            order = np.fromiter(_buffer_shuffle(iter(range(src._n)), self._size, rng),
                                dtype=np.int64, count=src._n)
        return src._slices(size, drop_remainder, order)


def _buffer_shuffle(source, size: int, rng: np.random.Generator):
    """TensorFlow's shuffle buffer: fill with the first `size` items; then each output is a
    uniformly chosen slot, refilled with the next input; at the end drain in random order."""
    buffer: list = []
    randoms = iter(())
    for item in source:
        buffer.append(item)
        if len(buffer) >= size:
            break
    for item in source:
        u = next(randoms, None)
        if u is None:
            randoms = iter(rng.random(1024).tolist())
            u = next(randoms)
        i = int(u * len(buffer))
        yield buffer[i]
        buffer[i] = item
    for i in rng.permutation(len(buffer)).tolist():
        yield buffer[i]


class RepeatDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, count=None):
        self._input = input_dataset
        self._count = -1 if count is None else _int(count)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count < 0 or n == INFINITE:
            return INFINITE
        return UNKNOWN if n == UNKNOWN else n * self._count

    def _iter_flat(self):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            produced = False
            for flat in self._input._iter_flat():
                produced = True
                yield flat
            if not produced:  # TF: repeating an empty dataset ends
                return
            epoch += 1

    def _batches(self, size: int, drop_remainder: bool):
        # whole epochs batch in bulk when each epoch fills whole batches
        n = self._input._cardinality()
        if n <= 0 or n % size or self._input._batches(size, drop_remainder) is None:
            return None
        return self._repeat_bulk(size, drop_remainder)

    def _repeat_bulk(self, size, drop_remainder):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            yield from self._input._batches(size, drop_remainder)
            epoch += 1


class TakeDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, count):
        self._input = input_dataset
        self._count = _int(count)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

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


class SkipDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, count):
        self._input = input_dataset
        self._count = _int(count)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

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


class EnumerateDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, start=0):
        self._input = input_dataset
        self._start = _int(start)
        super().__init__((TensorSpec([], dtypes.int64), input_dataset.element_spec))

    def _inputs(self):
        return [self._input]

    def _cardinality(self):
        return self._input._cardinality()

    def _iter_flat(self):
        for i, flat in enumerate(self._input._iter_flat(), self._start):
            yield (EagerTensor(torch.tensor(i, dtype=torch.int64), dtypes.int64),) + flat


register_op("shuffle")(ShuffleDataset)
register_op("repeat")(RepeatDataset)
register_op("take")(TakeDataset)
register_op("skip")(SkipDataset)
register_op("enumerate")(EnumerateDataset)
