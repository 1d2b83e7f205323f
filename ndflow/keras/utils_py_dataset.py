"""`tf.keras.utils.PyDataset` (alias `Sequence`): Keras 3's indexable dataset of batches,
and the adapter `fit`/`evaluate`/`predict` use for it. With `workers > 1` (or
`use_multiprocessing`) batches are fetched ahead by a thread pool, at most `max_queue_size`
in flight, and yielded in order. ndflow uses threads for `use_multiprocessing=True` too:
`__getitem__` runs in the same process (NumPy and ndflow kernels release the GIL), so a
dataset need not be picklable; a warning says so once."""

from __future__ import annotations

import itertools
import random
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.nest import map_structure
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor

_WARNED_PROCESSES = []


@keras_export("keras.utils.PyDataset", "keras.utils.Sequence")
class PyDataset:
    """Base class of Python datasets `fit`, `evaluate` and `predict` accept: subclass it
    with `__getitem__(index)` returning the batch `index` (`x`, `(x, y)` or
    `(x, y, sample_weight)`) and `__len__` returning the number of batches (or a
    `num_batches` property; None for an endless dataset). `on_epoch_begin` and
    `on_epoch_end` may be overridden too.

    Args:
      workers: the number of parallel workers loading batches.
      use_multiprocessing: whether the workers are processes rather than threads.
      max_queue_size: how many batches are prepared ahead.

    Example:

    >>> class Squares(tf.keras.utils.PyDataset):
    ...     def __len__(self):
    ...         return 2
    ...     def __getitem__(self, index):
    ...         x = np.arange(4.0).reshape(4, 1) + 4 * index
    ...         return x, x ** 2
    >>> len(Squares())
    2
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self):
        warn = False
        for name, default in (("_workers", 1), ("_use_multiprocessing", False),
                              ("_max_queue_size", 10)):
            if not hasattr(self, name):
                setattr(self, name, default)
                warn = True
        if warn:
            warnings.warn("Your `PyDataset` class should call `super().__init__(**kwargs)` in "
                          "its constructor. `**kwargs` can include `workers`, "
                          "`use_multiprocessing`, `max_queue_size`. Do not pass these "
                          "arguments to `fit()`, as they will be ignored.", stacklevel=3)

    @property
    def workers(self):
        self._warn_if_super_not_called()
        return self._workers

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        self._warn_if_super_not_called()
        return self._use_multiprocessing

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        self._warn_if_super_not_called()
        return self._max_queue_size

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        """The batch at `index`: `x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)`."""
        del index
        raise NotImplementedError

    def __iter__(self):
        try:
            count = self.num_batches
        except NotImplementedError:
            count = None
        for index in itertools.count() if count is None else range(count):
            yield self[index]

    @property
    def num_batches(self):
        """The number of batches (None: endless)."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError("You need to implement the `num_batches` property:\n\n"
                                  "@property\ndef num_batches(self):\n  return ...")

    def on_epoch_begin(self):
        """Called at the start of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch."""


class PyDatasetAdapter:
    """Epochs over a PyDataset: indices in order (shuffled for `fit`'s `shuffle=True`, as
    Keras), each batch standardized to a tuple of tensors; `on_epoch_begin`/`on_epoch_end`
    around every pass."""

    def __init__(self, py_dataset: PyDataset, steps=None, shuffle=False, class_weight=None):
        self.py_dataset = py_dataset
        self.shuffle = shuffle is True
        self.class_weight = class_weight
        self.num_batches = py_dataset.num_batches
        if steps:
            self.num_batches = steps if self.num_batches is None else \
                min(steps, self.num_batches)
        workers, processes = py_dataset.workers, py_dataset.use_multiprocessing
        self._threads = workers if workers > 1 or (workers > 0 and processes) else 0
        if processes and not _WARNED_PROCESSES:
            _WARNED_PROCESSES.append(True)
            warnings.warn("ndflow runs PyDataset workers as threads: use_multiprocessing=True "
                          "fetches batches in a thread pool.", stacklevel=4)

    def _standardize(self, batch):
        if isinstance(batch, dict):
            return map_structure(_as_tensor, batch)
        if isinstance(batch, np.ndarray):
            batch = (batch,)
        if isinstance(batch, list):
            batch = tuple(batch)
        if not isinstance(batch, tuple) or len(batch) not in {1, 2, 3}:
            raise ValueError("PyDataset.__getitem__() must return a tuple or a dict. If a "
                             "tuple, it must be ordered either (input,) or (inputs, targets) "
                             "or (inputs, targets, sample_weights). Received: "
                             f"{str(batch)[:100]}... of type {type(batch)}")
        if self.class_weight is not None:
            if len(batch) == 3:
                raise ValueError("You cannot specify `class_weight` and `sample_weight` at "
                                 "the same time.")
            if len(batch) == 2:
                batch = batch + (class_weight_to_sample_weights(batch[1], self.class_weight),)
        batch = map_structure(_as_tensor, batch)
        return batch

    def _indices(self):
        total = self.py_dataset.num_batches
        if total is None:
            return itertools.count() if self.num_batches is None else range(self.num_batches)
        indices = list(range(total))
        if self.shuffle:
            random.shuffle(indices)
        return indices[:self.num_batches]

    def __iter__(self):
        self.py_dataset.on_epoch_begin()
        try:
            if not self._threads:
                for i in self._indices():
                    yield self._standardize(self.py_dataset[i])
                return
            with ThreadPoolExecutor(self._threads, "PyDataset_worker") as pool:
                pending = deque()
                indices = iter(self._indices())
                depth = max(1, int(self.py_dataset.max_queue_size or 1))
                try:
                    for i in itertools.islice(indices, depth):
                        pending.append(pool.submit(self.py_dataset.__getitem__, i))
                    while pending:
                        batch = pending.popleft().result()
                        for i in itertools.islice(indices, 1):
                            pending.append(pool.submit(self.py_dataset.__getitem__, i))
                        yield self._standardize(batch)
                finally:
                    for future in pending:
                        future.cancel()
        finally:
            self.py_dataset.on_epoch_end()


def _as_tensor(value):
    return value if value is None or isinstance(value, Tensor) else convert_to_tensor(value)


def class_weight_to_sample_weights(y, class_weight: dict) -> np.ndarray:
    """Per-sample weights: the weight of each sample's class (argmax of one-hot labels)."""
    y = np.asarray(y.numpy() if isinstance(y, Tensor) else y)
    labels = np.argmax(y, axis=-1) if y.ndim > 1 and y.shape[-1] > 1 else \
        np.round(y.reshape(y.shape[0])).astype(np.int64)
    weights = np.ones(labels.shape[0], np.float32)
    for cls, w in class_weight.items():
        weights[labels == int(cls)] = w
    return weights
