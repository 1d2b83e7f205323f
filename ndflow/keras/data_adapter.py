"""What `fit`/`evaluate`/`predict` accept as data, turned into batches of tensors: NumPy
arrays, ndflow tensors and `tf.SparseTensor`s (nested in lists/tuples/dicts; sliced per batch
by rows, shuffled per epoch), `tf.data.Dataset`s (Keras 3's epochs and `steps_per_epoch`
rules), Python generators and other iterables of batches, with
Keras 3's `validation_split`, `class_weight` and error messages."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten
from ndflow.core.tensor import Tensor
from ndflow.data.dataset import DatasetV2
from ndflow.data.structure import leaves, map_leaves
from ndflow.data.worker_threads import share_cores_with_the_pipeline
from ndflow.keras.global_config import floatx
from ndflow.keras.utils_py_dataset import (
    PyDataset,
    PyDatasetAdapter,
    class_weight_to_sample_weights,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_
from ndflow.ops.cast import cast
from ndflow.ops.math import minimum
from ndflow.ops.math import round as round_
from ndflow.ops.random import random_shuffle
from ndflow.ops.reduction import argmax
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.variables import Variable


@keras_export("keras.utils.unpack_x_y_sample_weight")
def unpack_x_y_sample_weight(data):
    """Splits a batch as `fit` receives it into its parts (for custom `train_step`s).

    Args:
      data: `x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)` (a list counts as a tuple).

    Returns:
      A tuple `(x, y, sample_weight)`, None for the missing parts.

    Raises:
      ValueError: a tuple of more than three elements.

    Example:

    >>> tf.keras.utils.unpack_x_y_sample_weight((1, 2))
    (1, 2, None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple) or isinstance(data, SparseTensor):  # a SparseTensor is x
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


@keras_export("keras.utils.pack_x_y_sample_weight")
def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Packs batch parts the way `fit` passes them to a step: `x` alone (a list or tuple
    `x` wrapped as `(x,)`), `(x, y)` or `(x, y, sample_weight)`.

    Args:
      x: the inputs.
      y: optional targets.
      sample_weight: optional sample weights.

    Returns:
      The packed batch.
    """
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) and not isinstance(x, SparseTensor) else x
    if sample_weight is None:
        return x, y
    return x, y, sample_weight


class SparseRows:
    """A SparseTensor as `fit`/`predict` data (Keras 3's TensorflowSparseWrapper): its rows
    taken by a slice or index array give a SparseTensor of those rows, in that order."""

    def __init__(self, sparse: SparseTensor):
        indices = np.asarray(sparse.indices.numpy(), np.int64)
        shape = [int(d) for d in sparse.dense_shape.numpy()]
        if not shape:
            raise ValueError("A SparseTensor used as data needs a batch dimension; got a "
                             "scalar SparseTensor.")
        order = np.argsort(indices[:, 0], kind="stable")  # entries grouped by row
        self._indices = indices[order]
        self._values = np.asarray(sparse.values.numpy())[order]
        self._dtype = sparse.dtype
        self.shape = tuple(shape)
        self._starts = np.searchsorted(self._indices[:, 0], np.arange(shape[0] + 1))

    def __getitem__(self, sel) -> SparseTensor:
        rows = np.arange(self.shape[0])[sel]
        starts = self._starts[rows]
        counts = self._starts[rows + 1] - starts
        offsets = np.repeat(np.cumsum(counts) - counts, counts)
        take = np.repeat(starts, counts) + np.arange(int(counts.sum())) - offsets
        indices = self._indices[take]
        indices[:, 0] = np.repeat(np.arange(len(rows)), counts)
        return SparseTensor(convert_to_tensor(indices, dtypes.int64),
                            convert_to_tensor(self._values[take], self._dtype),
                            convert_to_tensor([len(rows), *self.shape[1:]], dtypes.int64))


def _to_numpy(x):
    if x is None:
        return None
    if isinstance(x, SparseTensor):
        return SparseRows(x)
    if isinstance(x, (Tensor, Variable)):
        if x.dtype == dtypes.string:  # string tensors feed text layers, as in Keras' TF backend
            return np.asarray(x.numpy(), dtype=object)
        x = np.asarray(x.numpy())
    elif isinstance(x, (list, tuple)) and x and not isinstance(x[0], (np.ndarray, Tensor)):
        x = np.asarray(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "US":  # as Keras 3 (object arrays pass)
        raise ValueError(f"Invalid dtype: {x.dtype.name}")
    return x


def _array_as_sliced(x):
    """`_to_numpy`, with float arrays other than floatx cast to floatx (Keras 3's array
    slicing; datasets and generators keep their dtypes)."""
    x = _to_numpy(x)
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype.name != floatx():
        x = x.astype(floatx())
    return x


def is_array_data(x) -> bool:
    """Keras 3's `can_convert_arrays`: arrays, tensors or array-likes (`__array__`) in lists,
    tuples and dicts; Python numbers are not (`predict([[1.0, 2.0]])` is Keras' ValueError)."""
    flat = leaves(x)
    return bool(flat) and all(isinstance(v, (np.ndarray, Tensor, Variable, SparseTensor)) or
                              (hasattr(v, "__array__") and not isinstance(v, (str, bytes)))
                              for v in flat)


def _standardize(x):
    """Arrays (in lists/tuples/dicts) as NumPy, SparseTensors as SparseRows; a plain list of
    numbers becomes one array."""
    if isinstance(x, list) and x and all(isinstance(v, (int, float)) for v in flatten(x)):
        return _array_as_sliced(np.asarray(x))
    return map_leaves(_array_as_sliced, x)


def _take(array, sel):
    """Rows `sel` of a standardized array as a tensor (a SparseTensor for SparseRows)."""
    if array is None:
        return None
    if isinstance(array, SparseRows):
        return array[sel]
    if isinstance(array, np.ndarray) and not isinstance(sel, slice):
        return convert_to_tensor(np.take(array, sel, axis=0))   # half of indexing's time
    return convert_to_tensor(array[sel])


def _num_samples(arrays: dict) -> int:
    sizes = {name: {int(a.shape[0]) for a in leaves(value) if hasattr(a, "shape")}
             for name, value in arrays.items() if value is not None}
    all_sizes = set().union(*sizes.values()) if sizes else set()
    if len(all_sizes) > 1:
        msg = "Data cardinality is ambiguous. Make sure all arrays contain the same number " \
              "of samples."
        for name, value in arrays.items():
            if value is not None:
                msg += f"'{name}' sizes: " + ", ".join(
                    str(a.shape[0]) for a in leaves(value)) + "\n"
        raise ValueError(msg)
    if not all_sizes:
        raise ValueError("Expected arrays with a leading sample dimension.")
    return all_sizes.pop()


def train_validation_split(arrays, validation_split: float):
    """The last `validation_split` of the samples (before shuffling), as Keras 3 does."""
    def split(start, stop):
        return map_leaves(lambda a: None if a is None else a[start:stop],
                          map_leaves(lambda a: SparseRows(a) if isinstance(a, SparseTensor)
                                     else a, arrays))
    n = _num_samples({"x": arrays[0]})
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise ValueError(f"Training data contains {n} samples, which is not sufficient to "
                         f"split it into a validation and training set as specified by "
                         f"`validation_split={validation_split}`. Either provide more data, or "
                         "a different value for the `validation_split` argument.")
    return split(0, split_at), split(split_at, n)


def shuffled_orders(n: int, batch_size: int, shuffle) -> DatasetV2:
    """The dataset of sample indices Keras 3's TF backend shuffles arrays with (its
    ArrayDataAdapter): `shuffle=True`, one `tf.random.shuffle` of range(n); "batch", each
    batch's indices shuffled in turn. Its functions are traced now (their op seeds come from
    the global seed, as in Keras' `fit`) and instantiated per iterator, so each epoch draws
    TF's permutations (with a global seed: the same order every epoch, as TF 2.21's Keras)."""
    if shuffle == "batch":
        def batch_order(b):
            start = b * batch_size
            return random_shuffle(range_(start, minimum(start + batch_size, n)))
        return DatasetV2.range(math.ceil(n / batch_size)).map(batch_order)
    return DatasetV2.range(1).map(lambda _: random_shuffle(range_(n, dtype=dtypes.int64)))


class ArrayDataAdapter:
    """Batches sliced from in-memory arrays; `shuffle` True (samples) or "batch"."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, steps=None,
                 shuffle=False, class_weight=None):
        x, y, sample_weight = _standardize(x), _standardize(y), _standardize(sample_weight)
        self.num_samples = _num_samples({"x": x, "y": y, "sample_weight": sample_weight})
        if class_weight is not None:
            if y is None or len(flatten(y)) != 1:
                raise ValueError("`class_weight` is only supported for Models with a single "
                                 "output.")
            cw = class_weight_to_sample_weights(flatten(y)[0], class_weight)
            sample_weight = cw if sample_weight is None else sample_weight * cw
        self.data = (x, y, sample_weight)
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        self.num_batches = max(1, math.ceil(self.num_samples / self.batch_size))
        if steps is not None:
            self.num_batches = min(self.num_batches, steps) if steps else self.num_batches
        self._orders = None
        if shuffle:   # True (any truthy value, as Keras) or "batch"
            self._orders = shuffled_orders(self.num_samples, self.batch_size, shuffle)

    def __iter__(self):
        n, bs = self.num_samples, self.batch_size
        order = None
        if self._orders is not None:  # each epoch a new iterator, as Keras
            order = np.concatenate([t.numpy() for t in self._orders] or [np.zeros(0, np.int64)])
        for b in range(self.num_batches):
            sel = (slice(b * bs, min((b + 1) * bs, n)) if order is None else
                   order[b * bs:min((b + 1) * bs, n)])
            x, y, sw = map_leaves(lambda a, sel=sel: _take(a, sel), self.data)
            yield pack_x_y_sample_weight(x, y, sw)


class IterableDataAdapter:
    """Batches from a Python generator, an iterator or any iterable of batches (a
    `tf.data.Dataset`); `steps` caps an epoch (needed for endless generators)."""

    def __init__(self, data, steps=None):
        self.data = data
        self.num_batches = steps
        self._iterator = None
        if steps is None and hasattr(data, "__len__"):
            try:
                self.num_batches = len(data)
            except TypeError:
                self.num_batches = None
        self._reiterable = not hasattr(data, "__next__")

    def __iter__(self):
        if self._iterator is None or (self._reiterable and self.num_batches is None):
            self._iterator = iter(self.data)
        taken = 0
        while self.num_batches is None or taken < self.num_batches:
            try:
                batch = next(self._iterator)
            except StopIteration:
                self._iterator = None
                if self.num_batches is not None and taken < self.num_batches and taken > 0 \
                        and self._reiterable:
                    self._iterator = iter(self.data)
                    continue
                return
            taken += 1
            x, y, sw = map_leaves(lambda a: a if a is None or isinstance(a, (Tensor,
                                                                              SparseTensor))
                                  else convert_to_tensor(_to_numpy(a)),
                                  unpack_x_y_sample_weight(batch))
            yield pack_x_y_sample_weight(x, y, sw)


def _interrupted_warning() -> None:
    warnings.warn("Your input ran out of data; interrupting training. Make sure that your "
                  "dataset or generator can generate at least `steps_per_epoch * epochs` "
                  "batches. You may need to use the `.repeat()` function when building your "
                  "dataset.", stacklevel=3)


class DatasetAdapter:
    """Batches from a `tf.data.Dataset`, as Keras 3's TFDatasetAdapter and EpochIterator:
    without `steps` each epoch is one pass over a fresh iterator; with `steps` (e.g. on a
    repeated dataset) the iterator carries on across epochs, restarting after a pass over a
    finite dataset, and running out mid-epoch ends the epoch with Keras' warning."""

    def __init__(self, dataset: DatasetV2, steps=None, class_weight=None):
        if class_weight is not None:
            dataset = dataset.map(_class_weight_map_fn(class_weight))
        self._dataset = dataset
        card = dataset._cardinality()
        self._num = card if card >= 0 else None
        self._steps = steps or None
        self.num_batches = self._steps or self._num
        # an epoch ends when the iterator runs out (unknown cardinality, no `steps`)
        self.runs_out = self._steps is None and self._num is None
        self._iterator = None
        self._seen = 0

    def __iter__(self):
        with share_cores_with_the_pipeline(self._dataset) as sharing:
            yield from self._batches(sharing)

    def take_build_batch(self) -> None:
        """One batch from a fresh iterator, as Keras' TF trainer takes one to build the model
        under a distribution strategy (its shuffles take their seeds); the epochs then start
        over (EpochIterator.reset)."""
        next(iter(self._dataset), None)
        self._iterator, self._seen = None, 0

    def _batches(self, sharing):
        steps = self._steps or self._num or -1
        if steps <= 0:
            it = iter(self._dataset)
            while True:
                t = time.perf_counter()
                try:
                    data = next(it)
                except StopIteration:
                    return
                now = time.perf_counter()
                sharing.waited(now - t, now)
                yield data
        if self._iterator is None or self._steps is None:
            self._iterator, self._seen = iter(self._dataset), 0
        for _ in range(steps):
            if self._num and self._seen >= self._num:
                if self._steps:
                    _interrupted_warning()
                break
            t = time.perf_counter()
            try:
                data = next(self._iterator)
            except StopIteration:
                if self._num is None:
                    self._num = self._seen
                if self._steps:
                    _interrupted_warning()
                self._iterator = None
                return
            self._seen += 1
            now = time.perf_counter()
            sharing.waited(now - t, now)
            yield data
        if self._num and self._seen >= self._num:
            self._iterator, self._seen = iter(self._dataset), 0


def _class_weight_map_fn(class_weight: dict):
    """Keras 3's make_class_weight_map_fn: (x, y) -> (x, y, weight of y's class)."""
    table = convert_to_tensor([float(class_weight.get(int(c), 1.0))
                               for c in range(max(class_weight) + 1)])

    def class_weights_map_fn(*data):
        x, y, sw = unpack_x_y_sample_weight(data)
        if sw is not None:
            raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
        if isinstance(y, (list, tuple, dict)):
            raise ValueError("`class_weight` is only supported for Models with a single "
                             "output.")
        if y.shape.rank is not None and y.shape.rank >= 2:
            classes = argmax(y, axis=-1, output_type=dtypes.int32) if (
                y.shape.as_list()[-1] or 2) > 1 else \
                cast(round_(reshape(y, [-1])), dtypes.int32)
        else:
            classes = cast(round_(y), dtypes.int32)
        return x, y, gather(table, classes)

    return class_weights_map_fn


def get_data_adapter(x, y=None, sample_weight=None, batch_size=None, steps=None,
                     shuffle=False, class_weight=None):
    """The adapter for `x` (with Keras 3's errors for what each kind does not accept)."""
    if x is None:
        raise ValueError("Unrecognized data type: x=None (of type <class 'NoneType'>)")
    if isinstance(x, PyDataset):
        _check_no_targets(x, y, sample_weight)
        return PyDatasetAdapter(x, steps, shuffle, class_weight)
    if is_array_data(x):
        if not all(v is None or is_array_data(v) for v in (y, sample_weight)):
            # Keras checks (x, y, sample_weight) together, and names x
            raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")
        return ArrayDataAdapter(x, y, sample_weight, batch_size, steps, shuffle, class_weight)
    if isinstance(x, DatasetV2):
        _check_no_targets(x, y, sample_weight)
        if shuffle:
            warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` "
                          "was provided as a tf.data.Dataset. The Dataset is expected to "
                          "already be shuffled (via `.shuffle(buffer_size)`).", stacklevel=2)
        return DatasetAdapter(x, steps, class_weight)
    if isinstance(x, (str, bytes, dict, list, tuple)) or not hasattr(
            x, "__iter__") and not hasattr(x, "__next__"):   # (a list of strings included)
        raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")
    _check_no_targets(x, y, sample_weight)
    if class_weight is not None:
        raise ValueError("Argument `class_weight` is not supported for generators or "
                         "datasets in ndflow.")
    return IterableDataAdapter(x, steps)


def _check_no_targets(x, y, sample_weight) -> None:
    if y is not None:
        raise ValueError("When providing `x` as a generator or dataset, `y` should not be "
                         f"passed. Instead, the targets should be included as part of the "
                         f"dataset `x`. Received: y={y}")
    if sample_weight is not None:
        raise ValueError("When providing `x` as a generator or dataset, `sample_weight` "
                         "should not be passed. Instead, the sample weights should be included "
                         "as part of the dataset `x`.")
