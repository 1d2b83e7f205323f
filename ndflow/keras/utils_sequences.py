"""Keras 3's sequence helpers: `pad_sequences` (NumPy, Keras' errors),
`timeseries_dataset_from_array` (windows gathered from the data in a tf.data pipeline, the
start positions shuffled by `np.random.RandomState(seed)` as Keras) and `split_dataset`
(samples listed, shuffled by Python's `random` seeded as Keras, re-sliced)."""

from __future__ import annotations

import random

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.data.batching import BatchDataset
from ndflow.data.dataset import DatasetV2
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_


@keras_export("keras.utils.pad_sequences", "keras.preprocessing.sequence.pad_sequences")
def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Pads (and truncates) a list of variable-length sequences to one array.

    Args:
      sequences: a list of sequences (lists or arrays, optionally of equal-shaped
        elements).
      maxlen: the output length (default the longest sequence's).
      dtype: the array's dtype (default int32; strings are allowed).
      padding: "pre" (pad at the start, the default) or "post".
      truncating: "pre" (drop the start of longer sequences, the default) or "post".
      value: the padding value.

    Returns:
      A NumPy array of shape (len(sequences), maxlen, ...).

    Raises:
      ValueError: `sequences` is not iterable, or a bad `padding`/`truncating`.

    Example:

    >>> tf.keras.utils.pad_sequences([[1, 2], [3]], maxlen=3)
    array([[0, 1, 2],
           [0, 0, 3]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape = [], ()
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise ValueError("`sequences` must be a list of iterables. Found non-iterable: "
                             f"{x}") from e
        if not sample_shape and len(x):
            sample_shape = np.asarray(x).shape[1:]
    if maxlen is None:
        maxlen = np.max(lengths)
    is_str = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                         f"{type(value)}\nYou should set `dtype=object` for variable length "
                         "strings.")
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for idx, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {trunc.shape[1:]} of sequence at position {idx} "
                             f"is different from expected shape {sample_shape}")
        if padding == "post":
            out[idx, :len(trunc)] = trunc
        elif padding == "pre":
            out[idx, -len(trunc):] = trunc
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def _check_timeseries_args(n, sequence_stride, sampling_rate, start_index, end_index):
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: "
                             f"start_index={start_index}")
        if start_index >= n:
            raise ValueError("`start_index` must be lower than the length of the data. "
                             f"Received: start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= n:
            raise ValueError("`end_index` must be lower than the length of the data. "
                             f"Received: end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: "
                             f"end_index={end_index}")
    for name, v in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if v <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={v}")
        if v >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. "
                             f"Received: {name}={v}, for data of length {n}")


@keras_export("keras.utils.timeseries_dataset_from_array",
              "keras.preprocessing.timeseries_dataset_from_array")
def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None, format="tf"):  # noqa: A002
    """A `tf.data.Dataset` of sliding windows over a time series: each element is
    `data[p : p + sequence_length * sampling_rate : sampling_rate]` for start positions p
    every `sequence_stride`, with `targets[p]` when targets are given.

    Args:
      data: an array or tensor whose first axis is time.
      targets: per-position targets (aligned with `data`'s first axis), or None.
      sequence_length: the number of steps in each window.
      sequence_stride: the step between window starts.
      sampling_rate: the step between a window's samples.
      batch_size: the number of windows per batch (None: unbatched).
      shuffle: whether to shuffle the windows.
      seed: the shuffling seed.
      start_index: the first position used (default 0).
      end_index: the position after the last used (default the end).
      format: must be "tf".

    Returns:
      A dataset of `windows` or `(windows, targets)` batches.

    Raises:
      ValueError: `format` other than "tf", or bad indices and lengths.

    Example:

    >>> ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(6), None, 3, batch_size=4)
    >>> next(iter(ds)).numpy()
    array([[0, 1, 2],
           [1, 2, 3],
           [2, 3, 4],
           [3, 4, 5]])
    """
    if isinstance(data, Tensor):
        data = data.numpy()
    n = len(data)
    _check_timeseries_args(n, sequence_stride, sampling_rate, start_index, end_index)
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        raise ValueError('format="grain" needs the grain package, which ndflow does not use.')
    start_index = start_index or 0
    end_index = end_index or n
    num_seqs = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    index_dtype = "int32" if num_seqs < 2**31 - 1 else "int64"
    positions = np.arange(0, num_seqs, sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    steps = convert_to_tensor(np.asarray(data[start_index:end_index]))
    span, rate = int(sequence_length * sampling_rate), int(sampling_rate)
    dataset = DatasetV2.from_tensor_slices(positions).map(
        lambda p: gather(steps, range_(p, p + span, rate)))
    if targets is not None:
        target_steps = convert_to_tensor(np.asarray(
            targets.numpy() if isinstance(targets, Tensor) else targets)[start_index:end_index])
        target_ds = DatasetV2.from_tensor_slices(positions).map(
            lambda p: gather(target_steps, p))
        dataset = DatasetV2.zip((dataset, target_ds))
    dataset = dataset.prefetch(-1)
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    return dataset.shuffle(buffer_size=1024, seed=seed) if shuffle else dataset


def _samples(dataset) -> list:
    """The dataset's samples (a list/tuple of equally long arrays, an array or a
    tf.data.Dataset, unbatched), with Keras' errors."""
    if isinstance(dataset, (list, tuple)):
        kind = "list" if isinstance(dataset, list) else "tuple"
        if not dataset:
            raise ValueError(f"Received an empty {kind} dataset. Please provide a non-empty "
                             f"{kind} of arrays.")
        for i, element in enumerate(dataset):
            if not isinstance(element, np.ndarray):
                raise ValueError(f"Expected a {kind} of `numpy.ndarray` objects,Received: "
                                 f"{type(element)} at index {i}.")
            if element.shape[0] != dataset[0].shape[0]:
                raise ValueError(f"Received a {kind} of NumPy arrays with different lengths."
                                 f"Mismatch found at index {i}, Expected shape="
                                 f"{dataset[0].shape} Received shape={element.shape}.Please "
                                 f"provide a {kind} of NumPy arrays of the same length.")
        samples = list(zip(*dataset))
    elif isinstance(dataset, DatasetV2):
        source = dataset.unbatch() if isinstance(dataset, BatchDataset) else dataset
        samples = [tuple(x) if isinstance(x, list) else x for x in source]
    else:
        samples = list(dataset)
    if not samples:
        raise ValueError("Received an empty dataset. Argument `dataset` must be a non-empty "
                         "list/tuple of `numpy.ndarray` objects or `tf.data.Dataset` objects.")
    return samples


def _split_sizes(left_size, right_size, total):
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, "
                            f"Received: type({name})={type(size)}.")
    if left_size == 0 and right_size == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the "
                         "split sizes must be non-zero.")
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if (type(size) is int and not 0 < size < total) or (
                type(size) is float and not 0 < size < 1):
            raise ValueError(f"`{name}` should be either a positive integer smaller than "
                             f"{total}, or a float within the range `[0, 1]`. Received: "
                             f"{name}={size}")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must "
                         "be less than or equal to 1.")
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError("The sum of `left_size` and `right_size` should be smaller than the "
                         f"{total}. Received: left_size + right_size = {left + right}and "
                         f"total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and "
                             f"`right_size`={right}.Resulting {side} side dataset split will "
                             "be empty. Adjust any of the aforementioned parameters")
    return int(left), int(right)


def _restack(samples, like):
    structure = samples[0]
    columns = [np.array([np.asarray(getattr(v, "numpy", lambda v=v: v)()) for v in column])
               for column in zip(*[flatten(s) for s in samples])]
    return pack_sequence_as(structure, columns) if isinstance(
        structure, (tuple, list, dict)) else columns[0]


@keras_export("keras.utils.split_dataset")
def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None,
                  preferred_backend=None):
    """Splits a dataset or arrays into two `tf.data.Dataset`s.

    Args:
      dataset: a `tf.data.Dataset`, an array, or a list/tuple of arrays sharing their
        first dimension.
      left_size: the first part's size: an int count or a float fraction (default: the
        rest after `right_size`).
      right_size: likewise for the second part (default the rest).
      shuffle: whether to shuffle the samples before splitting.
      seed: the shuffling seed.
      preferred_backend: accepted for Keras' signature.

    Returns:
      A tuple (left, right) of datasets.

    Raises:
      TypeError: `dataset` of another type.
      ValueError: neither size given, or sizes that do not fit the data.

    Example:

    >>> left, right = tf.keras.utils.split_dataset(np.arange(10), left_size=0.8)
    >>> len(list(left)), len(list(right))
    (8, 2)
    """
    if not isinstance(dataset, (list, tuple, np.ndarray, DatasetV2)):
        raise TypeError("The `dataset` argument must be either a `tf.data.Dataset` object, "
                        f"or a list/tuple of arrays. Received: dataset={dataset} of type "
                        f"{type(dataset)}")
    if right_size is None and left_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    samples = _samples(dataset)
    if shuffle:
        random.Random(random.randint(0, int(1e6)) if seed is None else seed).shuffle(samples)
    left, right = _split_sizes(left_size, right_size, len(samples))
    halves = []
    for part in (samples[:left], samples[-right:]):
        ds = DatasetV2.from_tensor_slices(_restack(part, dataset))
        if isinstance(dataset, BatchDataset):
            ds = ds.batch(dataset._size)
        halves.append(ds.prefetch(-1))
    return tuple(halves)
