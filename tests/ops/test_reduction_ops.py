"""Reductions and ArgMax/ArgMin, table-driven (see harness.py), plus axis/shape errors."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow import math as tfm
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


_ints = np.array([[-3, 0, 5, 2], [7, -1, -6, 1], [4, 4, -2, 0]], np.int32)
_bools = np.array([[True, False, True], [True, True, True]])
_EXACT = dict(dtypes=(tf.float32,), low_precision=False, grad=False)


def _int_mean(x, axis=None):
    n = x.size if axis is None else x.shape[axis]
    return np.fix(np.sum(x, axis=axis) / n).astype(np.int64)


CASES = [
    OpCase("sum_all", lambda x: tfm.reduce_sum(x), [_r(3, 4)], np.sum),
    OpCase("sum_axis1", lambda x: tfm.reduce_sum(x, 1), [_r(3, 4)], lambda x: x.sum(1)),
    OpCase("sum_neg_axis_keepdims", lambda x: tfm.reduce_sum(x, -1, keepdims=True),
           [_r(2, 3, 4)], lambda x: x.sum(-1, keepdims=True)),
    OpCase("sum_axes_list", lambda x: tfm.reduce_sum(x, [0, 2]), [_r(2, 3, 4)],
           lambda x: x.sum((0, 2))),
    OpCase("sum_empty_axes", lambda x: tfm.reduce_sum(x, []), [_r(2, 3)], lambda x: x),
    OpCase("sum_int", lambda x: tfm.reduce_sum(x, 0), [_ints], lambda x: x.sum(0), **_EXACT),
    OpCase("mean_all", lambda x: tfm.reduce_mean(x), [_r(3, 4)], np.mean),
    OpCase("mean_axis0_keepdims", lambda x: tfm.reduce_mean(x, 0, keepdims=True),
           [_r(3, 4)], lambda x: x.mean(0, keepdims=True)),
    OpCase("mean_axes", lambda x: tfm.reduce_mean(x, [1, 2]), [_r(2, 3, 4)],
           lambda x: x.mean((1, 2))),
    OpCase("mean_int_truncates", lambda x: tfm.reduce_mean(x, 1), [_ints],
           lambda x: _int_mean(x, 1), **_EXACT),
    OpCase("max_axis1", lambda x: tfm.reduce_max(x, 1), [_r(3, 4)], lambda x: x.max(1)),
    OpCase("max_all_keepdims", lambda x: tfm.reduce_max(x, keepdims=True), [_r(3, 4)],
           lambda x: x.max(keepdims=True)),
    OpCase("min_axes", lambda x: tfm.reduce_min(x, [0, -1]), [_r(2, 3, 4)],
           lambda x: x.min((0, 2))),
    OpCase("max_int", lambda x: tfm.reduce_max(x, 0), [_ints], lambda x: x.max(0), **_EXACT),
    OpCase("max_empty_is_lowest", lambda x: tfm.reduce_max(x, 0), [np.zeros((0, 3))],
           lambda x: np.full(3, -np.inf), grad=False),
    OpCase("prod_axis1", lambda x: tfm.reduce_prod(x, 1), [_r(3, 4)], lambda x: x.prod(1)),
    OpCase("prod_all", lambda x: tfm.reduce_prod(x), [_r(2, 3) + 1.5], np.prod, rtol=1e-4),
    OpCase("prod_with_zeros", lambda x: tfm.reduce_prod(x, 1),
           [np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, -2.0, 0.5]])],
           lambda x: x.prod(1)),
    OpCase("prod_int", lambda x: tfm.reduce_prod(x, [0, 1]), [_ints[:, :2]],
           lambda x: x.prod((0, 1)), **_EXACT),
    OpCase("all", lambda x: tfm.reduce_all(x, 1), [_bools], lambda x: x.all(1), **_EXACT),
    OpCase("any_keepdims", lambda x: tfm.reduce_any(x, 0, keepdims=True), [~_bools],
           lambda x: x.any(0, keepdims=True), **_EXACT),
    OpCase("all_everything", lambda x: tfm.reduce_all(x), [_bools], np.all, **_EXACT),
    OpCase("logsumexp", lambda x: tfm.reduce_logsumexp(x, 1), [_r(3, 4) * 5],
           lambda x: np.log(np.exp(x).sum(1)), rtol=1e-5, atol=1e-5),
    OpCase("argmax", lambda x: tfm.argmax(x, 1), [_r(3, 4)], lambda x: x.argmax(1),
           low_precision=False, grad=False),
    OpCase("argmax_default_axis", lambda x: tfm.argmax(x), [_r(3, 4)],
           lambda x: x.argmax(0), low_precision=False, grad=False),
    OpCase("argmin_neg_axis", lambda x: tfm.argmin(x, -1, output_type=tf.int32),
           [_r(2, 3, 4)], lambda x: x.argmin(-1).astype(np.int32), low_precision=False,
           grad=False),
    OpCase("argmax_int_ties_first", lambda x: tfm.argmax(x, 1), [_ints],
           lambda x: x.argmax(1), **_EXACT),
    OpCase("argmax_bool", lambda x: tfm.argmin(x, 1), [_bools], lambda x: x.argmin(1),
           **_EXACT),
]



def test_reduction_graph_attrs_and_errors():
    with Graph().as_default():
        x = placeholder(tf.float32, [2, 3])
        s = tfm.reduce_sum(x, 1, keepdims=True)
        assert s.op.type == "Sum" and s.op.name == "Sum"
        assert s.op.get_attr("keep_dims") is True and s.op.get_attr("Tidx") is tf.int32
        a = tfm.argmax(x, 1)
        assert a.dtype is tf.int64 and a.op.get_attr("output_type") is tf.int64
        with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 "
                                             "dimensions"):
            tfm.reduce_sum(x, 2)
        with pytest.raises(ValueError, match=r"Expected dimension in the range \[-2, 2\)"):
            tfm.argmax(x, 2)
        u = placeholder(tf.float32, [None, 3])
        assert tfm.reduce_mean(u, 0).shape.as_list() == [3]
        assert tfm.reduce_max(u, 1, keepdims=True).shape.as_list() == [None, 1]


def test_min_max_gradient_splits_ties():
    x = tf.constant(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]))
    from ndflow.autodiff.tape import GradientTape
    with GradientTape() as tape:
        tape.watch(x)
        y = tfm.reduce_max(x, 1)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


_GRAPH_REDUCTIONS = [
    (tfm.reduce_sum, np.sum), (tfm.reduce_mean, np.mean), (tfm.reduce_max, np.max),
    (tfm.reduce_min, np.min), (tfm.reduce_prod, np.prod)]


@pytest.mark.parametrize("axes", [[-1], [0, -1], [2, 0], [], [-3]])
@pytest.mark.parametrize("keep", [False, True])
def test_constant_axes_in_a_graph_match_numpy(axes, keep):
    """A plan resolves constant axes once, when it builds the kernel (negative and unsorted
    ones normalized as per call)."""
    x = rng.uniform(0.5, 1.5, (2, 3, 4))
    ints = rng.integers(-5, 5, (2, 3, 4)).astype(np.int32)

    @tf.function
    def f(a, b):
        out = [reduce(a, axes, keepdims=keep) for reduce, _ in _GRAPH_REDUCTIONS]
        out.append(tfm.reduce_sum(b, axes, keepdims=keep))
        out.append(tfm.reduce_all(b > 0, axes, keepdims=keep))
        return out

    got = f(tf.constant(x), tf.constant(ints))
    ax = tuple(axes)
    want = [ref(x, axis=ax, keepdims=keep) for _, ref in _GRAPH_REDUCTIONS]
    want += [np.sum(ints, axis=ax, keepdims=keep).astype(np.int32),
             np.all(ints > 0, axis=ax, keepdims=keep)]
    for g, w in zip(got, want):
        assert g.dtype.as_numpy_dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)


def test_a_plan_s_reduction_kernel_holds_its_constant_axes():
    @tf.function
    def f(a):
        return tfm.reduce_sum(a, [0, -1])

    x = tf.constant(rng.uniform(size=(2, 3, 4)).astype(np.float32))
    plan = f.get_concrete_function(x)._build_plan()
    (i,) = [i for i, op in enumerate(plan.nodes()) if op.type == "Sum"]
    kernel = plan._scope[plan.kernel_names()[i]]
    out = kernel(torch.from_numpy(x.numpy()), torch.tensor([1]))   # the axes argument unread
    np.testing.assert_allclose(out.numpy(), x.numpy().sum(axis=(0, 2)), rtol=1e-6)


def test_count_nonzero_counts_non_empty_strings():
    # TF 2.21: tf.math.count_nonzero(["a", "", "b"]) -> 2 (int64);
    #   tf.math.count_nonzero([["a", ""], ["", "c"]], axis=1) -> [1, 1];
    #   tf.compat.v1.count_nonzero(["", "x"], keep_dims=True) -> [1]
    got = tf.math.count_nonzero(tf.constant(["a", "", "b"]))
    assert got.dtype == tf.int64 and int(got) == 2
    got = tf.math.count_nonzero(tf.constant([["a", ""], ["", "c"]]), axis=1)
    assert got.numpy().tolist() == [1, 1]
    assert tf.compat.v1.count_nonzero(["", "x"], keep_dims=True).numpy().tolist() == [1]


@pytest.mark.parametrize("shape,axes", [
    ((64, 2, 512), [1]), ((32, 3, 4, 256), [1]), ((1, 128, 1, 4, 1, 128), [0, 2, 3, 4]),
    ((16, 4, 2048), [-2])])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("constant_axes", [True, False])
def test_a_short_inner_axis_is_summed_as_slices(shape, axes, keep, constant_axes):
    """An axis of 2-4 elements that is not the contiguous one (the gradient of a tile or a
    repeat) is summed as that many slices added (kernels/reduction.py); the same values as
    NumPy, with the graph's axes constant or fed, on a contiguous and a sliced input."""
    from ndflow.kernels import reduction as kernels
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    wide = np.concatenate([x, rng.uniform(-1, 1, shape[:-1] + (8,)).astype(np.float32)], -1)
    sliced = torch.from_numpy(wide)[..., :shape[-1]]                     # not contiguous
    dims = sorted(a % len(shape) for a in axes)
    for t in (torch.from_numpy(x), sliced):
        short = kernels._sum_short_axis(t, dims, keep)
        assert short is not None
        np.testing.assert_allclose(short.numpy(), x.astype(np.float64).sum(
            tuple(dims), keepdims=keep), rtol=1e-5, atol=1e-5)

    @tf.function
    def f(a, ax):
        return tfm.reduce_sum(a, axes if constant_axes else ax, keepdims=keep)
    got = f(tf.constant(x), tf.constant(axes))
    np.testing.assert_allclose(got.numpy(), x.astype(np.float64).sum(tuple(dims), keepdims=keep),
                               rtol=1e-5, atol=1e-5)


def test_long_contiguous_or_small_reductions_stay_on_aten():
    from ndflow.kernels import reduction as kernels
    big = torch.zeros(64, 8, 512)
    assert kernels._sum_short_axis(big, [1], False) is None            # 8 elements
    assert kernels._sum_short_axis(torch.zeros(8192, 2, 1), [1], False) is None   # contiguous
    assert kernels._sum_short_axis(torch.zeros(4, 2, 8), [1], False) is None      # small
    assert kernels._sum_short_axis(torch.zeros(64, 2, 512), [0, 1], False) is None  # two axes
    for dtype in (torch.bfloat16, torch.int32):   # ATen's wider accumulation / integer sums
        assert kernels._sum_short_axis(torch.zeros(64, 2, 512, dtype=dtype), [1], False) is None
