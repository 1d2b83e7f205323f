"""ReverseV2 / Roll / ReverseSequence (`tf.reverse`, `tf.roll`, `tf.reverse_sequence`),
Unique / UniqueWithCounts (`tf.unique`), LowerBound / UpperBound (`tf.searchsorted`) and
Bucketize: table-driven against NumPy; errors as TF 2.21."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.apply import apply_op
from ndflow.ops.array_search import Bucketize
from tests.ops.harness import OpCase

rng = np.random.default_rng(5)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _np_unique(x):
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.argsort(first)  # TF: order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return [values[order], rank[inverse].astype(np.int32), counts[order].astype(np.int32)]


def _np_reverse_sequence(x, lengths, seq, batch):
    out = np.moveaxis(x.copy(), (batch, seq), (0, 1))
    for i, n in enumerate(lengths):
        out[i, :n] = out[i, :n][::-1]
    return np.moveaxis(out, (0, 1), (batch, seq))


_DUPS = np.array([5.0, 3.0, 5.0, 1.0, 3.0, 3.0])
_SORTED = np.sort(_r(2, 6), axis=-1)
_VALUES = np.array([[-2.0, _SORTED[0, 2], 0.1], [_SORTED[1, 0], 0.0, 2.0]])
_NO_GRAD = dict(grad=False)

CASES = [
    OpCase("reverse_axis0", lambda x: tf.reverse(x, [0]), [_r(3, 4)], lambda x: x[::-1]),
    OpCase("reverse_two_axes_negative", lambda x: tf.reverse(x, [-1, 0]), [_r(2, 3, 4)],
           lambda x: x[::-1, :, ::-1]),
    OpCase("reverse_no_axis", lambda x: tf.reverse(x, []), [_r(2, 3)], lambda x: x),
    OpCase("reverse_int", lambda x: tf.reverse(tf.cast(x * 10, tf.int32), [1]), [_r(2, 3)],
           lambda x: np.trunc(x * 10)[:, ::-1].astype(np.int32), **_NO_GRAD),
    OpCase("roll_1d", lambda x: tf.roll(x, 2, 0), [_r(5)], lambda x: np.roll(x, 2)),
    OpCase("roll_two_axes", lambda x: tf.roll(x, [1, -2], [0, 1]), [_r(3, 4)],
           lambda x: np.roll(x, (1, -2), (0, 1))),
    OpCase("roll_same_axis_twice", lambda x: tf.roll(x, [1, 3], [1, 1]), [_r(2, 5)],
           lambda x: np.roll(x, 4, 1)),
    OpCase("reverse_sequence", lambda x: tf.reverse_sequence(x, [2, 4, 0], seq_axis=1,
                                                             batch_axis=0),
           [_r(3, 4)], lambda x: _np_reverse_sequence(x, [2, 4, 0], 1, 0)),
    OpCase("reverse_sequence_v1_3d", lambda x: tf.compat.v1.reverse_sequence(
        x, [1, 3], seq_dim=0, batch_dim=2), [_r(3, 2, 2)],
           lambda x: _np_reverse_sequence(x, [1, 3], 0, 2)),
    OpCase("unique", lambda x: list(tf.unique(x)), [_DUPS], lambda x: _np_unique(x)[:2],
           static_shape_exact=False, **_NO_GRAD),
    OpCase("unique_with_counts_int64", lambda x: list(tf.unique_with_counts(x, tf.int64)),
           [_DUPS], lambda x: [a if i == 0 else a.astype(np.int64)
                               for i, a in enumerate(_np_unique(x))],
           static_shape_exact=False, **_NO_GRAD),
    OpCase("searchsorted_left", lambda s, v: tf.searchsorted(s, v), [_SORTED, _VALUES],
           lambda s, v: np.stack([np.searchsorted(a, b) for a, b in zip(s, v)]).astype(
               np.int32), low_precision=False, **_NO_GRAD),
    OpCase("searchsorted_right_1d", lambda s, v: tf.searchsorted(s, v, side="right"),
           [_SORTED[0], _VALUES[0]],
           lambda s, v: np.searchsorted(s, v, side="right").astype(np.int32),
           low_precision=False, **_NO_GRAD),
]


def test_unique_keeps_first_appearance_order_and_names_fields():
    y, idx = tf.unique([5, 3, 5, 1, 3])
    assert y.numpy().tolist() == [5, 3, 1] and idx.numpy().tolist() == [0, 1, 0, 2, 1]
    result = tf.unique_with_counts([5, 3, 5])
    assert result.count.numpy().tolist() == [2, 1] and result.y.dtype is tf.int32


@pytest.mark.parametrize("call,error,message", [
    (lambda: tf.reverse(tf.zeros([2, 3]), [0, 0]), InvalidArgumentError,
     "axis 0 specified more than once."),
    (lambda: tf.reverse(tf.zeros([2, 3]), [2]), InvalidArgumentError,
     r"'axis'\[0\] = 2 is out of valid range \[0, 1"),
    (lambda: tf.roll(tf.zeros([2, 3]), [1, 2], [0]), InvalidArgumentError,
     "shift and axis must have the same size"),
    (lambda: tf.roll(tf.zeros([2, 3]), 1, 5), InvalidArgumentError, "axis 5 is out of range"),
    (lambda: tf.unique([[1]]), InvalidArgumentError, "unique expects a 1D vector."),
    (lambda: tf.reverse_sequence(tf.zeros([3, 4]), [5, 1, 1], 1, 0), InvalidArgumentError,
     r"seq_lens\(0\) > input.dims\(1\)"),
    (lambda: tf.reverse_sequence(tf.zeros([3, 4]), [1, 1], 1, 0), InvalidArgumentError,
     r"Length of seq_lengths != input.dims\(0\), \(2 vs. 3\)"),
    (lambda: tf.searchsorted([1.0, 2.0], [2.0], side="middle"), ValueError,
     "Argument `side` must be either 'right' or 'left'. Received: `side` = 'middle'."),
])
def test_errors_are_tensorflows(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_reverse_and_roll_gradients_move_back():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        rolled = tf.reduce_sum(tf.roll(x, 1, 0) * [1.0, 2.0, 3.0])
        reversed_ = tf.reduce_sum(tf.reverse(x, [0]) * [1.0, 2.0, 3.0])
    assert tape.gradient(rolled, x).numpy().tolist() == [2.0, 3.0, 1.0]
    assert tape.gradient(reversed_, x).numpy().tolist() == [3.0, 2.0, 1.0]


def test_bucketize_counts_the_boundaries_at_or_below_each_value():
    def bucketize(x, boundaries):
        return apply_op(Bucketize, [tf.constant(x)], {"boundaries": boundaries}).outputs[0]

    x = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, np.nan, -np.inf]], np.float32)
    want = np.searchsorted([0.0, 1.0], np.nan_to_num(x, nan=np.inf), side="right")
    np.testing.assert_array_equal(bucketize(x, [0.0, 1.0]).numpy(), want)   # TF: NaN -> 2
    out = bucketize(np.array([3, 5, 9], np.int64), [4.5, 9.0])
    assert out.dtype == tf.int32 and out.numpy().tolist() == [0, 1, 2]
    with pytest.raises(InvalidArgumentError, match="Expected sorted boundaries"):
        bucketize(np.array([3.0], np.float32), [2.0, 1.0])
