"""Datasets made from other datasets or from nothing: `choose_from_datasets`,
`sample_from_datasets` and `random` (seeded, TensorFlow's streams), `counter` and
`list_files`."""

from __future__ import annotations

import glob
import itertools

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.nest import flatten
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import shuffle_buffer
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.sources import TensorSliceDataset
from ndflow.data.text_line import file_names
from ndflow.kernels import multinomial, philox
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


def _logits(weights):
    """float32/float64 [1, n] log-weights (TF's `logits`) of a list, array or eager tensor of
    weights (computed here, so that a pipeline built in a tf.function has them too)."""
    if isinstance(weights, EagerTensor):
        w = weights.numpy()
    else:
        w = np.asarray(weights)
        if not isinstance(weights, np.ndarray) and all(type(v) in (float, int)
                                                       for v in weights):
            w = w.astype(np.float32 if w.dtype.kind == "f" else np.int32)  # TF's defaults
    dtype = dtypes.as_dtype(w.dtype)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or "
                        f"`tf.float64` but is {dtype}.")
    return torch.log(torch.from_numpy(np.ascontiguousarray(w)).reshape(1, -1))


_PULLED = object()  # an input's first element has been handed out
_BULK_DRAWS = 256  # selections computed at once from constant weights


class SampleFromDatasets(DatasetV2):
    """TF's DirectedInterleave of `datasets` driven by its selector: the class drawn by
    stateless_multinomial(logits, 1, seed) from each pair of a `Dataset.random` stream (with
    `weights` a dataset, the logits of its next element); a selected input that has ended
    draws again (or ends the whole with `stop_on_empty_dataset`). Seeded, TF's exact
    elements."""

    def __init__(self, datasets, logits, seed, stop_on_empty_dataset,
                 rerandomize_each_iteration):
        self._datasets = list(datasets)
        self._logits = logits  # torch [1, n] or a DatasetV2 of [n] weights
        self._random = RandomDataset(seed, rerandomize_each_iteration)
        self._stop = bool(stop_on_empty_dataset)
        super().__init__(_common_spec(self._datasets))

    def _inputs(self):
        return self._datasets + ([self._logits] if isinstance(self._logits, DatasetV2)
                                 else [])

    def _cardinality(self):
        cards = [d._cardinality() for d in self._datasets]
        return INFINITE if all(c == INFINITE for c in cards) else UNKNOWN

    def _selector(self):
        stream = self._random._stream()
        if not isinstance(self._logits, DatasetV2):  # draws in bulk
            row = self._logits.to(torch.float64).numpy()[0]
            while True:
                seeds = stream.take(2 * _BULK_DRAWS)
                u = philox.first_doubles_of_seeds(seeds[0::2], seeds[1::2])
                yield from multinomial.classes_of_uniforms(self._logits, row, u).tolist()
        words = stream.words()
        for flat in self._logits._iter_flat():
            # TF's log(element): the weights of an element's components, in a row
            logits = torch.log(torch.cat([t._value.reshape(-1) for t in flat])[None])
            key, counter = philox.key_counter_from_seed(next(words), next(words))
            yield int(multinomial.draw(logits, 1, key, counter)[0, 0])

    def _iter_flat(self):
        selector = self._selector()
        its = [d._iter_flat() for d in self._datasets]
        # TF makes every input's iterator (where a shuffle takes its seeds) before the first
        # selection, in order; an ndflow iterator starts on its first pull: pull each once now
        heads = [next(it, None) for it in its]
        active = len(its)
        for k in selector:
            if not 0 <= k < len(its):
                raise tf_errors.InvalidArgumentError(
                    None, None, f"Selector index out of range: {k} >= {len(its)}")
            if its[k] is None:
                continue
            if heads[k] is not _PULLED:
                element, heads[k] = heads[k], _PULLED
            else:
                element = next(its[k], None)
            if element is not None:
                yield element
                continue
            if self._stop:
                return
            its[k], active = None, active - 1
            if not active:
                return


@register_op("sample_from_datasets")
def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """TF's sample_from_datasets: list weights drop the datasets they weigh 0, one dataset
    left is returned as it is."""
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    if isinstance(weights, DatasetV2):
        logits = weights
    else:
        if weights is None:
            logits = torch.ones((1, len(datasets)), dtype=torch.float32)
        else:
            if isinstance(weights, EagerTensor):
                if not weights.shape.is_compatible_with([len(datasets)]):
                    raise ValueError("Invalid `weights`. The shape of `weights` should be "
                                     "compatible with `[len(datasets)]` but is "
                                     f"{weights.shape}.")
            else:
                if len(datasets) != len(weights):
                    raise ValueError("Invalid `weights`. `weights` should have the same "
                                     f"length as `datasets` but got `len(weights)="
                                     f"{len(weights)}` vs. `len(datasets)={len(datasets)}`.")
                kept = [(d, w) for d, w in zip(datasets, weights) if w > 0]
                datasets, weights = ([list(t) for t in zip(*kept)] if kept else
                                     ([datasets[0].take(0)], [1.0]))
            logits = _logits(weights)
        if len(datasets) == 1:
            return datasets[0]
    return SampleFromDatasets(datasets, logits, seed, stop_on_empty_dataset,
                              rerandomize_each_iteration)


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
    """TF's RandomDataset: the 32-bit words of PhiloxRandom(seed, seed2) as int64, the seeds
    from a seed generator (new ones each iteration with `rerandomize_each_iteration`), as
    `shuffle`'s (data/shuffle_buffer.py)."""

    def __init__(self, seed=None, rerandomize_each_iteration=None):
        seed1, seed2 = get_seed(None if seed is None else int(seed))
        self._generator = shuffle_buffer.SeedGenerator(seed1 or 0, seed2 or 0,
                                                       bool(rerandomize_each_iteration))
        super().__init__(TensorSpec([], dtypes.int64))

    def _cardinality(self):
        return INFINITE

    def _stream(self) -> shuffle_buffer.WordStream:
        return shuffle_buffer.WordStream(*self._generator.next_seeds())

    def _iter_flat(self):
        for v in self._stream().words():
            yield (EagerTensor(torch.tensor(v, dtype=torch.int64), dtypes.int64),)


register_op("choose_from_datasets")(ChooseFromDatasets)
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
