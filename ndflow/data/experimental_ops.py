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


class AssertCardinalityDataset(DatasetV2):
    def __init__(self, input_dataset: DatasetV2, expected: int):
        self._input, self._expected = input_dataset, int(expected)
        super().__init__(input_dataset.element_spec)

    def _inputs(self):
        return [self._input]

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
    return lambda dataset: dataset.enumerate(start)


@tf_export("data.experimental.unbatch")
def unbatch():
    return lambda dataset: dataset.unbatch()


@tf_export("data.experimental.unique")
def unique():
    return lambda dataset: dataset.unique()


@tf_export("data.experimental.scan")
def scan(initial_state, scan_func):
    return lambda dataset: dataset.scan(initial_state, scan_func)


@tf_export("data.experimental.take_while")
def take_while(predicate):
    return lambda dataset: dataset.take_while(predicate)


@tf_export("data.experimental.shuffle_and_repeat")
def shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


@tf_export("data.experimental.map_and_batch")
def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(batch_size,
                                                                           drop_remainder)


@tf_export("data.experimental.parallel_interleave")
def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


@tf_export("data.experimental.get_single_element")
def get_single_element(dataset: DatasetV2):
    return dataset.get_single_element()


@tf_export("data.experimental.sample_from_datasets")
def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    return DatasetV2.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


@tf_export("data.experimental.choose_from_datasets")
def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    return DatasetV2.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


@tf_export("data.experimental.Counter")
def counter(start=0, step=1, dtype=dtypes.int64):
    return DatasetV2.counter(start, step, dtype)


@tf_export("data.experimental.RandomDataset")
def random_dataset(seed=None, rerandomize_each_iteration=None, name=None):
    return DatasetV2.random(seed, rerandomize_each_iteration)


@tf_export("data.experimental.prefetch_to_device")
def prefetch_to_device(device, buffer_size=None):
    """Prefetching; elements stay where the pipeline made them (host memory)."""
    return lambda dataset: dataset.prefetch(-1 if buffer_size is None else buffer_size)


@tf_export("data.experimental.copy_to_device")
def copy_to_device(target_device, source_device="/cpu:0"):
    return lambda dataset: dataset


@tf_export("data.experimental.get_next_as_optional")
def get_next_as_optional(iterator):
    return iterator.get_next_as_optional()

