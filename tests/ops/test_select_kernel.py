"""SelectV2 on the CPU runs a branch-free numba loop (kernels/select.py) when the condition has
the output's shape: the results must be NumPy's `where`, bit for bit, NaNs, infinities and
signed zeros included, for every value type and broadcast of x and y."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import select as select_kernel
from ndflow.kernels.select import MIN_ELEMENTS

_SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0]
_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8]


def _values(rng, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        v = (rng.standard_normal(shape) * 100).astype(dtype)
        flat = v.reshape(-1)
        flat[:min(len(_SPECIAL), flat.size)] = _SPECIAL[:flat.size]
        return v
    return rng.integers(0, 100, shape).astype(dtype)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("x_shape, y_shape", [((64, 128), (64, 128)), ((64, 128), ()),
                                              ((), (64, 128)), ((128,), (64, 1))])
def test_where_with_a_full_shape_condition_is_numpys_bit_for_bit(dtype, x_shape, y_shape):
    rng = np.random.default_rng(0)
    cond = rng.random((64, 128)) > 0.5
    assert cond.size >= MIN_ELEMENTS  # the numba path runs where the shapes allow
    x, y = _values(rng, x_shape, dtype), _values(rng, y_shape, dtype)
    want = np.where(cond, x, y)
    eager = tf.where(cond, x, y).numpy()
    graph = tf.function(lambda c, a, b: tf.where(c, a, b))(cond, x, y).numpy()
    for got in (eager, graph):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_where_against_a_scalar_zero_keeps_its_sign(zero):
    """Dropout's `where(mask, x * scale, 0)`: the scalar's sign is kept."""
    rng = np.random.default_rng(1)
    cond = rng.random((64, 512)) > 0.5
    x = rng.standard_normal((64, 512)).astype(np.float32)
    got = tf.where(cond, x, np.float32(zero)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(np.where(cond, x, np.float32(zero))))
    assert np.signbit(got[~cond]).all() == np.signbit(np.float32(zero))


def test_a_transposed_operand_still_selects():
    rng = np.random.default_rng(4)
    cond = rng.random((64, 128)) > 0.5
    x = rng.standard_normal((128, 64)).astype(np.float32)
    got = tf.where(cond, tf.transpose(x), 2.0).numpy()
    np.testing.assert_array_equal(got, np.where(cond, x.T, np.float32(2.0)))


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("cond_shape", [(128, 1, 1, 1), (128, 28, 1, 1), (1, 1, 1, 1),
                                        (128, 28, 28, 1)])
def test_a_flag_per_row_selects_whole_rows_bit_for_bit(dtype, cond_shape):
    """A condition that is the output's shape up to a dimension and 1 after it (one flag per
    image: a random flip) picks whole rows (the numba row kernel)."""
    rng = np.random.default_rng(5)
    x, y = _values(rng, (128, 28, 28, 1), dtype), _values(rng, (128, 28, 28, 1), dtype)
    cond = rng.random(cond_shape) < 0.5
    want = np.where(cond, x, y)
    if cond_shape != (128, 28, 28, 1) and select_kernel._kernels() is not None and \
            torch.from_numpy(x).dtype in select_kernel._DTYPES:
        rows = select_kernel._select_rows(torch.from_numpy(cond), torch.from_numpy(x),
                                          torch.from_numpy(y))
        assert rows is not None and rows.dtype == torch.from_numpy(x).dtype
        np.testing.assert_array_equal(_bits(rows.numpy()), _bits(want))
    for got in (tf.where(cond, x, y).numpy(),
                tf.function(lambda c, a, b: tf.where(c, a, b))(cond, x, y).numpy()):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want))


def test_conditions_not_one_flag_per_row_take_the_general_path():
    rng = np.random.default_rng(6)
    x = torch.from_numpy(rng.standard_normal((64, 8, 16)).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal((64, 8, 16)).astype(np.float32))
    for shape in [(1, 8, 16), (64, 1, 16), (1, 8, 1)]:   # flags not on leading dimensions
        cond = torch.from_numpy(rng.random(shape) < 0.5)
        assert select_kernel._select_rows(cond, x, y) is None
        np.testing.assert_array_equal(select_kernel.select(cond, x, y).numpy(),
                                      np.where(cond.numpy(), x.numpy(), y.numpy()))
    cond = torch.from_numpy(rng.random((64, 1, 1)) < 0.5)
    assert select_kernel._select_rows(cond, x, y[:, :, :1]) is None   # y broadcasts too
    assert select_kernel._select_rows(cond, x, y.transpose(1, 2).contiguous()
                                      .transpose(1, 2)) is None       # not contiguous


def test_broadcast_and_small_conditions_still_select():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 28, 28, 1)).astype(np.float32)
    y = rng.standard_normal((128, 28, 28, 1)).astype(np.float32)
    flip = rng.random((128, 1, 1, 1)) < 0.5   # one flag per image: ATen's where
    np.testing.assert_array_equal(tf.where(flip, x, y).numpy(), np.where(flip, x, y))
    small = rng.random((7, 3)) > 0.5          # below MIN_ELEMENTS
    np.testing.assert_array_equal(tf.where(small, x[0, :7, :3, 0], 1.0).numpy(),
                                  np.where(small, x[0, :7, :3, 0], np.float32(1.0)))


def test_the_gradient_through_a_bitwise_select_is_the_masked_upstream():
    rng = np.random.default_rng(3)
    cond = rng.random((64, 128)) > 0.5
    x = tf.Variable(rng.standard_normal((64, 128)).astype(np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.where(cond, x * 3.0, 0.0))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(),
                                  np.where(cond, np.float32(3.0), np.float32(0.0)))
