"""tf.gather with batch_dims: one gather per batch entry (TF 2.21's values), gradients by
finite differences, TF's argument errors."""

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import OpCase

rng = np.random.default_rng(8)
_I = np.array([[0, 2], [1, 1]])
_I3 = np.array([[[0], [2]], [[1], [0]]])


def _np_batch_gather(p, i, axis, batch_dims):
    if batch_dims == 0:
        return np.take(p, i, axis=axis)
    return np.stack([_np_batch_gather(pb, ib, axis - 1, batch_dims - 1)
                     for pb, ib in zip(p, i)])


CASES = [
    OpCase("gather_batch_dims_1_axis_1", lambda p: tf.gather(p, _I, axis=1, batch_dims=1),
           [rng.normal(size=(2, 3, 4))], lambda p: _np_batch_gather(p, _I, 1, 1)),
    OpCase("gather_batch_dims_1_axis_2", lambda p: tf.gather(p, _I, axis=2, batch_dims=1),
           [rng.normal(size=(2, 3, 4))], lambda p: _np_batch_gather(p, _I, 2, 1)),
    OpCase("gather_batch_dims_2", lambda p: tf.gather(p, _I3, axis=2, batch_dims=2),
           [rng.normal(size=(2, 2, 3, 2))], lambda p: _np_batch_gather(p, _I3, 2, 2)),
    OpCase("gather_batch_dims_negative", lambda p: tf.gather(p, [[0], [3]], axis=-1,
                                                            batch_dims=-1),
           [rng.normal(size=(2, 4))], lambda p: _np_batch_gather(p, np.array([[0], [3]]), 1, 1)),
]


def test_tf_gather_is_one_function_in_v1_and_v2():
    assert tf.gather is tf.compat.v1.gather


def test_batch_dims_larger_than_axis_is_tfs_value_error():
    with pytest.raises(ValueError, match=r"batch_dims \(1\) must be less than or equal to "
                                         r"axis \(0\)\."):
        tf.gather(tf.zeros([2, 3]), [[0], [1]], axis=0, batch_dims=1)
