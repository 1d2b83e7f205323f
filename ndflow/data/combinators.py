"""Datasets made from other datasets or from nothing: `choose_from_datasets`,
`sample_from_datasets` (seeded; ndflow's own random stream), `counter`, `random` and
`list_files`."""

from __future__ import annotations

import glob
import itertools
import random as py_random

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.sources import TensorSliceDataset
from ndflow.data.text_line import file_names
from ndflow.ops.random_seed import get_seed


def _common_spec(datasets: list):
    first = datasets[0].element_spec
    for d in datasets[1:]:
        other = d.element_spec
        same = len(flatten(first)) == len(flatten(other)) and all(
            a.dtype is b.dtype for a, b in zip(flatten(first), flatten(other)))
        if not same:
            raise TypeError("Invalid `datasets`. `datasets` must have compatible element "
                            f"specs.\n Dataset 0 element_spec={first}.\nDataset element_spec="
                            f"{other}.")
    return first


def _seeds(seed) -> tuple:
    s1, s2 = get_seed(None if seed is None else int(seed))
    if s1 is None:
        return py_random.SystemRandom().getrandbits(62), 0
    return int(s1), int(s2)


class ChooseFromDatasets(DatasetV2):
    def __init__(self, datasets, choice_dataset: DatasetV2, stop_on_empty_dataset=True):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        spec = choice_dataset.element_spec
        if not (hasattr(spec, "dtype") and spec.dtype is dtypes.int64 and spec.shape.rank == 0):
            raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be "
                            f"scalar of `tf.int64` dtype, but got {spec}.")
        self._datasets, self._choice = datasets, choice_dataset
        self._stop = bool(stop_on_empty_dataset)
        super().__init__(_common_spec(datasets))

    def _inputs(self):
        return self._datasets + [self._choice]

    def _iter_flat(self):
        its = [d._iter_flat() for d in self._datasets]
        done = [False] * len(its)
        for flat in self._choice._iter_flat():
            k = int(flat[0]._value)
            if not 0 <= k < len(its):
                raise tf_errors.InvalidArgumentError(
                    None, None, f"Selector index out of range: {k} >= {len(its)}")
            if done[k]:
                continue
            element = next(its[k], None)
            if element is None:
                if self._stop:
                    return
                done[k] = True
                if all(done):
                    return
                continue
            yield element


class SampleFromDatasets(DatasetV2):
    def __init__(self, datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                 rerandomize_each_iteration=None):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        n = len(datasets)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(
            weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError("Invalid `weights`. The shape of `weights` should be compatible "
                             f"with `[len(datasets)]` but is {list(w.shape)}.")
        self._datasets, self._weights = datasets, w
        self._seed = _seeds(seed)
        self._stop = bool(stop_on_empty_dataset)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._epochs = itertools.count()
        super().__init__(_common_spec(datasets))

    def _inputs(self):
        return self._datasets

    def _cardinality(self):
        cards = [d._cardinality() for d in self._datasets]
        return INFINITE if all(c == INFINITE for c in cards) else UNKNOWN

    def _iter_flat(self):
        epoch = next(self._epochs) if self._rerandomize else 0
        rng = np.random.Generator(np.random.PCG64([*self._seed, epoch]))
        its = [d._iter_flat() for d in self._datasets]
        weights = self._weights.copy()
        while weights.sum() > 0:
            k = int(rng.choice(len(its), p=weights / weights.sum()))
            element = next(its[k], None)
            if element is None:
                if self._stop:
                    return
                weights[k] = 0.0
                continue
            yield element


class CounterDataset(DatasetV2):
    def __init__(self, start=0, step=1, dtype=dtypes.int64):
        self._start, self._step = int(start), int(step)
        self._dtype = dtypes.as_dtype(dtype)
        super().__init__(TensorSpec([], self._dtype))

    def _cardinality(self):
        return INFINITE

    def _iter_flat(self):
        td = self._dtype.torch_dtype
        for v in itertools.count(self._start, self._step):
            yield (EagerTensor(torch.tensor(v, dtype=td), self._dtype),)


class RandomDataset(DatasetV2):
    def __init__(self, seed=None, rerandomize_each_iteration=None):
        self._seed = _seeds(seed)
        self._rerandomize = bool(rerandomize_each_iteration)
        self._epochs = itertools.count()
        super().__init__(TensorSpec([], dtypes.int64))

    def _cardinality(self):
        return INFINITE

    def _iter_flat(self):
        epoch = next(self._epochs) if self._rerandomize else 0
        rng = np.random.Generator(np.random.PCG64([*self._seed, epoch]))
        while True:
            for v in rng.integers(-2 ** 63, 2 ** 63 - 1, size=256, dtype=np.int64).tolist():
                yield (EagerTensor(torch.tensor(v, dtype=torch.int64), dtypes.int64),)


register_op("choose_from_datasets")(ChooseFromDatasets)
register_op("sample_from_datasets")(SampleFromDatasets)
register_op("counter")(CounterDataset)
register_op("random")(RandomDataset)


@register_op("list_files")
def list_files(file_pattern, shuffle=None, seed=None):
    """The files matching the pattern(s), sorted then shuffled unless `shuffle=False`; no
    match is InvalidArgumentError as in TensorFlow."""
    patterns = file_names(file_pattern)
    matches = sorted({p for pattern in patterns for p in glob.glob(pattern)})
    if not matches:
        raise tf_errors.InvalidArgumentError(
            None, None, f"Expected 'file_pattern' argument to match at least one file, but no "
            f"files matched: {patterns}")
    ds = TensorSliceDataset(np.array([m.encode() for m in matches], dtype=object))
    return ds.shuffle(len(matches), seed=seed) if shuffle is None or shuffle else ds
