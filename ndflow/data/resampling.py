"""`Dataset.rejection_resample` (and `tf.data.experimental.rejection_resample`) built as
TensorFlow 2.21 builds it from other datasets, so that seeds give TensorFlow's elements.

With the initial class distribution p (given, or estimated from the classes seen, in batches
of 32 with 10 of each class to start) and the target t: r = t / (p + tiny), m = min(r),
each class is accepted with probability (r - m) / (max(r) - m), and an element comes from
the input unfiltered with probability m (TF's `_calculate_acceptance_probs_with_mixing`).
The result samples (`sample_from_datasets`, stop_on_empty_dataset) between
the input mapped to (class, element) and the filtered input; when m is statically 0 or 1 it
is one of them alone. The filter draws `random_uniform([], seed=seed)` once per element.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.data.dataset import DatasetV2, register_op
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.array_fill import tile
from ndflow.ops.array_gather import one_hot
from ndflow.ops.cast import cast
from ndflow.ops.gather_batch import gather
from ndflow.ops.logging_ops import print_v1
from ndflow.ops.random import random_uniform
from ndflow.ops.reduction import reduce_max, reduce_min, reduce_sum
from ndflow.runtime import control_flow

_ESTIMATION_BATCH = 32  # TF's dist_estimation_batch_size
_SMOOTHING = 10  # TF's smoothing_constant: the count each class starts with


def _acceptance_and_mixing(initial, target):
    """(per-class acceptance probabilities, probability of taking the input unfiltered)."""
    ratio = target / (initial + np.finfo(np.float32).tiny)
    top, m = reduce_max(ratio), reduce_min(ratio)
    return (ratio - m) / (top - m), m


def _estimated_initial_dist(num_classes: int, classes: DatasetV2) -> DatasetV2:
    """The running class distribution (float32 [num_classes]) before each element."""
    def update(seen, c):
        seen = seen + reduce_sum(one_hot(c, num_classes, dtype=dtypes.int64), 0)
        dist = cast(seen / reduce_sum(seen), dtypes.float32)
        return seen, tile(expand_dims(dist, 0), [_ESTIMATION_BATCH, 1])

    start = np.full([num_classes], _SMOOTHING, np.int64)
    return classes.batch(_ESTIMATION_BATCH).scan(start, update).unbatch()


def _filtered(dataset, acceptance_ds, initial_ds, class_func, seed) -> DatasetV2:
    def warn_if_mostly_rejected(acceptance, initial):
        rejected = reduce_sum((1 - acceptance) * initial)
        return control_flow.cond(rejected < 0.5, lambda: acceptance, lambda: print_v1(
            acceptance, [rejected, initial, acceptance],
            message="Proportion of examples rejected by sampler is high: ", summarize=100,
            first_n=10))

    acceptance_ds = DatasetV2.zip((acceptance_ds, initial_ds)).map(warn_if_mostly_rejected)

    def with_probability(acceptance, data):
        cls = class_func(*data) if isinstance(data, tuple) else class_func(data)
        return cls, gather(acceptance, cls), data

    def keep(unused_class, p, unused_data):
        return random_uniform([], seed=seed, dtype=p.dtype) < p

    pairs = DatasetV2.zip((acceptance_ds, dataset)).map(with_probability)
    return pairs.filter(keep).map(lambda cls, unused_p, data: (cls, data))


@register_op("rejection_resample")
def rejection_resample(dataset, class_func, target_dist, initial_dist=None, seed=None):
    target = cast(convert_to_tensor(target_dist, name="target_dist"), dtypes.float32)
    if initial_dist is not None:
        initial = cast(convert_to_tensor(initial_dist, name="initial_dist"), dtypes.float32)
        acceptance, mixing = _acceptance_and_mixing(initial, target)
        initial_ds = DatasetV2.from_tensors(initial).repeat()
        acceptance_ds = DatasetV2.from_tensors(acceptance).repeat()
        mixing_ds = DatasetV2.from_tensors(mixing).repeat()
        target_value, initial_value = constant_value(target), constant_value(initial)
        static_mixing = (None if target_value is None or initial_value is None else
                         float(np.min(target_value / initial_value)))
    else:
        initial_ds = _estimated_initial_dist(int(target.shape[0]), dataset.map(class_func))
        both = initial_ds.map(lambda p: _acceptance_and_mixing(p, target))
        acceptance_ds = both.map(lambda acceptance, unused_m: acceptance)
        mixing_ds = both.map(lambda unused_acceptance, m: m)
        static_mixing = None
    filtered = _filtered(dataset, acceptance_ds, initial_ds, class_func, seed).prefetch(3)

    def add_class(*x):
        return (class_func(*x), x[0]) if len(x) == 1 else (class_func(*x), x)

    if static_mixing == 1:
        return dataset.map(add_class)
    if static_mixing == 0:
        return filtered
    return DatasetV2.sample_from_datasets(
        [dataset.map(add_class), filtered],
        weights=mixing_ds.map(lambda p: ((p, 1.0 - p),)), seed=seed,
        stop_on_empty_dataset=True)
