"""`tf.keras.preprocessing.sequence`'s legacy tools: `TimeseriesGenerator` (a PyDataset of
(window, target) batches), `make_sampling_table` (Zipf word-sampling probabilities) and
`skipgrams` (word2vec (word, context) couples with negative samples). `skipgrams` draws from
Python's global `random`, and reseeds it with `seed` before shuffling, exactly as Keras does,
so a seed gives Keras' couples."""

from __future__ import annotations

import json
import random

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.keras.utils_py_dataset import PyDataset


@keras_export("keras.preprocessing.sequence.TimeseriesGenerator")
class TimeseriesGenerator(PyDataset):
    """Keras 2's windowed time-series batches (a `PyDataset`, usable with `fit`): for
    rows every `stride` from `start_index + length` to `end_index`, the window
    `data[row - length : row : sampling_rate]` with the target `targets[row]`.

    Args:
      data: an array of time steps (first axis time).
      targets: an array of targets, as long as `data`.
      length: the window's length in steps (before sampling).
      sampling_rate: the step between a window's samples.
      stride: the step between successive windows.
      start_index: the first step used.
      end_index: the last step used (default the end).
      shuffle: whether to take rows in random order.
      reverse: whether each window's steps come in reverse order.
      batch_size: the number of windows per batch.
      **kwargs: PyDataset arguments (workers, use_multiprocessing, max_queue_size).

    Raises:
      ValueError: `data` and `targets` of different lengths, or a `start_index` that
        leaves no window.
    """

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0,
                 end_index=None, shuffle=False, reverse=False, batch_size=128, **kwargs):
        super().__init__(**kwargs)
        if len(data) != len(targets):
            raise ValueError("Data and targets have to be of same length. Data length is "
                             f"{len(data)} while target length is {len(targets)}")
        self.data, self.targets = data, targets
        self.length, self.sampling_rate, self.stride = length, sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index="
                             f"{self.end_index}` is disallowed, as no part of the sequence "
                             "would be left to be used as current step.")

    def __len__(self):
        step = self.batch_size * self.stride
        return (self.end_index - self.start_index + step) // step

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride,
                                        self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def get_config(self):
        """The generator's settings with data and targets as JSON strings."""
        def as_json(value, what):
            value = value.tolist() if isinstance(value, np.ndarray) else value
            try:
                return json.dumps(value)
            except TypeError as e:
                raise TypeError(f"{what} not JSON Serializable: {value}") from e
        return {"data": as_json(self.data, "Data"), "targets": as_json(self.targets, "Targets"),
                "length": self.length, "sampling_rate": self.sampling_rate,
                "stride": self.stride, "start_index": self.start_index,
                "end_index": self.end_index, "shuffle": self.shuffle, "reverse": self.reverse,
                "batch_size": self.batch_size}

    def to_json(self, **kwargs):
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


@keras_export("keras.preprocessing.sequence.make_sampling_table")
def make_sampling_table(size, sampling_factor=1e-05):
    """A word2vec-style sampling table: for word ranks 0..size-1 (by frequency), the
    probability of keeping the word, estimated with Zipf's law, so frequent words are
    subsampled (for `skipgrams`' `sampling_table`).

    Args:
      size: the vocabulary size.
      sampling_factor: word2vec's sampling factor (smaller keeps fewer frequent words).

    Returns:
      A NumPy array of `size` probabilities.
    """
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


@keras_export("keras.preprocessing.sequence.skipgrams")
def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """Skip-gram training pairs from a sequence of word indices (word2vec).

    Each word is paired with its neighbours within `window_size` (label 1), plus
    `negative_samples` times as many random words (label 0). Index 0 is skipped as
    padding.

    Args:
      sequence: a list of word indices.
      vocabulary_size: the vocabulary size (random words are drawn from [1, size)).
      window_size: how far a context word may be.
      negative_samples: the ratio of negative to positive pairs.
      shuffle: whether to shuffle the pairs.
      categorical: whether labels are one-hot pairs ([0, 1]/[1, 0]) rather than ints.
      sampling_table: optional per-rank keep probabilities (`make_sampling_table`).
      seed: the shuffling seed.

    Returns:
      A tuple (couples, labels): a list of [word, context] pairs and their labels.
    """
    couples, labels = [], []
    positive = [0, 1] if categorical else 1
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append(positive)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)]
                    for i in range(count)]
        labels += [[1, 0] if categorical else 0 for _ in range(count)]
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
