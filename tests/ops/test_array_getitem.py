"""`Tensor.__getitem__` (one StridedSlice, as TF's `_slice_helper`) against NumPy indexing."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops.array_slicing import strided_slice_spec
from tests.ops.harness import OpCase

E = Ellipsis
N = None
S = slice

# (id, index) applied to a float tensor of shape (4, 5, 6).
SPECS = [
    ("int", 1), ("neg_int", -1), ("int_int", (2, -3)), ("int_int_int", (0, 4, 5)),
    ("slice", S(1, 3)), ("slice_open", S(None, 2)), ("slice_from", S(2, None)),
    ("slice_all", S(None)), ("step2", S(None, None, 2)), ("step3_off", S(1, None, 3)),
    ("neg_step", S(None, None, -1)), ("neg_step2", S(3, 0, -2)), ("neg_bounds", S(-3, -1)),
    ("neg_step_neg_bounds", S(-1, -4, -1)), ("clamped", S(-100, 100)),
    ("clamped_neg_step", S(100, -100, -3)), ("empty", S(3, 1)), ("empty_neg", S(1, 3, -1)),
    ("two_slices", (S(1, 3), S(None, None, -2))), ("slice_int", (S(None), 2)),
    ("int_slice", (1, S(4, 0, -1))), ("ellipsis", E), ("ellipsis_int", (E, 1)),
    ("int_ellipsis", (0, E)), ("int_ellipsis_int", (1, E, -2)),
    ("ellipsis_slice", (E, S(1, 5, 2))), ("newaxis", N), ("newaxis_mid", (S(None), N, 1)),
    ("newaxis_end", (E, N)), ("newaxis_twice", (N, 0, N, S(1, 3))),
    ("ellipsis_newaxis_int", (1, E, N, 2)), ("all_kinds", (S(1, None), N, E, -1)),
    ("shrink_all_then_new", (0, 0, 0, N)), ("list_is_tuple", [1, 2]),
    ("full_neg_step_all_dims", (S(None, None, -1),) * 3),
    ("big_step", S(None, None, 10)), ("ellipsis_only_new", (N, E, N)),
]


def _np_index(spec):
    return tuple(spec) if isinstance(spec, list) else spec


CASES = [OpCase(f"getitem_{name}", (lambda s: lambda x: x[s])(spec),
                [np.random.default_rng(i).uniform(-1, 1, (4, 5, 6))],
                (lambda s: lambda x: x[_np_index(s)])(spec))
         for i, (name, spec) in enumerate(SPECS)]
CASES += [
    OpCase("getitem_tensor_index", lambda x, i: x[i], [np.arange(12.0).reshape(3, 4),
                                                       np.array(-2, np.int32)],
           lambda x, i: x[int(i)]),
    OpCase("getitem_tensor_slice", lambda x, i: x[i:, :i], [np.arange(12.0).reshape(3, 4),
                                                           np.array(1, np.int64)],
           lambda x, i: x[int(i):, :int(i)]),
    OpCase("getitem_int_tensor_input", lambda x: x[::-1, 1],
           [np.arange(12, dtype=np.int64).reshape(3, 4)], lambda x: x[::-1, 1],
           dtypes=(tf.float64,), low_precision=False, grad=False),
    OpCase("getitem_scalar_ellipsis", lambda x: x[...], [np.array(3.0)], lambda x: x),
    OpCase("getitem_scalar_newaxis", lambda x: x[None], [np.array(3.0)], lambda x: x[None]),
]


# Gradients of a third of the slicings (the same StridedSliceGrad), and of the last four.
GRADIENT_CASES = [c for i, c in enumerate(CASES) if i % 3 == 0 or i >= len(CASES) - 4]


def test_strided_slice_spec_negative_stride_canonicalization():
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                           "shrink_axis_mask"), 0)
    spec = strided_slice_spec([5], [-1], [-6], [-2], masks)
    assert spec.final == [3] and spec.dense[0][:3] == (4, -1, -2)


@pytest.mark.parametrize("bad", [1.5, np.array([1, 2]), "a"])
def test_invalid_index_types(bad):
    x = tf.constant(np.zeros((3, 3)))
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[bad]


def test_one_d_tensor_index_is_rejected():
    x = tf.constant(np.zeros((3, 3)))
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors are valid indices"):
        x[tf.constant([0, 1])]


def test_multiple_ellipses_rejected():
    with Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Multiple ellipses in slice spec not allowed"):
            x[..., 0, ...]


def test_stride_zero_rejected():
    with Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match=r"strides\[0\] must be non-zero"):
            x[::0]


def test_a_boolean_index_is_boolean_mask():
    """TF's _slice_helper: a bool tensor or NumPy bool array as the whole index masks rows, for
    tensors and variables, eagerly and in graphs; a scalar bool is boolean_mask's error."""
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    mask = np.array([True, False, True, True])
    x = tf.constant(data)
    np.testing.assert_array_equal(x[mask].numpy(), data[mask])
    np.testing.assert_array_equal(x[x > 4.0].numpy(), data[data > 4.0])
    v = tf.Variable(data)
    np.testing.assert_array_equal(v[mask].numpy(), data[mask])
    f = tf.function(lambda t: t[t[:, 0] > 2.0])
    np.testing.assert_array_equal(f(x).numpy(), data[data[:, 0] > 2.0])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        x[True]
