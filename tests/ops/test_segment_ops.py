"""Segment reductions (`tf.math.segment_*`, `tf.math.unsorted_segment_*`): table-driven
against NumPy loops, TF's empty-segment values, gradients by finite differences (ties and
zeros kept away from the checked points); errors as TF 2.21."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from tests.ops.harness import OpCase

rng = np.random.default_rng(21)
_IDS = np.array([0, 0, 1, 3, 3, 3])          # segment 2 is empty
_UIDS = np.array([2, -1, 0, 2, 2, 0])        # -1 is dropped; segment 1 is empty
_DATA = rng.uniform(0.5, 1.5, (6, 3)) * rng.choice([-1, 1], (6, 3))


def _np_segments(data, ids, rows, fn, empty):
    out = np.full((rows,) + data.shape[1:], empty, dtype=np.float64)
    for s in range(rows):
        picked = data[ids == s]
        if len(picked):
            out[s] = fn(picked, axis=0)
    return out


def _lowest(x):
    return np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min


CASES = [
    OpCase("segment_sum", lambda d: tf.math.segment_sum(d, _IDS), [_DATA],
           lambda d: _np_segments(d, _IDS, 4, np.sum, 0.0)),
    OpCase("segment_mean", lambda d: tf.math.segment_mean(d, _IDS), [_DATA],
           lambda d: _np_segments(d, _IDS, 4, np.mean, 0.0)),
    OpCase("segment_max", lambda d: tf.math.segment_max(d, _IDS), [_DATA],
           lambda d: _np_segments(d, _IDS, 4, np.max, 0.0)),
    OpCase("segment_min", lambda d: tf.math.segment_min(d, _IDS), [_DATA],
           lambda d: _np_segments(d, _IDS, 4, np.min, 0.0)),
    OpCase("segment_prod", lambda d: tf.math.segment_prod(d, _IDS), [_DATA],
           lambda d: _np_segments(d, _IDS, 4, np.prod, 1.0)),
    OpCase("segment_prod_one_zero", lambda d: tf.math.segment_prod(d * [[0.0], [1], [1], [1],
                                                                        [1], [1]], _IDS),
           [_DATA], lambda d: _np_segments(d * [[0.0], [1], [1], [1], [1], [1]], _IDS, 4,
                                           np.prod, 1.0)),
    OpCase("unsorted_segment_sum", lambda d: tf.math.unsorted_segment_sum(d, _UIDS, 3), [_DATA],
           lambda d: _np_segments(d, _UIDS, 3, np.sum, 0.0)),
    OpCase("unsorted_segment_prod", lambda d: tf.math.unsorted_segment_prod(d, _UIDS, 3),
           [_DATA], lambda d: _np_segments(d, _UIDS, 3, np.prod, 1.0)),
    OpCase("unsorted_segment_mean", lambda d: tf.math.unsorted_segment_mean(d, _UIDS, 3),
           [_DATA], lambda d: _np_segments(d, _UIDS, 3, np.mean, 0.0)),
    OpCase("unsorted_segment_sqrt_n", lambda d: tf.math.unsorted_segment_sqrt_n(d, _UIDS, 3),
           [_DATA], lambda d: _np_segments(d, _UIDS, 3,
                                           lambda x, axis: x.sum(axis) / np.sqrt(len(x)), 0.0)),
    # Empty segments of the unsorted max/min hold the dtype's lowest/highest value: only the
    # non-empty ones are compared here, the empty one below.
    OpCase("unsorted_segment_max", lambda d: tf.gather(
        tf.math.unsorted_segment_max(d, _UIDS, 3), [0, 2]), [_DATA],
           lambda d: _np_segments(d, _UIDS, 3, np.max, 0.0)[[0, 2]]),
    OpCase("unsorted_segment_min_2d_ids", lambda d: tf.gather(
        tf.math.unsorted_segment_min(d, _UIDS.reshape(2, 3), 3), [0, 2]), [_DATA.reshape(2, 3, 3)],
           lambda d: _np_segments(d.reshape(6, 3), _UIDS, 3, np.min, 0.0)[[0, 2]]),
]


def test_empty_unsorted_segments_hold_the_reductions_identity():
    x = tf.constant([[1.0, 2.0]])
    lowest = np.finfo(np.float32).min
    assert tf.math.unsorted_segment_max(x, [0], 2).numpy()[1].tolist() == [lowest] * 2
    assert tf.math.unsorted_segment_min(tf.constant([3], tf.int32), [1], 2).numpy().tolist() == \
        [np.iinfo(np.int32).max, 3]
    assert tf.math.segment_max(x, [1]).numpy().tolist() == [[0.0, 0.0], [1.0, 2.0]]


def test_max_gradient_is_shared_between_ties():
    x = tf.constant([2.0, 2.0, 1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.segment_max(x, [0, 0, 0])
    assert tape.gradient(y, x).numpy().tolist() == [0.5, 0.5, 0.0]


@pytest.mark.parametrize("call,message", [
    (lambda: tf.math.segment_sum([1.0, 2.0], [1, 0]), "segment ids are not increasing"),
    (lambda: tf.math.segment_sum([1.0, 2.0], [0]),
     "segment_ids should be the same size as dimension 0 of input."),
    (lambda: tf.math.unsorted_segment_max([1.0, 2.0], [0, 5], 3),
     r"segment_ids\[1\] = 5 is out of range \[0, 3\)"),
])
def test_errors_are_tensorflows(call, message):
    with pytest.raises(InvalidArgumentError, match=message):
        call()
