"""The remapper's Conv3D + BiasAdd [+ activation] -> `_FusedConv3D` (grappler makes it on CPUs;
TensorFlow 2.21's optimized graph of `relu(bias_add(conv3d(x, w), b))` holds one
`_FusedConv3D` with fused_ops ["BiasAdd", "Relu"], num_args 1 and an empty padding_list):
values against NumPy in float64, gradients through the fused op equal to the unfused ops', and
the graphs it leaves alone."""

import numpy as np
import pytest

import ndflow as tf

RNG = np.random.default_rng(7)
_ACTS = {
    None: (lambda v: v, lambda v: v),
    "Relu": (tf.nn.relu, lambda v: np.maximum(v, 0)),
    "Relu6": (tf.nn.relu6, lambda v: np.clip(v, 0, 6)),
    "LeakyRelu": (lambda v: tf.nn.leaky_relu(v, 0.3), lambda v: np.where(v > 0, v, 0.3 * v)),
    "Elu": (tf.nn.elu, lambda v: np.where(v > 0, v, np.expm1(v))),
}


def _conv3d_valid(x, w, strides):
    """NDHWC x DHWIO, VALID, in float64."""
    kd, kh, kw = w.shape[:3]
    win = np.lib.stride_tricks.sliding_window_view(x, (kd, kh, kw), axis=(1, 2, 3))
    win = win[:, ::strides[0], ::strides[1], ::strides[2]]   # [n, d, h, w, c, kd, kh, kw]
    return np.einsum("ndhwcijk,ijkco->ndhwo", win, w)


def _fused_types(fn, *args) -> list:
    return [op for op in fn.get_concrete_function(*args).optimized_graph().get_operations()
            if op.type == "_FusedConv3D"]


@pytest.mark.parametrize("act", sorted(_ACTS, key=str))
def test_conv3d_bias_activation_fuses_and_computes(act):
    x = RNG.standard_normal((2, 6, 7, 9, 3))
    w = RNG.standard_normal((3, 2, 3, 3, 5))
    b = RNG.standard_normal(5)
    fn_act, ref_act = _ACTS[act]

    @tf.function
    def f(xt):
        return fn_act(tf.nn.bias_add(tf.nn.conv3d(xt, tf.constant(w, tf.float32),
                                                   [1, 1, 2, 1, 1], "VALID"),
                                     tf.constant(b, tf.float32)))
    xt = tf.constant(x, tf.float32)
    (fused,) = _fused_types(f, xt)
    assert list(fused.get_attr("fused_ops")) == ["BiasAdd"] + ([act] if act else [])
    assert fused.get_attr("num_args") == 1 and list(fused.get_attr("padding_list")) == []
    want = ref_act(_conv3d_valid(x, w, (1, 2, 1)) + b)
    np.testing.assert_allclose(f(xt).numpy(), want, rtol=1e-4, atol=1e-4)


def test_gradients_through_the_fused_op_equal_the_unfused_ops():
    """A training step's gradients (x, filter, bias) with the fused forward, SAME padding,
    against the same ops run eagerly one by one in float64."""
    x = RNG.standard_normal((2, 5, 6, 6, 4))
    w = RNG.standard_normal((3, 3, 3, 4, 8)) * 0.3
    b = RNG.standard_normal(8) * 0.1

    def loss(xt, wt, bt):
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv3d(xt, wt, [1] * 5, "SAME"), bt))
        return tf.reduce_sum(y * y)

    def grads(xt, wt, bt):
        with tf.GradientTape() as tape:
            tape.watch([xt, wt, bt])
            value = loss(xt, wt, bt)
        return [value, *tape.gradient(value, [xt, wt, bt])]

    args32 = [tf.constant(v, tf.float32) for v in (x, w, b)]
    assert _fused_types(tf.function(grads), *args32)
    got = tf.function(grads)(*args32)
    want = grads(*[tf.constant(v, tf.float64) for v in (x, w, b)])
    for g, r in zip(got, want):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=2e-4, atol=2e-3)


def test_graphs_it_leaves_alone():
    """float64 (TF's _FusedConv3D has no double kernel) and NCDHW stay unfused; an add of a
    broadcast vector is not a BiasAdd."""
    x64 = tf.constant(RNG.standard_normal((1, 4, 4, 4, 2)))
    w64 = tf.constant(RNG.standard_normal((2, 2, 2, 2, 3)))
    b64 = tf.constant(RNG.standard_normal(3))
    f = tf.function(lambda x: tf.nn.relu(tf.nn.bias_add(tf.nn.conv3d(x, w64, [1] * 5, "VALID"),
                                                        b64)))
    assert not _fused_types(f, x64)
    x32 = tf.cast(x64, tf.float32)
    g = tf.function(lambda x: tf.nn.conv3d(x, tf.cast(w64, tf.float32), [1] * 5, "VALID")
                    + tf.cast(b64, tf.float32))
    assert not _fused_types(g, x32)
