"""MaxPool, AvgPool and their gradient ops, table-driven (harness.py)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import nn_pool
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from tests.ops import nn_reference as ref
from tests.ops.harness import OpCase

rng = np.random.default_rng(11)


def _r(*shape):
    # Distinct values (a shuffled grid) so max windows have no near-ties for finite differences.
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.0, 1.0, n)).reshape(shape)


def _nchw(x):
    return x.transpose(0, 3, 1, 2)


def _pool_case(id_, kind, x, k, s, padding, data_format="NHWC", wrapper=None):
    fn = wrapper or (tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d)
    kk = (k, k) if isinstance(k, int) else tuple(k)[-2:] if len(k) == 2 else tuple(k)[1:3]
    ss = (s, s) if isinstance(s, int) else tuple(s)[-2:] if len(s) == 2 else tuple(s)[1:3]
    return OpCase(id_, lambda a: fn(a, k, s, padding, data_format=data_format), [x],
                  lambda a: ref.pool2d(a, kk, ss, padding, kind, data_format))


CASES = [
    _pool_case("max_k2s2_same_even", "max", _r(2, 6, 4, 3), 2, 2, "SAME"),
    _pool_case("max_k2s2_same_odd", "max", _r(2, 7, 5, 2), 2, 2, "SAME"),
    _pool_case("max_k3s1_same", "max", _r(1, 5, 6, 2), 3, 1, "SAME"),
    _pool_case("max_k4s1_same_asym", "max", _r(1, 5, 6, 2), 4, 1, "SAME"),
    _pool_case("max_k3s2_valid", "max", _r(2, 7, 6, 2), 3, 2, "VALID"),
    _pool_case("max_k2x3_s1x2", "max", _r(1, 5, 7, 2), [2, 3], [1, 2], "SAME"),
    _pool_case("max_nchw_same_odd", "max", _nchw(_r(2, 5, 7, 3)), 2, 2, "SAME", "NCHW"),
    _pool_case("max_pool_v2_4list", "max", _r(1, 6, 6, 2), [1, 3, 3, 1], [1, 2, 2, 1], "SAME",
               wrapper=tf.nn.max_pool),
    _pool_case("avg_k2s2_same_even", "avg", _r(2, 6, 4, 3), 2, 2, "SAME"),
    _pool_case("avg_k2s2_same_odd", "avg", _r(2, 7, 5, 2), 2, 2, "SAME"),
    _pool_case("avg_k3s1_same", "avg", _r(1, 5, 6, 2), 3, 1, "SAME"),
    _pool_case("avg_k4s1_same_asym", "avg", _r(1, 5, 6, 2), 4, 1, "SAME"),
    _pool_case("avg_k3s2_valid", "avg", _r(2, 7, 6, 2), 3, 2, "VALID"),
    _pool_case("avg_nchw_same_odd", "avg", _nchw(_r(2, 5, 7, 3)), 3, 2, "SAME", "NCHW"),
    OpCase("max_explicit_padding",
           lambda a: tf.nn.max_pool2d(a, 3, 2, [[0, 0], [1, 1], [0, 2], [0, 0]]), [_r(1, 6, 5, 2)],
           lambda a: ref.pool2d(np.pad(a, ((0, 0), (1, 1), (0, 2), (0, 0)),
                                       constant_values=-np.inf), (3, 3), (2, 2), "VALID")),
    OpCase("max_pool_grad_raw",
           lambda x, g: nn_pool.max_pool_grad(x, tf.nn.max_pool2d(x, 2, 2, "SAME"), g, [1, 2, 2, 1],
                                         [1, 2, 2, 1], "SAME"),
           [_r(1, 5, 5, 2), _r(1, 3, 3, 2)], lambda x, g: _max_grad_ref(x, g, 2, 2, "SAME"),
           grad=(1,), low_precision=False),
    OpCase("avg_pool_grad_raw",
           lambda g: nn_pool.avg_pool_grad(np.array([1, 5, 5, 2], np.int32), g, [1, 2, 2, 1],
                                      [1, 2, 2, 1], "SAME"),
           [_r(1, 3, 3, 2)], lambda g: _avg_grad_ref(g, (1, 5, 5, 2), 2, 2, "SAME")),
]


def _max_grad_ref(x, g, k, s, padding):
    out = np.zeros_like(x)
    oh, ow = g.shape[1:3]
    h, w = x.shape[1:3]
    total = max((oh - 1) * s + k - h, 0)
    pt = total // 2
    pl = max((ow - 1) * s + k - w, 0) // 2
    for n in range(x.shape[0]):
        for c in range(x.shape[3]):
            for i in range(oh):
                for j in range(ow):
                    h0, w0 = max(i * s - pt, 0), max(j * s - pl, 0)
                    win = x[n, h0:i * s - pt + k, w0:j * s - pl + k, c]
                    a, b = np.unravel_index(np.argmax(win), win.shape)
                    out[n, h0 + a, w0 + b, c] += g[n, i, j, c]
    return out


def _avg_grad_ref(g, shape, k, s, padding):
    out = np.zeros(shape)
    flat = out.reshape(-1)
    for i in range(flat.size):
        e = np.zeros(flat.size)
        e[i] = 1.0
        flat[i] = np.sum(ref.pool2d(e.reshape(shape), (k, k), (s, s), padding, "avg") * g)
    return out



def test_pool_backward_graph_ops():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [2, 8, 8, 3])
        y = tf.nn.max_pool2d(x, 2, 2, "SAME") + tf.nn.avg_pool2d(x, 2, 2, "SAME")
        gradients([y], [x])
    types = {op.type for op in g.get_operations() if op.name.startswith("gradients/")}
    assert {"MaxPoolGrad", "AvgPoolGrad"} <= types


def test_max_pool_second_order_uses_max_pool_grad_grad():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [1, 4, 4, 1])
        y = tf.nn.max_pool2d(x, 2, 2, "VALID")
        (dx,) = gradients([y], [x])
        gradients([dx], [x])
    assert "MaxPoolGradGrad" in {op.type for op in g.get_operations()}


def test_max_pool_grad_grad_values():
    x = _r(1, 4, 4, 2)
    g = _r(1, 4, 4, 2)
    xt = tf.constant(x)
    y = tf.nn.max_pool2d(xt, 2, 2, "VALID")
    out = apply_op(nn_pool.MaxPoolGradGrad, [xt, y, tf.constant(g)],
                   {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"})
    got = out.outputs[0].numpy()
    expected = np.zeros((1, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            for c in range(2):
                win = x[0, 2 * i:2 * i + 2, 2 * j:2 * j + 2, c]
                a, b = np.unravel_index(np.argmax(win), win.shape)
                expected[0, i, j, c] = g[0, 2 * i + a, 2 * j + b, c]
    np.testing.assert_allclose(got, expected)


def test_max_pool_int32():
    x = rng.integers(-100, 100, (1, 4, 4, 2)).astype(np.int32)
    got = tf.nn.max_pool2d(tf.constant(x), 2, 2, "VALID").numpy()
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref.pool2d(x.astype(float), (2, 2), (2, 2), "VALID"))


def test_pool_errors():
    x = tf.constant(np.zeros((1, 4, 4, 2), np.float32))
    with pytest.raises(InvalidArgumentError, match="Value for attr 'padding' of \"BAD\""):
        tf.nn.max_pool2d(x, 2, 2, "BAD")
    with Graph().as_default(), pytest.raises(ValueError, match="'padding'.*'BAD'"):
        tf.nn.max_pool2d(tf.zeros((1, 4, 4, 2)), 2, 2, "BAD")
    with pytest.raises(ValueError, match="ksize should be of length 1, 2 or 4 but was 3"):
        tf.nn.max_pool2d(x, [2, 2, 2], 2, "SAME")
    with pytest.raises(InvalidArgumentError, match="Pooling is not yet supported on the batch"):
        tf.nn.max_pool2d(x, [2, 2, 2, 1], [1, 2, 2, 1], "SAME")
    g = Graph()
    with g.as_default():
        p = placeholder(dtypes.float32, [None, 3, 3, 2])
        with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 4 "
                           "from 3 for '{{node MaxPool2d}} = MaxPool"):
            tf.nn.max_pool2d(p, 4, 1, "VALID")
        assert tf.nn.avg_pool2d(p, 2, 2, "SAME").shape.as_list() == [None, 2, 2, 2]
