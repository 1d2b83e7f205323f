"""`Dataset.group_by_window`, `Dataset.bucket_by_sequence_length` and
`tf.data.experimental.group_by_reducer` (TensorFlow's GroupByWindowDataset and
GroupByReducerDataset).

group_by_window: `key_func` (traced once, as map's function) sends each element to a group;
a group that reaches its window size (`window_size`, or `window_size_func(key)`) is handed
to `reduce_func(key, window_dataset)` and the dataset it returns is emitted. At the end of
the input the unfinished groups are flushed in ascending key order (TF keeps them in an
ordered map). `reduce_func` builds a dataset from a dataset, so it runs eagerly on each
window (as `flat_map`'s function does); its output `element_spec` comes from one call on an
empty window.

bucket_by_sequence_length is group_by_window with the bucket index as key and a
(padded_)batch per bucket; its element_spec is TensorFlow's (batch and padded dimensions
unknown, as TF's traced batch sizes and boundaries make them).
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.data import structure
from ndflow.data.dataset import INFINITE, UNKNOWN, DatasetV2, register_op
from ndflow.data.traced_function import TracedFunction
from ndflow.data.unary_dataset import UnaryDataset
from ndflow.data.windowing import VariantDataset
from ndflow.ops.apply import convert_to_tensor

_KEY_SPEC = TensorSpec([], dtypes.int64)


def _int64_key(fn, name: str, input_spec, transformation: str) -> TracedFunction:
    """`fn` (argument `name`) traced to give an int64 scalar: Python ints are converted,
    another dtype or shape is TensorFlow's error."""
    if not callable(fn):
        raise TypeError(f"`{name}` must be callable, got {fn!r}.")
    traced = TracedFunction(
        lambda *a: convert_to_tensor(fn(*a), dtypes.int64), input_spec, transformation)
    out = traced.output_spec
    if not (hasattr(out, "dtype") and out.is_compatible_with(_KEY_SPEC)):
        raise ValueError(f"Invalid `{name}`. `{name}` must return a single `tf.int64` "
                         f"scalar tensor but its return type is {out}.")
    return traced


def _call(fn: TracedFunction, flat: tuple, index):
    try:
        return fn(flat)
    except Exception as e:  # noqa: BLE001 - re-raised as TF's error
        raise fn.error(e, index) from e


def _key(value: EagerTensor) -> int:
    return int(value._value)


class GroupByWindowDataset(UnaryDataset):
    _NAME = "GroupByWindowDataset"

    def __init__(self, input_dataset: DatasetV2, key_func, reduce_func, window_size=None,
                 window_size_func=None, element_spec=None):
        if (window_size is not None) == (window_size_func is not None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        self._input = input_dataset
        self._key_fn = _int64_key(key_func, "key_func", input_dataset.element_spec,
                                  self._NAME)
        if window_size is not None:
            with context.eager_scope():  # a value, also while a graph is built
                size = convert_to_tensor(window_size, dtypes.int64)
            self._size_fn = lambda key: size._value
        else:
            traced = _int64_key(window_size_func, "window_size_func", _KEY_SPEC, self._NAME)
            self._size_fn = lambda key: traced((key,))[0]._value
        self._reduce_func = reduce_func
        if element_spec is None:  # reduce_func on an empty window tells the output's spec
            empty = VariantDataset([], input_dataset.element_spec)
            with context.eager_scope():  # as when windows are reduced (eagerly)
                element_spec = self._reduce(EagerTensor(np.int64(0), dtypes.int64), empty,
                                            None).element_spec
        super().__init__(element_spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _reduce(self, key: EagerTensor, window: DatasetV2, index) -> DatasetV2:
        try:
            out = self._reduce_func(key, window)
        except Exception as e:  # noqa: BLE001 - user code: TF's error types
            if index is None or isinstance(e, tf_errors.OpError):
                raise
            raise tf_errors.InvalidArgumentError(
                None, None, f"Error in user-defined function passed to {self._NAME} "
                f"transformation (window of key {int(key._value)}): {type(e).__name__}: {e}") \
                from e
        if not isinstance(out, DatasetV2):
            spec = structure.specs_of(structure.normalize(out)) if out is not None else out
            raise TypeError("Invalid `reduce_func`. `reduce_func` must return a single "
                            f"`tf.data.Dataset` object but its return type is {spec}.")
        return out

    def _window_size(self, key: EagerTensor) -> int:
        n = int(self._size_fn(key))
        if n <= 0:
            raise tf_errors.InvalidArgumentError(
                None, None, f"Window size must be greater than zero, but got {n}. "
                "[Op:IteratorGetNext]")
        return n

    def _iter_flat(self):
        groups: dict = {}
        spec = self._input.element_spec
        for index, flat in enumerate(self._input._iter_flat()):
            key = _call(self._key_fn, flat, index)[0]
            k = _key(key)
            members = groups.setdefault(k, [])
            members.append(flat)
            if len(members) >= self._window_size(key):
                del groups[k]
                yield from self._reduce(key, VariantDataset(members, spec), index)._iter_flat()
        for k in sorted(groups):
            key = EagerTensor(np.int64(k), dtypes.int64)
            yield from self._reduce(key, VariantDataset(groups[k], spec), k)._iter_flat()


@register_op("group_by_window")
def group_by_window(dataset, key_func, reduce_func, window_size=None, window_size_func=None):
    return GroupByWindowDataset(dataset, key_func, reduce_func, window_size, window_size_func)


@tf_export("data.experimental.group_by_window")
def experimental_group_by_window(key_func, reduce_func, window_size=None,
                                 window_size_func=None):
    """`Dataset.group_by_window` as a transformation for `Dataset.apply`."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func)


# -- bucket_by_sequence_length ------------------------------------------------------------

def _bucket_of(length: int, boundaries: list) -> int:
    """TF's rule: the first bucket i with min_i <= length < max_i, where the mins are
    [int32 min] + boundaries and the maxes boundaries + [int32 max]."""
    lows = [np.iinfo(np.int32).min] + boundaries
    highs = boundaries + [np.iinfo(np.int32).max]
    for i, (lo, hi) in enumerate(zip(lows, highs)):
        if lo <= length < hi:
            return i
    raise tf_errors.InvalidArgumentError(
        None, None, f"No bucket of the boundaries {boundaries} holds the length {length}.")


@register_op("bucket_by_sequence_length")
def bucket_by_sequence_length(dataset, element_length_func, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError("`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` "
                         f"but `len(bucket_batch_sizes)={len(bucket_batch_sizes)}` and "
                         f"`len(bucket_boundaries)={len(bucket_boundaries)}`.")
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    length_fn = TracedFunction(element_length_func, dataset.element_spec,
                               "GroupByWindowDataset")

    input_spec = dataset.element_spec
    flat_specs = flatten(input_spec)

    def shapes_for(bucket: int | None) -> list:
        """Padded shapes: the given ones (or the input's), unknown dims set to the bucket's
        boundary - 1 with pad_to_bucket_boundary (None while computing the spec)."""
        if padded_shapes is None:
            base = [s.shape for s in flat_specs]
        else:
            base = [TensorShape(p) for p in _per_component(input_spec, padded_shapes)]
        if not pad_to_bucket_boundary or bucket is None:
            return base
        if bucket >= len(boundaries):
            raise tf_errors.InvalidArgumentError(
                None, None, "assertion failed: [When pad_to_bucket_boundary=True, elements "
                "must have length < max(bucket_boundaries).]")
        fill = boundaries[bucket] - 1
        return [TensorShape([fill if d is None else d for d in s.as_list()]) for s in base]

    def batching(bucket_id, window: DatasetV2) -> DatasetV2:
        bucket = int(bucket_id._value)
        if no_padding:
            return window.batch(sizes[bucket], drop_remainder=drop_remainder)
        shapes = pack_sequence_as(input_spec, shapes_for(bucket))
        return window.padded_batch(sizes[bucket], shapes, padding_values,
                                   drop_remainder=drop_remainder)

    # The output spec as TensorFlow's: the batch dimension unknown, padded dimensions
    # those given (unknown where they come from a bucket boundary).
    spec = pack_sequence_as(input_spec, [
        TensorSpec(TensorShape([None]).concatenate(sh), s.dtype)
        for s, sh in zip(flat_specs, [s.shape for s in flat_specs] if no_padding
                         else shapes_for(None))])
    return _BucketDataset(dataset, length_fn, boundaries, sizes, batching, spec)


def _per_component(spec, value) -> list:
    if not isinstance(spec, (tuple, list, dict)):
        return [value]
    return structure.flatten_up_to(spec, value)


class _BucketDataset(GroupByWindowDataset):
    """group_by_window keyed by the bucket of `length_fn(element)`."""

    def __init__(self, input_dataset, length_fn, boundaries, sizes, batching, spec):
        self._input = input_dataset
        self._length_fn, self._boundaries, self._sizes = length_fn, boundaries, sizes
        self._reduce_func = batching
        self._size_fn = lambda key: sizes[int(key._value)]
        self._key_fn = _BucketKey(length_fn, boundaries)
        DatasetV2.__init__(self, spec)


class _BucketKey:
    def __init__(self, length_fn: TracedFunction, boundaries: list):
        self._fn, self._boundaries = length_fn, boundaries

    def __call__(self, flat: tuple) -> tuple:
        length = int(self._fn(flat)[0]._value)
        return (EagerTensor(np.int64(_bucket_of(length, self._boundaries)), dtypes.int64),)

    def error(self, e, index):
        return self._fn.error(e, index)


@tf_export("data.experimental.bucket_by_sequence_length")
def experimental_bucket_by_sequence_length(element_length_func, bucket_boundaries,
                                           bucket_batch_sizes, padded_shapes=None,
                                           padding_values=None, pad_to_bucket_boundary=False,
                                           no_padding=False, drop_remainder=False):
    """`Dataset.bucket_by_sequence_length` as a transformation for `Dataset.apply`."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


# -- group_by_reducer -----------------------------------------------------------------------

@tf_export("data.experimental.Reducer")
class Reducer:
    """`init_func(key) -> state`, `reduce_func(state, element) -> state` and
    `finalize_func(state) -> output` of `group_by_reducer`."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


class GroupByReducerDataset(UnaryDataset):
    _NAME = "GroupByReducerDataset"

    def __init__(self, input_dataset: DatasetV2, key_func, reducer: Reducer):
        self._input = input_dataset
        self._key_fn = TracedFunction(key_func, input_dataset.element_spec, self._NAME)
        out = self._key_fn.output_spec
        if not (hasattr(out, "dtype") and out.is_compatible_with(_KEY_SPEC)):
            raise ValueError("Invalid `key_func`. Expected `key_func` to return a scalar "
                             f"tf.int64 tensor, but instead `key_func` has output "
                             f"types={getattr(out, 'dtype', out)!r} and shapes="
                             f"{getattr(out, 'shape', None)}.")
        self._init_fn = TracedFunction(reducer.init_func, _KEY_SPEC, self._NAME)
        state_spec = self._init_fn.output_spec
        while True:  # retrace until the state's shapes are a fixed point (as TF)
            fn = TracedFunction(reducer.reduce_func, (state_spec, input_dataset.element_spec),
                                self._NAME)
            old, new = flatten(state_spec), flatten(fn.output_spec)
            if len(old) != len(new) or any(a.dtype is not b.dtype for a, b in zip(old, new)):
                raise TypeError("Invalid `reducer`. The element types for the new state "
                                f"{fn.output_spec} do not match the element types of the old "
                                f"state {self._init_fn.output_spec}.")
            relaxed = [a.shape.most_specific_compatible_shape(b.shape)
                       for a, b in zip(old, new)]
            if all(a.shape.as_list() == r.as_list() if a.shape.rank is not None else True
                   for a, r in zip(old, relaxed)):
                break
            state_spec = structure.with_shapes(state_spec, relaxed)
        self._reduce_fn, self._n_state = fn, len(flatten(state_spec))
        self._finalize_fn = TracedFunction(reducer.finalize_func, state_spec, self._NAME)
        super().__init__(self._finalize_fn.output_spec)

    def _cardinality(self):
        return INFINITE if self._input._cardinality() == INFINITE else UNKNOWN

    def _iter_flat(self):
        states: dict = {}
        for index, flat in enumerate(self._input._iter_flat()):
            key = _call(self._key_fn, flat, index)[0]
            k = _key(key)
            if k not in states:
                states[k] = _call(self._init_fn, (key,), index)
            states[k] = _call(self._reduce_fn, states[k] + tuple(flat), index)
        for k in sorted(states):
            yield _call(self._finalize_fn, states[k], None)


@tf_export("data.experimental.group_by_reducer")
def group_by_reducer(key_func, reducer: Reducer):
    """A transformation grouping elements by `key_func` and reducing each group."""
    return lambda dataset: GroupByReducerDataset(dataset, key_func, reducer)
