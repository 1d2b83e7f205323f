"""Conv3D, MaxPool3D, AvgPool3D and their backprop ops, table-driven (harness.py)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.core.graph import Graph
from ndflow.ops import nn_conv3d, nn_pool3d
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase
from tests.ops.nn_reference_nd import conv_nd, pool_nd, to_channels_first, to_channels_last

rng = np.random.default_rng(3)


def _r(*shape):
    # Distinct values so max windows have no near-ties for finite differences.
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.0, 1.0, n)).reshape(shape)


def _conv_case(id_, xs, ws, strides, padding, dilations=None, data_format="NDHWC"):
    x, w = _r(*xs), _r(*ws)
    s5 = [1, *strides, 1] if data_format == "NDHWC" else [1, 1, *strides]
    d5 = None if dilations is None else (
        [1, *dilations, 1] if data_format == "NDHWC" else [1, 1, *dilations])
    if data_format == "NCDHW":
        x = to_channels_first(x)
        return OpCase(id_, lambda a, b: tf.nn.conv3d(a, b, s5, padding, data_format, d5), [x, w],
                      lambda a, b: to_channels_first(conv_nd(to_channels_last(a), b, strides,
                                                             padding, dilations)))
    return OpCase(id_, lambda a, b: tf.nn.conv3d(a, b, s5, padding, dilations=d5), [x, w],
                  lambda a, b: conv_nd(a, b, strides, padding, dilations))


def _pool_case(id_, kind, xs, k, s, padding, data_format="NDHWC"):
    fn = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
    k3 = [k] * 3 if isinstance(k, int) else k
    s3 = [s] * 3 if isinstance(s, int) else s
    x = _r(*xs)
    if data_format == "NCDHW":
        return OpCase(id_, lambda a: fn(a, k, s, padding, data_format), [to_channels_first(x)],
                      lambda a: to_channels_first(pool_nd(to_channels_last(a), k3, s3, padding,
                                                          kind)))
    return OpCase(id_, lambda a: fn(a, k, s, padding), [x],
                  lambda a: pool_nd(a, k3, s3, padding, kind))


CASES = [
    _conv_case("conv3d_same_s1", (2, 3, 4, 3, 2), (2, 2, 2, 2, 3), [1, 1, 1], "SAME"),
    _conv_case("conv3d_same_s2_odd", (1, 5, 4, 3, 2), (3, 2, 2, 2, 2), [2, 2, 1], "SAME"),
    _conv_case("conv3d_valid", (1, 4, 5, 4, 3), (2, 3, 2, 3, 2), [1, 2, 1], "VALID"),
    _conv_case("conv3d_dilated", (1, 5, 4, 4, 2), (2, 2, 2, 2, 2), [1, 1, 1], "SAME",
               dilations=[2, 1, 2]),
    _conv_case("conv3d_grouped", (1, 3, 3, 3, 4), (2, 2, 2, 2, 4), [1, 1, 1], "VALID"),
    _conv_case("conv3d_ncdhw", (1, 4, 3, 3, 2), (2, 2, 2, 2, 3), [1, 1, 1], "SAME",
               data_format="NCDHW"),
    OpCase("conv3d_transpose",
           lambda a, b: tf.nn.conv3d_transpose(a, b, [1, 5, 4, 3, 2], 2, "SAME"),
           [_r(1, 3, 2, 2, 3), _r(2, 2, 2, 2, 3)],
           lambda a, b: _conv3d_transpose_ref(a, b, (1, 5, 4, 3, 2), 2, "SAME")),
    OpCase("conv3d_backprop_filter_v1",
           lambda x, g: tf.compat.v1.nn.conv3d_backprop_filter(
               x, [2, 2, 2, 2, 3], g, [1, 1, 1, 1, 1], "SAME"),
           [_r(1, 3, 3, 2, 2), _r(1, 3, 3, 2, 3)],
           lambda x, g: _conv3d_filter_ref(x, g, (2, 2, 2, 2, 3), "SAME")),
    _pool_case("max3d_k2s2_same_odd", "max", (2, 5, 3, 4, 2), 2, 2, "SAME"),
    _pool_case("max3d_k3s1_same", "max", (1, 4, 4, 3, 2), 3, 1, "SAME"),
    _pool_case("max3d_valid_mixed", "max", (1, 5, 4, 4, 1), [2, 3, 2], [2, 1, 2], "VALID"),
    _pool_case("max3d_ncdhw", "max", (1, 4, 3, 3, 2), 2, 2, "SAME", "NCDHW"),
    _pool_case("avg3d_k2s2_same_odd", "avg", (2, 5, 3, 4, 2), 2, 2, "SAME"),
    _pool_case("avg3d_k3s2_same", "avg", (1, 5, 5, 4, 2), 3, 2, "SAME"),
    _pool_case("avg3d_valid", "avg", (1, 4, 5, 3, 2), [2, 2, 3], 1, "VALID"),
    _pool_case("avg3d_ncdhw", "avg", (1, 3, 5, 3, 3), 2, [1, 2, 2], "SAME", "NCDHW"),
    OpCase("max_pool3d_grad_raw",
           lambda x, g: nn_pool3d.max_pool3d_grad(
               x, tf.nn.max_pool3d(x, 2, 2, "SAME"), g, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
           [_r(1, 3, 3, 4, 2), _r(1, 2, 2, 2, 2)],
           lambda x, g: _vjp(lambda a: pool_nd(a, [2] * 3, [2] * 3, "SAME"), x, g),
           grad=(1,)),
    OpCase("avg_pool3d_grad_raw",
           lambda g: nn_pool3d.avg_pool3d_grad([1, 3, 3, 4, 2], g, [1, 2, 2, 2, 1],
                                               [1, 2, 2, 2, 1], "SAME"),
           [_r(1, 2, 2, 2, 2)],
           lambda g: _vjp(lambda a: pool_nd(a, [2] * 3, [2] * 3, "SAME", "avg"),
                          np.zeros((1, 3, 3, 4, 2)), g)),
]


def _vjp(f, x, g, eps=1e-6):
    """sum(g * f(x)) differentiated by central differences (f piecewise linear here)."""
    out = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1).astype(np.float64)
    for i in range(flat.size):
        p, m = flat.copy(), flat.copy()
        p[i] += eps
        m[i] -= eps
        out.reshape(-1)[i] = (np.sum(g * f(p.reshape(x.shape)))
                              - np.sum(g * f(m.reshape(x.shape)))) / (2 * eps)
    return out


def _conv3d_transpose_ref(y, w, out_shape, s, padding):
    # The transpose of conv is its input gradient: differentiate sum(y * conv(x)) in x.
    return _vjp(lambda x: conv_nd(x, w, [s] * 3, padding), np.zeros(out_shape), y)


def _conv3d_filter_ref(x, g, w_shape, padding):
    return _vjp(lambda w: conv_nd(x, w, [1] * 3, padding), np.zeros(w_shape), g)


def test_conv3d_gradient_graph_holds_tf_backprop_ops():
    g = Graph()
    with g.as_default():
        x = placeholder(tf.float32, [1, 4, 4, 4, 2])
        w = placeholder(tf.float32, [2, 2, 2, 2, 3])
        dx, dw = tf.gradients(tf.nn.conv3d(x, w, [1] * 5, "SAME"), [x, w])
    assert dx.op.type == "Conv3DBackpropInputV2" and dw.op.type == "Conv3DBackpropFilterV2"
    assert dx.shape.as_list() == [1, 4, 4, 4, 2] and dw.shape.as_list() == [2, 2, 2, 2, 3]


def test_pool3d_second_order_gradients():
    # d/dg of MaxPool3DGrad is MaxPool3DGradGrad; of AvgPool3DGrad, AvgPool3D.
    x = tf.constant(_r(1, 4, 4, 4, 1))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.max_pool3d(x, 2, 2, "VALID")
        dx = inner.gradient(y, x)
        z = tf.reduce_sum(dx * x)
    ddx = outer.gradient(z, x)
    np.testing.assert_allclose(ddx.numpy(), dx.numpy())


def test_conv3d_errors():
    with Graph().as_default():
        x = placeholder(tf.float32, [2, 5, 3, 4, 4])
        with pytest.raises(ValueError, match=r"Depth of input \(4\) is not a multiple of input "
                                             r"depth of filter \(3\)"):
            tf.nn.conv3d(x, placeholder(tf.float32, [2, 2, 2, 3, 3]), [1] * 5, "SAME")
        with pytest.raises(ValueError, match="list of length 4 less than minimum 5"):
            tf.nn.conv3d(x, placeholder(tf.float32, [2, 2, 2, 2, 3]), [1] * 4, "SAME")
        with pytest.raises(ValueError, match="Shape must be rank 5 but is rank 4"):
            tf.nn.conv3d(placeholder(tf.float32, [2, 5, 3, 4]),
                         placeholder(tf.float32, [2, 2, 2, 2, 3]), [1] * 5, "SAME")
        with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 2 "
                                             "from 1"):
            tf.nn.max_pool3d(placeholder(tf.float32, [2, 1, 3, 4, 2]), 2, 2, "VALID")
    with pytest.raises(TypeError, match="Expected list for 'strides'"):
        tf.nn.conv3d(np.ones((1, 2, 2, 2, 1), np.float32), np.ones((1, 1, 1, 1, 1), np.float32),
                     1, "SAME")
    with pytest.raises(ValueError, match="ksize should be of length 1, 3 or 5"):
        tf.nn.max_pool3d(np.ones((1, 2, 2, 2, 1), np.float32), [1, 2, 2, 2], 1, "SAME")
    with pytest.raises(UnimplementedError, match="batch dimension"):
        tf.nn.max_pool3d(np.ones((2, 2, 2, 2, 1), np.float32), [2, 1, 1, 1, 1], 1, "SAME")
    with pytest.raises(UnimplementedError, match="depth dimension"):
        tf.nn.avg_pool3d(np.ones((2, 2, 2, 2, 2), np.float32), 1, [1, 1, 1, 1, 2], "SAME")
    with pytest.raises(InvalidArgumentError):
        nn_conv3d.conv3d(np.ones((1, 2, 2, 2, 4), np.float32),
                         np.ones((1, 1, 1, 3, 1), np.float32), [1] * 5, "SAME")


def test_eager_backprop_sizes_are_read_per_call():
    # Eager kernels are cached by input shapes: two calls with the same shapes but different
    # size values must each get their own output shape.
    g = np.ones((1, 2, 2, 2, 2), np.float32)
    args = ([1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME")
    a = nn_pool3d.avg_pool3d_grad([1, 3, 3, 4, 2], g, *args)
    b = nn_pool3d.avg_pool3d_grad([1, 3, 4, 3, 2], g, *args)
    assert a.shape.as_list() == [1, 3, 3, 4, 2] and b.shape.as_list() == [1, 3, 4, 3, 2]
    w = np.ones((2, 2, 2, 2, 2), np.float32)
    c = tf.nn.conv3d_transpose(g, w, [1, 4, 4, 4, 2], 2, "SAME")
    d = tf.nn.conv3d_transpose(g, w, [1, 3, 4, 3, 2], 2, "SAME")
    assert c.shape.as_list() == [1, 4, 4, 4, 2] and d.shape.as_list() == [1, 3, 4, 3, 2]


def test_backprop_out_size_mismatch_is_tensorflows_error():
    # TF 2.21 (its reference CPU kernels, TF_ENABLE_ONEDNN_OPTS=0; oneDNN's build aborts):
    #   tf.nn.conv3d_transpose(tf.ones([1,2,2,2,1]), tf.ones([3,3,3,1,1]), [1,5,5,5,1], 2, "SAME")
    #   tf.raw_ops.Conv3DBackpropInputV2(input_sizes=[1,5,5,5,1], filter=ones([3,3,3,1,1]),
    #       out_backprop=ones([1,3,3,2,1]), strides=[1,2,2,2,1], padding="VALID")
    #   tf.raw_ops.Conv3DBackpropFilterV2(input=ones([1,5,5,5,1]), filter_sizes=[3,3,3,1,1],
    #       out_backprop=ones([1,3,2,3,1]), strides=[1,2,2,2,1], padding="SAME")
    tail = "input: 5 filter: 3 output: {} stride: 2 dilation: 1"
    with pytest.raises(InvalidArgumentError, match="^Conv3DBackpropInputOp: Size of out_backprop "
                       "doesn't match computed: actual = 2, computed = 3 spatial_dim: 1 "
                       + tail.format(2)):
        tf.nn.conv3d_transpose(tf.ones([1, 2, 2, 2, 1]), tf.ones([3, 3, 3, 1, 1]),
                               [1, 5, 5, 5, 1], 2, "SAME")
    with pytest.raises(InvalidArgumentError, match=r"^Conv3DBackpropInputOp: .*actual = 3, "
                       r"computed = 2 spatial_dim: 1 " + tail.format(3)
                       + r" \[Op:Conv3DBackpropInputV2\]$"):
        tf.raw_ops.Conv3DBackpropInputV2(input_sizes=[1, 5, 5, 5, 1],
                                         filter=tf.ones([3, 3, 3, 1, 1]),
                                         out_backprop=tf.ones([1, 3, 3, 2, 1]),
                                         strides=[1, 2, 2, 2, 1], padding="VALID")
    with pytest.raises(InvalidArgumentError, match=r"^Conv3DBackpropFilterOp: .*actual = 2, "
                       r"computed = 3 spatial_dim: 2 " + tail.format(2)
                       + r" \[Op:Conv3DBackpropFilterV2\]$"):
        tf.raw_ops.Conv3DBackpropFilterV2(input=tf.ones([1, 5, 5, 5, 1]),
                                          filter_sizes=[3, 3, 3, 1, 1],
                                          out_backprop=tf.ones([1, 3, 2, 3, 1]),
                                          strides=[1, 2, 2, 2, 1], padding="SAME")


def test_conv_pool_conv_chain_gradients_match_finite_differences():
    """MaxPool3DGrad fed by Conv3DBackpropInputV2 (as in any Conv3D, MaxPooling3D, Conv3D
    model): the two kernels agree on the gradient's memory layout, and the values are the
    finite differences' (float64)."""
    from tests.keras.layer_checks import numeric_grad
    x0 = _r(2, 6, 8, 8, 2)
    w1, w2 = _r(3, 3, 3, 2, 4), _r(2, 2, 2, 4, 3)

    def loss(x):
        h = tf.nn.max_pool3d(tf.nn.conv3d(x, w1, [1] * 5, "SAME"), 2, 2, "VALID")
        y = tf.nn.conv3d(h, w2, [1] * 5, "SAME")
        return tf.reduce_sum(y * y)
    xv = tf.Variable(x0)
    with tf.GradientTape() as tape:
        value = loss(xv)
    got = tape.gradient(value, xv).numpy()
    want = numeric_grad(lambda v: float(loss(tf.constant(v)).numpy()), x0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
