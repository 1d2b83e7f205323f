"""Conv2D, DepthwiseConv2dNative, their backprop ops and BiasAdd, table-driven (harness.py)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.autodiff.gradients import gradients
from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import nn_conv
from ndflow.ops.apply import apply_op
from ndflow.ops.array_core import placeholder
from tests.ops import nn_reference as ref
from tests.ops.harness import OpCase

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def _nchw(x):
    return x.transpose(0, 3, 1, 2)


def _conv_case(id_, x, w, strides=1, padding="SAME", dilations=1, data_format="NHWC", **kw):
    def fn(a, b):
        return tf.nn.conv2d(a, b, strides, padding, data_format=data_format, dilations=dilations)

    s = (strides, strides) if isinstance(strides, int) else tuple(strides)
    d = (dilations, dilations) if isinstance(dilations, int) else tuple(dilations)
    explicit = None
    if isinstance(padding, list):
        h, w_ = (1, 2) if data_format == "NHWC" else (2, 3)
        explicit = (tuple(padding[h]), tuple(padding[w_]))
    pad = "EXPLICIT" if explicit else padding
    return OpCase(id_, fn, [x, w], lambda a, b: ref.conv2d(a, b, s, pad, d, data_format,
                                                            explicit),
                  rtol=1e-5, atol=1e-5, **kw)


def _sizes(shape):
    return np.asarray(shape, np.int32)


CASES = [
    _conv_case("conv_same_odd", _r(2, 5, 7, 3), _r(3, 3, 3, 4)),
    _conv_case("conv_same_even_kernel", _r(1, 6, 5, 2), _r(2, 4, 2, 3)),
    _conv_case("conv_valid", _r(2, 6, 6, 3), _r(3, 2, 3, 2), padding="VALID"),
    _conv_case("conv_same_stride2", _r(2, 7, 6, 2), _r(3, 3, 2, 3), strides=2),
    _conv_case("conv_valid_stride2", _r(1, 7, 8, 2), _r(3, 3, 2, 2), strides=[2, 3],
               padding="VALID"),
    _conv_case("conv_dilation2", _r(1, 7, 7, 2), _r(3, 3, 2, 2), dilations=2),
    _conv_case("conv_nchw_same_stride2", _nchw(_r(2, 7, 5, 3)), _r(3, 3, 3, 2), strides=2,
               data_format="NCHW"),
    _conv_case("conv_nchw_valid_dilation", _nchw(_r(1, 8, 7, 2)), _r(2, 3, 2, 2),
               padding="VALID", dilations=[1, 2], data_format="NCHW"),
    _conv_case("conv_explicit", _r(1, 5, 5, 2), _r(3, 3, 2, 2),
               padding=[[0, 0], [1, 2], [0, 1], [0, 0]]),
    _conv_case("conv_grouped", _r(1, 5, 5, 4), _r(3, 3, 2, 4)),
    _conv_case("conv_1x1_one_channel", _r(2, 4, 4, 1), _r(1, 1, 1, 3)),
    OpCase("conv2d_v1", lambda a, b: tf.compat.v1.nn.conv2d(a, filter=b, strides=[1, 2, 2, 1],
                                                  padding="SAME"),
           [_r(1, 5, 5, 2), _r(3, 3, 2, 2)], lambda a, b: ref.conv2d(a, b, (2, 2), "SAME"),
           rtol=1e-5, atol=1e-5),
    OpCase("conv2d_backprop_input",
           lambda w, g: tf.compat.v1.nn.conv2d_backprop_input(_sizes([2, 7, 6, 2]), w, g,
                                                               [1, 2, 2, 1], "SAME"),
           [_r(3, 3, 2, 3), _r(2, 4, 3, 3)],
           lambda w, g: _conv_input_grad_ref(w, g, (2, 7, 6, 2), (2, 2), "SAME"),
           rtol=1e-5, atol=1e-5),
    OpCase("conv2d_backprop_filter",
           lambda x, g: tf.compat.v1.nn.conv2d_backprop_filter(x, _sizes([3, 3, 2, 3]), g,
                                                                [1, 2, 2, 1], "SAME"),
           [_r(2, 7, 6, 2), _r(2, 4, 3, 3)],
           lambda x, g: _conv_filter_grad_ref(x, g, (3, 3, 2, 3), (2, 2), "SAME"),
           rtol=1e-5, atol=1e-5),
    OpCase("conv2d_backprop_input_nchw_valid",
           lambda w, g: tf.compat.v1.nn.conv2d_backprop_input(_sizes([1, 2, 6, 5]), w, g,
                                                               [1, 1, 1, 1], "VALID",
                                                               data_format="NCHW"),
           [_r(3, 2, 2, 3), _nchw(_r(1, 4, 4, 3))],
           lambda w, g: _nchw(_conv_input_grad_ref(w, g.transpose(0, 2, 3, 1), (1, 6, 5, 2),
                                                   (1, 1), "VALID")),
           rtol=1e-5, atol=1e-5),
    OpCase("conv2d_transpose",
           lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 2], 2, "SAME"),
           [_r(1, 3, 3, 3), _r(3, 3, 2, 3)],
           lambda x, w: _conv_input_grad_ref(w, x, (1, 6, 6, 2), (2, 2), "SAME"),
           rtol=1e-5, atol=1e-5),
    OpCase("depthwise_same", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
           [_r(2, 5, 6, 3), _r(3, 3, 3, 2)],
           lambda x, w: ref.conv2d(x, w, (1, 1), "SAME", depthwise=True),
           rtol=1e-5, atol=1e-5),
    OpCase("depthwise_valid_stride2_nchw",
           lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 2, 2], "VALID", data_format="NCHW"),
           [_nchw(_r(1, 7, 6, 2)), _r(3, 2, 2, 1)],
           lambda x, w: ref.conv2d(x, w, (2, 2), "VALID", data_format="NCHW", depthwise=True),
           rtol=1e-5, atol=1e-5),
    OpCase("depthwise_dilated", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME",
                                                                 dilations=[2, 2]),
           [_r(1, 6, 6, 2), _r(2, 2, 2, 2)],
           lambda x, w: ref.conv2d(x, w, (1, 1), "SAME", (2, 2), depthwise=True),
           rtol=1e-5, atol=1e-5),
    OpCase("bias_add", lambda x, b: tf.nn.bias_add(x, b), [_r(2, 3, 4), _r(4)],
           lambda x, b: x + b),
    OpCase("bias_add_nchw", lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
           [_r(2, 3, 4, 2), _r(3)], lambda x, b: x + b[:, None, None]),
    OpCase("bias_add_grad", lambda g: _bias_add_grad(g, "NHWC"), [_r(2, 3, 4)],
           lambda g: g.sum(axis=(0, 1))),
    OpCase("bias_add_grad_nchw", lambda g: _bias_add_grad(g, "NCHW"), [_r(2, 3, 4, 5)],
           lambda g: g.sum(axis=(0, 2, 3))),
]


def _bias_add_grad(g, data_format):
    return apply_op(nn_conv.BiasAddGrad, [g], {"data_format": data_format}).outputs[0]


def _conv_input_grad_ref(w, g, input_shape, strides, padding):
    """d(sum(conv(x, w) * g))/dx by linearity: conv is linear in x, probe each basis vector."""
    x0 = np.zeros(input_shape)
    out = np.zeros(input_shape)
    flat = out.reshape(-1)
    for i in range(x0.size):
        e = np.zeros(x0.size)
        e[i] = 1.0
        flat[i] = np.sum(ref.conv2d(e.reshape(input_shape), w, strides, padding) * g)
    return out


def _conv_filter_grad_ref(x, g, filter_shape, strides, padding):
    out = np.zeros(filter_shape)
    flat = out.reshape(-1)
    for i in range(flat.size):
        e = np.zeros(flat.size)
        e[i] = 1.0
        flat[i] = np.sum(ref.conv2d(x, e.reshape(filter_shape), strides, padding) * g)
    return out



def _backward_types(build):
    g = Graph()
    with g.as_default():
        ys, xs = build()
        gradients(ys, xs)
    return {op.type for op in g.get_operations() if op.name.startswith("gradients/")}


def test_conv_backward_graph_uses_tf_gradient_ops():
    def build():
        x = placeholder(dtypes.float32, [2, 8, 8, 3])
        w = placeholder(dtypes.float32, [3, 3, 3, 4])
        b = placeholder(dtypes.float32, [4])
        return [tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b))], [x, w, b]
    types = _backward_types(build)
    assert {"Conv2DBackpropInput", "Conv2DBackpropFilter", "BiasAddGrad", "ReluGrad"} <= types


def test_depthwise_backward_graph_ops():
    def build():
        x = placeholder(dtypes.float32, [1, 5, 5, 2])
        w = placeholder(dtypes.float32, [3, 3, 2, 1])
        return [tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")], [x, w]
    types = _backward_types(build)
    assert {"DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"} <= types


def test_conv_static_shapes_partial():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [None, 28, None, 1])
        y = tf.nn.conv2d(x, tf.constant(np.zeros((5, 5, 1, 32), np.float32)), 2, "SAME")
        assert y.shape.as_list() == [None, 14, None, 32]
        z = tf.nn.conv2d(placeholder(dtypes.float32, None),
                      tf.constant(np.zeros((5, 5, 1, 32), np.float32)), 1, "VALID")
        assert z.shape.as_list() == [None, None, None, 32]


def test_conv_bad_padding():
    x = tf.constant(np.zeros((1, 5, 5, 3), np.float32))
    w = tf.constant(np.zeros((3, 3, 3, 8), np.float32))
    # TF: the kernel lookup's InvalidArgumentError eagerly, the builder's ValueError in graphs
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'padding' of \"FOO\" is not in the list of "
                             "allowed values: \"SAME\", \"VALID\", \"EXPLICIT\""):
        tf.nn.conv2d(x, w, 1, "FOO")
    with tf.Graph().as_default(), pytest.raises(ValueError, match="'padding'.*'FOO'"):
        tf.nn.conv2d(x, w, 1, "FOO")
    with pytest.raises(ValueError, match="EXPLICIT"):
        tf.nn.conv2d(x, w, 1, "EXPLICIT")


def test_conv_channel_mismatch_graph_names_op_and_shapes():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [None, 5, 5, 3])
        w = placeholder(dtypes.float32, [3, 3, 4, 8])
        with pytest.raises(ValueError, match=r"Depth of input \(3\) is not a multiple of input "
                           r"depth of filter \(4\) for '\{\{node Conv2D\}\} = Conv2D.*"
                           r"\[\?,5,5,3\], \[3,3,4,8\]"):
            tf.nn.conv2d(x, w, 1, "SAME")


def test_conv_channel_mismatch_eager():
    x = tf.constant(np.zeros((1, 5, 5, 3), np.float32))
    w = tf.constant(np.zeros((3, 3, 4, 8), np.float32))
    with pytest.raises(InvalidArgumentError, match=r"Depth of input \(3\).*\[Op:Conv2D\]"):
        tf.nn.conv2d(x, w, 1, "SAME")


def test_conv_negative_output_size():
    g = Graph()
    with g.as_default():
        x = placeholder(dtypes.float32, [None, 5, 5, 3])
        with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 7 "
                           "from 5"):
            tf.nn.conv2d(x, tf.constant(np.zeros((7, 7, 3, 8), np.float32)), 1, "VALID")


def test_conv_bad_strides():
    x = tf.constant(np.zeros((1, 5, 5, 3), np.float32))
    w = tf.constant(np.zeros((3, 3, 3, 8), np.float32))
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4 but was 3"):
        tf.nn.conv2d(x, w, [1, 1, 1], "SAME")
    with pytest.raises(InvalidArgumentError, match="strides in the batch and depth"):
        tf.nn.conv2d(x, w, [2, 1, 1, 1], "SAME")


def test_conv_rank_error():
    with pytest.raises(InvalidArgumentError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.conv2d(tf.constant(np.zeros((1, 5, 5), np.float32)),
                  tf.constant(np.zeros((3, 3, 3, 8), np.float32)), 1, "SAME")


def test_bias_add_mismatch():
    with pytest.raises(InvalidArgumentError, match=r"Dimensions must be equal, but are 3 and 4"):
        tf.nn.bias_add(tf.constant(np.zeros((1, 5, 5, 3), np.float32)),
                    tf.constant(np.zeros((4,), np.float32)))


def test_conv_int32():
    x = rng.integers(-3, 4, (1, 4, 4, 2)).astype(np.int32)
    w = rng.integers(-3, 4, (2, 2, 2, 3)).astype(np.int32)
    got = tf.nn.conv2d(tf.constant(x), tf.constant(w), 1, "VALID").numpy()
    np.testing.assert_array_equal(got, ref.conv2d(x.astype(float), w.astype(float), padding=
                                                  "VALID").astype(np.int32))


@pytest.mark.parametrize("shape,filt,strides,padding,dilations", [
    ((3, 9, 11, 1), (5, 5), (1, 1), "SAME", (1, 1)),          # MNIST's conv1
    ((2, 10, 8, 2), (3, 3), (2, 1), "SAME", (1, 1)),          # asymmetric SAME padding
    ((2, 9, 9, 3), (3, 2), (1, 2), "VALID", (2, 1)),          # dilation and stride
    ((2, 7, 7, 2), (2, 2), (1, 1), [[0, 0], [1, 2], [0, 1], [0, 0]], (1, 1)),
    ((2, 6, 6, 16), (3, 3), (1, 1), "SAME", (1, 1)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_filter_gradient_paths_equal_numpy(shape, filt, strides, padding, dilations, dtype):
    """Conv2DBackpropFilter equals the float64 NumPy sum over output positions of
    patch x out_backprop, across strides, dilations, SAME/VALID/explicit padding."""
    x = _r(*shape)
    kh, kw = filt
    cout = 4
    explicit = None
    if isinstance(padding, list):
        explicit = (tuple(padding[1]), tuple(padding[2]))
    (sh, sw), (dh, dw) = strides, dilations
    pad = "EXPLICIT" if explicit else padding
    oh, pt, pb = ref._geometry(shape[1], kh, sh, dh, pad, explicit and explicit[0])
    ow, pl, pr = ref._geometry(shape[2], kw, sw, dw, pad, explicit and explicit[1])
    g = _r(shape[0], oh, ow, cout)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    want = np.zeros((kh, kw, shape[3], cout))
    for a in range(kh):
        for b in range(kw):
            patch = xp[:, a * dh: a * dh + (oh - 1) * sh + 1: sh,
                       b * dw: b * dw + (ow - 1) * sw + 1: sw, :]
            want[a, b] = np.einsum("nhwc,nhwo->co", patch, g)
    got = tf.raw_ops.Conv2DBackpropFilter(
        input=tf.constant(x.astype(dtype)), filter_sizes=[kh, kw, shape[3], cout],
        out_backprop=tf.constant(g.astype(dtype)), strides=[1, sh, sw, 1], padding=pad,
        explicit_paddings=sum(padding, []) if explicit else [],
        dilations=[1, dh, dw, 1]).numpy()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_conv2d_transpose_rejects_an_inconsistent_output_shape():
    # TF 2.21 (reference CPU kernel, TF_ENABLE_ONEDNN_OPTS=0; the oneDNN build aborts instead):
    #   tf.nn.conv2d_transpose(tf.ones([1,2,2,1]), tf.ones([3,3,1,1]), [1,5,5,1], 2, "SAME")
    # -> InvalidArgumentError "Conv2DCustomBackpropInput: Size of out_backprop doesn't match
    # computed: actual = 2, computed = 3 spatial_dim: 1 input: 5 filter: 3 output: 2 stride: 2
    # dilation: 1 [Op:Conv2DBackpropInput]" (no name, with or without one given); in a
    # tf.function the same text at node conv2d_transpose
    x, f = tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 1, 1])
    body = (r"Conv2DCustomBackpropInput: Size of out_backprop doesn't match computed: actual = "
            r"2, computed = 3 spatial_dim: 1 input: 5 filter: 3 output: 2 stride: 2 dilation: 1")
    for name in (None, "foo"):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="^" + body + r" \[Op:Conv2DBackpropInput\]$"):
            tf.nn.conv2d_transpose(x, f, [1, 5, 5, 1], 2, "SAME", name=name)
    traced = tf.function(lambda: tf.nn.conv2d_transpose(x, f, [1, 5, 5, 1], 2, "SAME"))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=body + r"\n\t \[\[\{\{node conv2d_transpose\}\}\]\]"):
        traced()


@pytest.mark.parametrize("shape", [
    (128, 32, 32, 16),    # rows folded 8 side by side
    (64, 1024, 10),       # 16 side by side
    (4099, 24),           # rows odd: nothing to fold
    (2, 64, 64, 48),      # 4 side by side
])
def test_bias_add_grad_of_many_narrow_rows_matches_numpy(shape):
    """BiasAddGrad of a large tensor with few channels sums rows folded side by side
    (kernels/nn_conv.py `_column_sums`): the same sums as NumPy's in float64."""
    g = rng.standard_normal(shape).astype(np.float32)
    got = tf.raw_ops.BiasAddGrad(out_backprop=g).numpy()
    want = g.astype(np.float64).reshape(-1, shape[-1]).sum(0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-3)
