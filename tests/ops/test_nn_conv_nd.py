"""conv1d / conv1d_transpose, the rank-generic convolution and pool wrappers, 1-D pools,
atrous and separable convolutions, table-driven (harness.py) against NumPy N-d references."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops import nn_conv
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase
from tests.ops.nn_reference_nd import conv_nd, pool_nd, to_channels_first, to_channels_last

rng = np.random.default_rng(8)


def _r(*shape):
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.0, 1.0, n)).reshape(shape)


def _vjp(f, x, g, eps=1e-6):
    out = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1).astype(np.float64)
    for i in range(flat.size):
        p, m = flat.copy(), flat.copy()
        p[i] += eps
        m[i] -= eps
        out.reshape(-1)[i] = (np.sum(g * f(p.reshape(x.shape)))
                              - np.sum(g * f(m.reshape(x.shape)))) / (2 * eps)
    return out


def _depthwise_ref(x, w, strides, padding, dilations):
    c, m = w.shape[2:]
    # A depthwise conv is a grouped conv with one input channel per group.
    full = np.zeros((*w.shape[:2], 1, c * m))
    for i in range(c):
        full[:, :, 0, i * m:(i + 1) * m] = w[:, :, i, :]
    return conv_nd(x, full, strides, padding, dilations)


CASES = [
    OpCase("conv1d_same", lambda x, w: tf.nn.conv1d(x, w, 1, "SAME"), [_r(2, 7, 3), _r(3, 3, 4)],
           lambda x, w: conv_nd(x, w, [1], "SAME")),
    OpCase("conv1d_stride2_valid", lambda x, w: tf.nn.conv1d(x, w, 2, "VALID"),
           [_r(2, 8, 2), _r(3, 2, 3)], lambda x, w: conv_nd(x, w, [2], "VALID")),
    OpCase("conv1d_dilated", lambda x, w: tf.nn.conv1d(x, w, 1, "SAME", dilations=2),
           [_r(1, 9, 2), _r(3, 2, 2)], lambda x, w: conv_nd(x, w, [1], "SAME", [2])),
    OpCase("conv1d_ncw", lambda x, w: tf.nn.conv1d(x, w, [2], "SAME", data_format="NCW"),
           [to_channels_first(_r(2, 7, 3)), _r(2, 3, 2)],
           lambda x, w: to_channels_first(conv_nd(to_channels_last(x), w, [2], "SAME"))),
    OpCase("conv1d_v1_value", lambda x, w: tf.compat.v1.nn.conv1d(x, w, 1, "VALID"),
           [_r(1, 5, 2), _r(2, 2, 2)], lambda x, w: conv_nd(x, w, [1], "VALID")),
    OpCase("conv1d_transpose", lambda y, w: tf.nn.conv1d_transpose(y, w, [1, 7, 2], 2, "SAME"),
           [_r(1, 4, 3), _r(3, 2, 3)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [2], "SAME"), np.zeros((1, 7, 2)), y)),
    OpCase("convolution_1d", lambda x, w: tf.nn.convolution(x, w, padding="SAME"),
           [_r(2, 6, 2), _r(3, 2, 3)], lambda x, w: conv_nd(x, w, [1], "SAME")),
    OpCase("convolution_2d_strided", lambda x, w: tf.nn.convolution(x, w, 2, "SAME"),
           [_r(1, 5, 6, 2), _r(3, 2, 2, 3)], lambda x, w: conv_nd(x, w, [2, 2], "SAME")),
    OpCase("convolution_2d_dilated", lambda x, w: tf.nn.convolution(x, w, dilations=[2, 1]),
           [_r(1, 6, 5, 2), _r(2, 2, 2, 2)],
           lambda x, w: conv_nd(x, w, [1, 1], "VALID", [2, 1])),
    OpCase("convolution_3d", lambda x, w: tf.nn.convolution(x, w, padding="SAME"),
           [_r(1, 3, 4, 3, 2), _r(2, 2, 2, 2, 2)],
           lambda x, w: conv_nd(x, w, [1, 1, 1], "SAME")),
    OpCase("convolution_v1_dilation_rate",
           lambda x, w: tf.compat.v1.nn.convolution(x, w, "SAME", dilation_rate=[2]),
           [_r(1, 7, 2), _r(3, 2, 2)], lambda x, w: conv_nd(x, w, [1], "SAME", [2])),
    OpCase("atrous_conv2d", lambda x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"),
           [_r(1, 6, 6, 2), _r(3, 3, 2, 2)],
           lambda x, w: conv_nd(x, w, [1, 1], "SAME", [2, 2])),
    OpCase("separable_conv2d",
           lambda x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME"),
           [_r(1, 5, 4, 2), _r(3, 3, 2, 2), _r(1, 1, 4, 3)],
           lambda x, d, p: conv_nd(_depthwise_ref(x, d, [1, 1], "SAME", [1, 1]), p, [1, 1],
                                   "VALID")),
    OpCase("separable_conv2d_v1_rate",
           lambda x, d, p: tf.compat.v1.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID",
                                                            rate=[2, 2]),
           [_r(1, 6, 6, 2), _r(2, 2, 2, 1), _r(1, 1, 2, 3)],
           lambda x, d, p: conv_nd(_depthwise_ref(x, d, [1, 1], "VALID", [2, 2]), p, [1, 1],
                                   "VALID")),
    OpCase("max_pool1d", lambda x: tf.nn.max_pool1d(x, 2, 2, "SAME"), [_r(2, 7, 3)],
           lambda x: pool_nd(x, [2], [2], "SAME")),
    OpCase("max_pool1d_ncw", lambda x: tf.nn.max_pool1d(x, [3], 1, "VALID", "NCW"),
           [_r(2, 2, 6)],
           lambda x: to_channels_first(pool_nd(to_channels_last(x), [3], [1], "VALID"))),
    OpCase("max_pool1d_explicit", lambda x: tf.nn.max_pool1d(x, 3, 2, [[0, 0], [1, 2], [0, 0]]),
           [_r(1, 6, 2)],
           lambda x: pool_nd(np.pad(x, ((0, 0), (1, 2), (0, 0)), constant_values=-np.inf), [3],
                             [2], "VALID")),
    OpCase("avg_pool1d", lambda x: tf.nn.avg_pool1d(x, 3, 2, "SAME"), [_r(2, 8, 2)],
           lambda x: pool_nd(x, [3], [2], "SAME", "avg")),
    OpCase("max_pool_nd_rank3", lambda x: tf.nn.max_pool(x, 2, 1, "VALID"), [_r(1, 5, 2)],
           lambda x: pool_nd(x, [2], [1], "VALID")),
    OpCase("avg_pool_nd_rank5", lambda x: tf.nn.avg_pool(x, 2, 2, "SAME"), [_r(1, 3, 4, 3, 2)],
           lambda x: pool_nd(x, [2] * 3, [2] * 3, "SAME", "avg")),
    OpCase("pool_max_2d", lambda x: tf.nn.pool(x, [2, 3], "MAX", [2, 1], "SAME"),
           [_r(1, 5, 5, 2)], lambda x: pool_nd(x, [2, 3], [2, 1], "SAME")),
    OpCase("pool_avg_1d", lambda x: tf.nn.pool(x, [3], "AVG", padding="SAME"), [_r(2, 6, 2)],
           lambda x: pool_nd(x, [3], [1], "SAME", "avg")),
    OpCase("pool_avg_3d", lambda x: tf.nn.pool(x, [2, 2, 2], "AVG", [2, 2, 2]),
           [_r(1, 4, 5, 4, 1)], lambda x: pool_nd(x, [2] * 3, [2] * 3, "VALID", "avg")),
    OpCase("pool_v1_max_ncw", lambda x: tf.compat.v1.nn.pool(x, [2], "MAX", "VALID",
                                                               data_format="NCW"),
           [_r(1, 2, 5)],
           lambda x: to_channels_first(pool_nd(to_channels_last(x), [2], [1], "VALID"))),
]


def test_conv1d_graph_is_tf_composition():
    with Graph().as_default():
        y = tf.nn.conv1d(placeholder(tf.float32, [2, 5, 3]), placeholder(tf.float32, [2, 3, 4]),
                         1, "SAME")
        assert y.op.type == "Squeeze" and y.op.inputs[0].op.type == "Conv2D"
        assert y.shape.as_list() == [2, 5, 4]


def test_wrapper_errors():
    x = np.ones((2, 5, 5, 3), np.float32)
    w = np.ones((2, 2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"`strides > 1` not supported in conjunction with "
                                         r"`dilation_rate > 1`. Received: strides=\[2 2\]"):
        tf.nn.convolution(x, w, strides=2, dilations=2)
    with pytest.raises(ValueError, match="`data_format` must be 'NWC' or 'NCW'"):
        tf.nn.conv1d(np.ones((2, 5, 3), np.float32), np.ones((2, 3, 4), np.float32), 1, "SAME",
                     data_format="NDHWC")
    with pytest.raises(ValueError, match="pooling with 'SAME' padding is not implemented"):
        tf.nn.pool(x, [2, 2], "AVG", padding="SAME", dilations=[2, 2])
    with pytest.raises(ValueError, match="2-D FOO pooling is not supported"):
        tf.nn.pool(x, [2, 2], "FOO")
    with pytest.raises(ValueError, match=r"`len\(window_shape\)` must be 1, 2, or 3"):
        tf.nn.pool(x, [2, 2, 2, 2], "MAX")
    with pytest.raises(ValueError, match="must have rank 3"):
        tf.nn.pool(x, [2], "MAX")
    with pytest.raises(ValueError, match=r"`strides` > `window_shape` not supported"):
        tf.nn.pool(x, [2, 2], "MAX", strides=[3, 3])
    with pytest.raises(ValueError, match=r"`input.shape.rank` must be 3, 4 or 5"):
        tf.nn.max_pool(np.ones((2, 5), np.float32), 2, 2, "SAME")
    with pytest.raises(ValueError, match="ksize should be of length 1, 1 or 3. Received"):
        tf.nn.max_pool1d(np.ones((2, 5, 3), np.float32), [2, 2], 1, "SAME")


CASES += [
    OpCase("pool_max_dilated_2d", lambda x: tf.nn.pool(x, [2, 2], "MAX", dilations=[2, 3]),
           [_r(2, 7, 8, 2)], lambda x: pool_nd(x, [2, 2], [1, 1], "VALID", "max", [2, 3])),
    OpCase("pool_avg_dilated_1d", lambda x: tf.nn.pool(x, [3], "AVG", dilations=[2]),
           [_r(1, 9, 2)], lambda x: pool_nd(x, [3], [1], "VALID", "avg", [2])),
    OpCase("pool_avg_dilated_nchw",
           lambda x: tf.nn.pool(x, [2, 2], "AVG", dilations=[2, 2], data_format="NCHW"),
           [to_channels_first(_r(1, 6, 5, 2))],
           lambda x: to_channels_first(pool_nd(to_channels_last(x), [2, 2], [1, 1], "VALID",
                                               "avg", [2, 2]))),
]


def test_eager_gradients_of_inputs_sharing_output_shapes():
    # Rows 8 and 7 with stride 2 both give 4 output rows: the eager backprop kernels (cached
    # by input shapes) must still return each input's own shape.
    w = tf.constant(np.ones((3, 3, 1, 1), np.float32))
    for n in (8, 7):
        x = tf.constant(np.ones((1, n, n, 1), np.float32))
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = tf.nn.conv2d(x, w, 2, "SAME")
            z = tf.nn.avg_pool2d(x, 2, 2, "SAME")
        assert t.gradient(y, x).shape.as_list() == [1, n, n, 1]
        assert t.gradient(z, x).shape.as_list() == [1, n, n, 1]
        np.testing.assert_allclose(t.gradient(z, x).numpy().sum(), 16.0, rtol=1e-6)


def _wstb_conv(x, w):
    # with_space_to_batch around an undilated SAME conv is the dilated SAME conv.
    return tf.nn.with_space_to_batch(x, [2, 3], "SAME",
                                     lambda a, n, p: tf.nn.conv2d(a, w, 1, p), [3, 2])


CASES += [
    OpCase("conv_transpose_1d", lambda y, w: tf.nn.conv_transpose(y, w, [1, 7, 2], 2),
           [_r(1, 4, 3), _r(3, 2, 3)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [2], "SAME"), np.zeros((1, 7, 2)), y)),
    OpCase("conv_transpose_2d_valid",
           lambda y, w: tf.nn.conv_transpose(y, w, [1, 5, 6, 2], [1, 2], "VALID"),
           [_r(1, 4, 3, 3), _r(2, 2, 2, 3)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [1, 2], "VALID"), np.zeros((1, 5, 6, 2)),
                             y)),
    OpCase("conv_transpose_3d", lambda y, w: tf.nn.conv_transpose(y, w, [1, 3, 4, 3, 2], 2),
           [_r(1, 2, 2, 2, 2), _r(2, 2, 2, 2, 2)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [2] * 3, "SAME"),
                             np.zeros((1, 3, 4, 3, 2)), y)),
    OpCase("atrous_conv2d_transpose_same",
           lambda y, w: tf.nn.atrous_conv2d_transpose(y, w, [1, 7, 6, 2], 2, "SAME"),
           [_r(1, 7, 6, 3), _r(3, 2, 2, 3)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [1, 1], "SAME", [2, 2]),
                             np.zeros((1, 7, 6, 2)), y)),
    OpCase("atrous_conv2d_transpose_valid",
           lambda y, w: tf.nn.atrous_conv2d_transpose(y, w, [1, 7, 6, 2], 2, "VALID"),
           [_r(1, 3, 4, 3), _r(3, 2, 2, 3)],
           lambda y, w: _vjp(lambda x: conv_nd(x, w, [1, 1], "VALID", [2, 2]),
                             np.zeros((1, 7, 6, 2)), y)),
    OpCase("with_space_to_batch_same_conv", _wstb_conv, [_r(1, 7, 6, 2), _r(3, 2, 2, 2)],
           lambda x, w: conv_nd(x, w, [1, 1], "SAME", [2, 3])),
    OpCase("depthwise_backprop_input_raw",
           lambda w, g: tf.nn.depthwise_conv2d_backprop_input([1, 5, 4, 2], w, g, [1, 1, 1, 1],
                                                              "SAME"),
           [_r(2, 2, 2, 2), _r(1, 5, 4, 4)],
           lambda w, g: _vjp(lambda x: _depthwise_ref(x, w, [1, 1], "SAME", [1, 1]),
                             np.zeros((1, 5, 4, 2)), g)),
    OpCase("depthwise_backprop_filter_v1_native",
           lambda x, g: tf.compat.v1.nn.depthwise_conv2d_native_backprop_filter(
               x, [2, 2, 2, 2], g, [1, 1, 1, 1], "VALID"),
           [_r(1, 4, 4, 2), _r(1, 3, 3, 4)],
           lambda x, g: _vjp(lambda w: _depthwise_ref(x, w, [1, 1], "VALID", [1, 1]),
                             np.zeros((2, 2, 2, 2)), g)),
]


def test_transpose_wrapper_errors():
    y = np.ones((1, 3, 3, 3), np.float32)
    w = np.ones((2, 2, 2, 3), np.float32)
    with pytest.raises(ValueError, match="`output_shape` must be of length 3, 4 or 5"):
        tf.nn.conv_transpose(y, w, [1, 2], 1)
    with pytest.raises(ValueError, match="`rate` cannot be less than one"):
        tf.nn.atrous_conv2d_transpose(y, w, [1, 3, 3, 2], 0, "SAME")
    with pytest.raises(ValueError, match="`output_shape` channel count must be compatible"):
        tf.nn.atrous_conv2d_transpose(y, w, [1, 3, 3, 5], 2, "SAME")
    with pytest.raises(ValueError, match="`filter_shape` must be specified"):
        tf.nn.with_space_to_batch(y, [2, 2], "SAME", lambda a, n, p: a)
    with pytest.raises(ValueError, match="monotonically increasing"):
        tf.nn.with_space_to_batch(y, [2, 2], "VALID", lambda a, n, p: a, spatial_dims=[2, 1])


def test_conv_backprop_out_size_message():
    w = np.ones((3, 2, 2, 3), np.float32)
    g = np.ones((1, 3, 4, 3), np.float32)
    msg = ("Size of out_backprop doesn't match computed: actual = 3, computed = 5 "
           "spatial_dim: 1 input: 7 filter: 3 output: 3 stride: 1 dilation: 1")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Conv2DCustomBackpropInput: " + msg):
        nn_conv.conv2d_backprop_input([1, 7, 6, 2], w, g, [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Conv2DCustomBackpropFilter: " + msg):
        nn_conv.conv2d_backprop_filter(np.ones((1, 7, 6, 2), np.float32), [3, 2, 2, 3], g,
                                       [1, 1, 1, 1], "VALID")
