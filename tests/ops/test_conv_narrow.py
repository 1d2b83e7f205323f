"""Convolutions with 1-4 output channels on kernels/conv_narrow_numba.py (the tuner's VECTOR
candidate for the forward pass, the remapper's `_FusedConv2D` and both gradients):
values and gradients against NumPy in float64, the candidate offered only where it runs, the
filter gradient the same whatever the thread count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import autotune, conv_narrow_numba
from ndflow.kernels.autotune import VECTOR
from tests.ops import nn_reference as ref
from tests.ops.test_nn_conv_ops import _conv_filter_grad_ref, _conv_input_grad_ref
from tests.passes.graph_helpers import op_counts, run_graph
from tests.passes.test_remapper import _optimize

rng = np.random.default_rng(5)
# the core monitor ready to time, and every convolution tuned by `tuner` (tests/ops/conftest.py)
pytestmark = pytest.mark.usefixtures("ready_to_time")

CASES = [  # x shape, filter shape, strides, dilations, padding
    ((2, 7, 9, 32), (3, 3, 32, 1), (1, 1), (1, 1), "SAME"),      # an autoencoder's last layer
    ((2, 6, 5, 16), (1, 1, 16, 2), (1, 1), (1, 1), "VALID"),     # a segmentation head
    ((1, 9, 11, 16), (3, 5, 16, 3), (2, 1), (1, 2), "SAME"),     # strides and dilations
    ((2, 5, 6, 16), (2, 2, 16, 4), (1, 1), (1, 1), [[0, 0], [1, 0], [0, 2], [0, 0]]),
    ((1, 3, 2, 16), (5, 5, 16, 1), (1, 1), (1, 1), "SAME"),      # windows wider than the image
]


def _explicit(padding):
    return padding if isinstance(padding, str) else "EXPLICIT"


@pytest.mark.parametrize("xs,ws,strides,dilations,padding", CASES)
def test_values_and_gradients_match_numpy(tuner, xs, ws, strides, dilations, padding):
    tuner.algorithm = VECTOR
    x, w = rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)
    explicit = None if isinstance(padding, str) else padding[1:3]
    expected = ref.conv2d(x, w, strides, _explicit(padding), dilations, explicit=explicit)
    g = rng.uniform(-1, 1, expected.shape)
    xt, wt = tf.constant(x, tf.float32), tf.constant(w, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        y = tf.nn.conv2d(xt, wt, strides, padding, dilations=dilations)
    dx, dw = tape.gradient(y, [xt, wt], output_gradients=tf.constant(g, tf.float32))
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    if dilations == (1, 1) and explicit is None:   # the references' own reach
        np.testing.assert_allclose(dw.numpy(), _conv_filter_grad_ref(x, g, ws, strides,
                                                                     padding),
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(dx.numpy(), _conv_input_grad_ref(w, g, xs, strides,
                                                                    padding),
                                   rtol=1e-5, atol=1e-5)
    else:   # against ATen's gradients in float64
        left, right, top, bottom = _torch_pads(xs, ws, strides, dilations, padding)
        xr = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous().requires_grad_(True)
        wr = torch.from_numpy(w).permute(3, 2, 0, 1).contiguous().requires_grad_(True)
        out = torch.nn.functional.conv2d(
            torch.nn.functional.pad(xr, (left, right, top, bottom)), wr, stride=strides,
            dilation=dilations)
        out.backward(torch.from_numpy(g).permute(0, 3, 1, 2).contiguous())
        np.testing.assert_allclose(dw.numpy(), wr.grad.permute(2, 3, 1, 0).numpy(),
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(dx.numpy(), xr.grad.permute(0, 2, 3, 1).numpy(),
                                   rtol=1e-5, atol=1e-5)
    chosen = {k[0]: v for k, v in autotune.choices().items() if k[0] != "gemm"}
    assert chosen == {"forward": VECTOR, "backprop_filter": VECTOR, "backprop_input": VECTOR}


def _torch_pads(xs, ws, strides, dilations, padding):
    """(left, right, top, bottom) as TF pads the input."""
    if not isinstance(padding, str):
        (t, b), (left, r) = padding[1], padding[2]
        return (left, r, t, b)
    if padding == "VALID":
        return (0, 0, 0, 0)
    pads = []
    for size, k, s, d in zip(xs[1:3], ws[:2], strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        pads.append((total // 2, total - total // 2))
    return (*pads[1], *pads[0])


def test_fused_conv_bias_and_activation(tuner):
    tuner.algorithm = VECTOR
    x = rng.uniform(-1, 1, (2, 6, 7, 32)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 32, 2)).astype(np.float32)
    b = rng.uniform(-1, 1, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        xp = tf.compat.v1.placeholder(tf.float32, x.shape, name="x")
        tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(xp, w, 1, "SAME"), b), name="y")
    g2, names = _optimize(g, ["y:0"], ["x:0"])
    assert op_counts(g2)["_FusedConv2D"] == 1
    (y,) = run_graph(g2, [names["y:0"]], {names["x:0"]: x})
    np.testing.assert_allclose(y, np.maximum(ref.conv2d(x.astype(np.float64), w) + b, 0),
                               rtol=1e-5, atol=1e-5)
    assert [v for k, v in autotune.choices().items() if k[0] == "forward"] == [VECTOR]


@pytest.mark.parametrize("xs,ws", [
    ((2, 6, 6, 8), (3, 3, 8, 1)),      # input channels off the 16 lanes
    ((2, 6, 6, 16), (3, 3, 16, 5)),    # five outputs
])
def test_other_convolutions_are_not_offered_the_kernel(tuner, xs, ws):
    tuner.algorithm = VECTOR
    x, w = rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)
    y = tf.nn.conv2d(tf.constant(x, tf.float32), tf.constant(w, tf.float32), 1, "SAME")
    np.testing.assert_allclose(y.numpy(), ref.conv2d(x, w), rtol=1e-5, atol=1e-5)
    assert VECTOR not in autotune.choices().values()


def test_filter_gradient_does_not_depend_on_the_thread_count():
    x = torch.from_numpy(rng.uniform(-1, 1, (5, 9, 8, 16)).astype(np.float32))
    g = torch.from_numpy(rng.uniform(-1, 1, (5, 9, 8, 2)).astype(np.float32))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = conv_narrow_numba.backprop_filter(x, g, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
        torch.set_num_threads(max(2, threads))
        many = conv_narrow_numba.backprop_filter(x, g, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(one.numpy(), many.numpy())
