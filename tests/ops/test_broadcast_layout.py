"""kernels/broadcast_layout.py and the reductions' two-step sums: an operand repeating along a
short trailing block is widened first (binary ops, in-place plan kernels, Tile, BroadcastTo),
and a sum or mean ending in a short reduced block reduces the outer axes first. Values
against NumPy (bit-equal for the elementwise ops, float64 references for the sums), where
the widening applies and where it must not."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import broadcast_layout

BIG = (32, 16, 16, 8, 4)          # Keras GroupNormalization's grouped activations
SMALL = (32, 1, 1, 8, 1)          # their per-group statistics


@pytest.mark.parametrize("small,shape,applies", [
    (SMALL, BIG, True),
    ((32, 1, 1, 8, 1), (32, 16, 16, 8, 16), True),
    ((32, 1, 1, 8, 1), (32, 16, 16, 8, 17), False),     # the block is more than a vector
    ((32, 1, 1, 1, 1), BIG, False),                     # repeats along every inner axis
    ((32, 1, 1, 8, 4), BIG, False),                     # no trailing repeat
    ((1, 1, 1, 8, 1), (2, 2, 2, 8, 4), False),          # too small to matter
    ((8, 1), (8,), False),
])
def test_where_the_widening_applies(small, shape, applies):
    x = torch.randn(small)
    wide = broadcast_layout.widen(x, shape)
    assert (wide is not None) == applies
    if applies:
        assert torch.equal(wide.expand(shape), x.expand(shape))
        assert wide.is_contiguous() and wide.numel() < np.prod(shape)


@pytest.mark.parametrize("op,ref", [(tf.add, np.add), (tf.subtract, np.subtract),
                                    (tf.multiply, np.multiply), (tf.divide, np.divide),
                                    (tf.maximum, np.maximum), (tf.minimum, np.minimum),
                                    (tf.math.squared_difference,
                                     lambda a, b: np.square(a - b))])
def test_binary_ops_equal_numpy_both_ways(op, ref):
    rng = np.random.default_rng(0)
    big = rng.standard_normal(BIG).astype(np.float32)
    small = rng.standard_normal(SMALL).astype(np.float32) + 3.0
    np.testing.assert_array_equal(op(big, small).numpy(), ref(big, small))
    np.testing.assert_array_equal(op(small, big).numpy(), ref(small, big))


def test_in_place_plan_kernels_widen_too():
    rng = np.random.default_rng(1)
    big = rng.standard_normal(BIG).astype(np.float32)
    small = rng.standard_normal(SMALL).astype(np.float32)

    @tf.function
    def f(x, m):
        y = x * 2.0                  # an intermediate that dies at the next ops
        return (y - m) * m + m
    want = (big * np.float32(2.0) - small) * small + small
    np.testing.assert_array_equal(f(big, small).numpy(), want)


def test_tile_and_broadcast_to_of_a_short_trailing_repeat():
    small = np.random.default_rng(2).standard_normal(SMALL).astype(np.float32)
    multiples = [1, 16, 16, 1, 4]
    np.testing.assert_array_equal(tf.tile(small, multiples).numpy(), np.tile(small, multiples))
    np.testing.assert_array_equal(tf.broadcast_to(small, BIG).numpy(),
                                  np.broadcast_to(small, BIG))
    partial = small[:, :, :, :2]                        # a tile that is not a broadcast
    np.testing.assert_array_equal(tf.tile(partial, [1, 2, 3, 2, 4]).numpy(),
                                  np.tile(partial, [1, 2, 3, 2, 4]))


@pytest.mark.parametrize("axes", [[1, 2, 4], [0, 1, 2, 4], [1, 3, 4], [2, 4]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sums_and_means_ending_in_a_short_block_match_float64(axes, keepdims):
    x = np.random.default_rng(3).standard_normal(BIG).astype(np.float32)
    for op, ref in ((tf.reduce_sum, np.sum), (tf.reduce_mean, np.mean)):
        got = op(x, axes, keepdims=keepdims).numpy()
        want = ref(x.astype(np.float64), tuple(axes), keepdims=keepdims)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def test_group_normalization_gradients_match_finite_differences():
    """Keras' GroupNormalization (moments, broadcasts and their gradients all take the
    two-step forms at this size) against float64 finite differences of a scalar loss."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 16, 16, 32)) * 2 + 1   # 65536 values: the fast forms run
    layer = tf.keras.layers.GroupNormalization(8, dtype="float64")
    xv = tf.Variable(x)
    weights = rng.standard_normal((8, 16, 16, 32))

    def loss(v):
        return tf.reduce_sum(layer(v) * weights)
    with tf.GradientTape() as tape:
        value = loss(xv)
    g = tape.gradient(value, xv).numpy()
    for idx in [(0, 0, 0, 0), (1, 5, 7, 13), (7, 15, 15, 31), (2, 3, 9, 4)]:
        d = np.zeros_like(x)
        d[idx] = 1e-5
        num = (float(loss(tf.constant(x + d))) - float(loss(tf.constant(x - d)))) / 2e-5
        assert g[idx] == pytest.approx(num, rel=1e-5, abs=1e-7)
