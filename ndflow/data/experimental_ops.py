"""`tf.data.experimental`: the transformations TensorFlow keeps there (functions returning a
`dataset -> dataset` callable for `Dataset.apply`) and older spellings of Dataset methods."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.data import structure
from ndflow.data.dataset import DatasetV2
from ndflow.data.sources import TensorSliceDataset
from ndflow.data.unary_dataset import UnaryDataset


class AssertCardinalityDataset(UnaryDataset):
    def __init__(self, input_dataset: DatasetV2, expected: int):
        self._input, self._expected = input_dataset, int(expected)
        super().__init__(input_dataset.element_spec)

    def _cardinality(self):
        return self._expected

    def _iter_flat(self):
        n = 0
        for flat in self._input._iter_flat():
            n += 1
            if self._expected >= 0 and n > self._expected:
                raise tf_errors.FailedPreconditionError(
                    None, None, f"Input dataset was expected to contain {self._expected} "
                    f"elements but contained at least {n} elements.")
            yield flat
        if n < self._expected or self._expected == -1:
            raise tf_errors.FailedPreconditionError(
                None, None, f"Input dataset was expected to contain {self._expected} elements "
                f"but contained only {n} elements.")


@tf_export("data.experimental.assert_cardinality")
def assert_cardinality(expected_cardinality):
    """A transformation giving the dataset this cardinality, checked while iterating."""
    n = int(expected_cardinality.numpy() if hasattr(expected_cardinality, "numpy")
            else expected_cardinality)
    return lambda dataset: AssertCardinalityDataset(dataset, n)


@tf_export("data.experimental.from_list")
def from_list(elements, name=None):
    """A dataset of the given elements (each a nest of values with one structure)."""
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    normalized = [structure.normalize(structure.lists_to_tuples(e) if isinstance(e, list)
                                      else e) for e in elements]
    first = normalized[0]
    columns = list(zip(*[flatten(e) for e in normalized]))
    stacked = [structure.eager(structure.stack_values([t._value for t in col], col[0].dtype, c),
                               col[0].dtype) for c, col in enumerate(columns)]
    return TensorSliceDataset(pack_sequence_as(first, stacked))


@tf_export("data.experimental.enumerate_dataset")
def enumerate_dataset(start=0):
    """Pairs each element with its index, counting from `start`.

    Args:
      start: the first index (an int64 scalar).

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as
      `ds.enumerate(start)`.

    Example:
      >>> ds = tf.data.Dataset.range(3)
      >>> [(int(i), int(x)) for i, x in ds.apply(
      ...     tf.data.experimental.enumerate_dataset(10))]
      [(10, 0), (11, 1), (12, 2)]
    """
    return lambda dataset: dataset.enumerate(start)


@tf_export("data.experimental.unbatch")
def unbatch():
    """Splits each element along its first dimension into separate elements.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as `ds.unbatch()`.

    Example:
      >>> ds = tf.data.Dataset.from_tensors([1, 2, 3])
      >>> [int(x) for x in ds.apply(tf.data.experimental.unbatch())]
      [1, 2, 3]
    """
    return lambda dataset: dataset.unbatch()


@tf_export("data.experimental.unique")
def unique():
    """Drops the elements equal to an earlier one (int32, int64 or string scalars).

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as `ds.unique()`.

    Example:
      >>> ds = tf.data.Dataset.from_tensor_slices([1, 2, 1, 3, 2])
      >>> [int(x) for x in ds.apply(tf.data.experimental.unique())]
      [1, 2, 3]
    """
    return lambda dataset: dataset.unique()


@tf_export("data.experimental.scan")
def scan(initial_state, scan_func):
    """Runs `scan_func` over the elements, carrying a state between them.

    Args:
      initial_state: a nest of tensors, the state before the first element.
      scan_func: `(state, element) -> (new_state, output)`; the state keeps its structure and
        dtypes.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as
      `ds.scan(initial_state, scan_func)`.

    Example:
      >>> ds = tf.data.Dataset.range(3)
      >>> sums = ds.apply(tf.data.experimental.scan(
      ...     tf.constant(0, tf.int64), lambda s, x: (s + x, s + x)))
      >>> [int(x) for x in sums]
      [0, 1, 3]
    """
    return lambda dataset: dataset.scan(initial_state, scan_func)


@tf_export("data.experimental.take_while")
def take_while(predicate):
    """Keeps the elements until `predicate` first returns False.

    Args:
      predicate: a function from an element to a scalar boolean tensor.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as
      `ds.take_while(predicate)`.

    Example:
      >>> ds = tf.data.Dataset.range(10)
      >>> [int(x) for x in ds.apply(tf.data.experimental.take_while(lambda x: x < 3))]
      [0, 1, 2]
    """
    return lambda dataset: dataset.take_while(predicate)


@tf_export("data.experimental.shuffle_and_repeat")
def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """Shuffles the elements, then repeats the dataset `count` times.

    Args:
      buffer_size: the number of elements the shuffle buffer holds.
      count: how many times to repeat; None or -1 repeats forever.
      seed: optional int seed for the shuffle.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as
      `ds.shuffle(buffer_size, seed).repeat(count)`.

    Example:
      >>> ds = tf.data.Dataset.range(3)
      >>> sorted(int(x) for x in ds.apply(tf.data.experimental.shuffle_and_repeat(3, 2)))
      [0, 0, 1, 1, 2, 2]
    """
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_parallel_calls(what: str, batch_size, num_parallel_batches, num_parallel_calls):
    """`map_and_batch`'s parallelism as TF's: `batch_size` calls by default, `batch_size *
    num_parallel_batches` with that; TF's ValueError for both."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError(
            f"`{what}` allows only one of `num_parallel_batches` and `num_parallel_calls` to "
            f"be set, but `num_parallel_batches` was set to {num_parallel_batches} and "
            f"`num_parallel_calls` as set to {num_parallel_calls}.")
    if num_parallel_calls is not None:
        return num_parallel_calls
    return batch_size * (1 if num_parallel_batches is None else num_parallel_batches)


@tf_export("data.experimental.map_and_batch")
def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """Maps `map_func` over the elements, then batches the results.

    Args:
      map_func: the function applied to each element.
      batch_size: the number of consecutive elements in a batch.
      num_parallel_batches: how many batches to map in parallel (`batch_size` elements each);
        by default one.
      drop_remainder: whether to drop a last, smaller batch.
      num_parallel_calls: how many elements to map in parallel (or tf.data.AUTOTUNE), instead
        of `num_parallel_batches`.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as `ds.map(map_func,
      num_parallel_calls).batch(batch_size, drop_remainder)`.

    Raises:
      ValueError: if both `num_parallel_batches` and `num_parallel_calls` are given.

    Example:
      >>> ds = tf.data.Dataset.range(3)
      >>> [b.numpy().tolist() for b in ds.apply(
      ...     tf.data.experimental.map_and_batch(lambda x: x * 2, 2))]
      [[0, 2], [4]]
    """
    calls = map_parallel_calls("map_and_batch", batch_size, num_parallel_batches,
                               num_parallel_calls)
    return lambda dataset: dataset.map(map_func, calls).batch(batch_size, drop_remainder)


@tf_export("data.experimental.parallel_interleave")
def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """Maps each element to a dataset and interleaves their elements.

    Args:
      map_func: a function from an element to a `tf.data.Dataset`.
      cycle_length: how many input elements are interleaved at once.
      block_length: how many consecutive elements to take from each before moving on.
      sloppy: accepted for compatibility; the order is always deterministic.
      buffer_output_elements: accepted for compatibility; ignored.
      prefetch_input_elements: accepted for compatibility; ignored.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`. The same as
      `ds.interleave(map_func, cycle_length, block_length)`.

    Example:
      >>> ds = tf.data.Dataset.range(1, 3)
      >>> f = lambda x: tf.data.Dataset.from_tensors(x).repeat(2)
      >>> [int(x) for x in ds.apply(tf.data.experimental.parallel_interleave(f, 2))]
      [1, 2, 1, 2]
    """
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


@tf_export("data.experimental.get_single_element")
def get_single_element(dataset: DatasetV2):
    """The only element of `dataset`.

    Args:
      dataset: a `tf.data.Dataset` with exactly one element.

    Returns:
      That element, a nest of tensors matching `dataset.element_spec`.

    Raises:
      InvalidArgumentError: if the dataset is empty or has more than one element.

    Example:
      >>> int(tf.data.experimental.get_single_element(tf.data.Dataset.range(5, 6)))
      5
    """
    return dataset.get_single_element()


@tf_export("data.experimental.sample_from_datasets")
def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """A dataset drawing each element from a randomly chosen input dataset.

    The same as `tf.data.Dataset.sample_from_datasets`.

    Args:
      datasets: a non-empty list of datasets with compatible element structures.
      weights: optional list (or dataset of lists) of sampling weights, one per dataset;
        uniform by default.
      seed: optional int seed for the choices.
      stop_on_empty_dataset: if True, stop when a chosen dataset is exhausted; else keep
        sampling the others.

    Returns:
      A `tf.data.Dataset`.

    Example:
      >>> ds = tf.data.experimental.sample_from_datasets(
      ...     [tf.data.Dataset.range(2), tf.data.Dataset.range(10, 12)], seed=1)
      >>> sorted(int(x) for x in ds)
      [0, 1, 10, 11]
    """
    return DatasetV2.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


@tf_export("data.experimental.choose_from_datasets")
def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """A dataset taking each element from the input dataset an index dataset names.

    The same as `tf.data.Dataset.choose_from_datasets`.

    Args:
      datasets: a non-empty list of datasets with compatible element structures.
      choice_dataset: a dataset of int64 scalars in `[0, len(datasets))`.
      stop_on_empty_dataset: if True, stop when a chosen dataset is exhausted.

    Returns:
      A `tf.data.Dataset`.

    Example:
      >>> ds = tf.data.experimental.choose_from_datasets(
      ...     [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)],
      ...     tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 0], tf.int64)))
      >>> [int(x) for x in ds]
      [0, 10, 1]
    """
    return DatasetV2.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


@tf_export("data.experimental.Counter")
def counter(start=0, step=1, dtype=dtypes.int64):
    """An infinite dataset counting from `start` by `step` (`tf.data.Dataset.counter`).

    Args:
      start: the first value.
      step: the increment (may be negative).
      dtype: the element dtype.

    Returns:
      A `tf.data.Dataset` of scalars.

    Example:
      >>> [int(x) for x in tf.data.experimental.Counter(5, 2).take(3)]
      [5, 7, 9]
    """
    return DatasetV2.counter(start, step, dtype)


@tf_export("data.experimental.RandomDataset")
def random_dataset(seed=None, rerandomize_each_iteration=None, name=None):
    """An infinite dataset of pseudorandom int64 values (`tf.data.Dataset.random`).

    Args:
      seed: optional int seed.
      rerandomize_each_iteration: if True, each new iteration gives a new sequence.
      name: unused; accepted for compatibility.

    Returns:
      A `tf.data.Dataset` of int64 scalars.

    Example:
      >>> len(list(tf.data.experimental.RandomDataset(seed=1).take(2)))
      2
    """
    return DatasetV2.random(seed, rerandomize_each_iteration)


@tf_export("data.experimental.prefetch_to_device")
def prefetch_to_device(device, buffer_size=None):
    """Prefetching; elements stay where the pipeline made them (host memory)."""
    return lambda dataset: dataset.prefetch(-1 if buffer_size is None else buffer_size)


@tf_export("data.experimental.copy_to_device")
def copy_to_device(target_device, source_device="/cpu:0"):
    """Moves the elements to another device; here a no-op.

    Args:
      target_device: the device name (elements stay in host memory).
      source_device: the device the elements come from.

    Returns:
      A function `dataset -> dataset` for `tf.data.Dataset.apply`.

    Example:
      >>> ds = tf.data.Dataset.range(3)
      >>> [int(x) for x in ds.apply(tf.data.experimental.copy_to_device('/cpu:0'))]
      [0, 1, 2]
    """
    return lambda dataset: dataset


@tf_export("data.experimental.get_next_as_optional")
def get_next_as_optional(iterator):
    """The iterator's next element as a `tf.experimental.Optional`.

    Args:
      iterator: a `tf.data.Iterator`.

    Returns:
      An Optional holding the next element, or empty once the iterator is exhausted (no
      OutOfRangeError is raised).

    Example:
      >>> it = iter(tf.data.Dataset.range(1))
      >>> opt = tf.data.experimental.get_next_as_optional(it)
      >>> int(opt.get_value()), bool(tf.data.experimental.get_next_as_optional(it).has_value())
      (0, False)
    """
    return iterator.get_next_as_optional()

