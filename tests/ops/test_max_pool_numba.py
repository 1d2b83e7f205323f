"""The numba max-pool kernels (kernels/max_pool_numba.py) against ATen's path, bit for bit.

`_MaxPoolWithIndices` / `_MaxPoolGradWithIndices` on NHWC float32 CPU tensors run the numba
kernels; with them switched off the same nodes run ATen's max_pool2d_with_indices and its
backward. Values, gradients and (where both use the unpadded plane) indices must be equal,
NaNs and ties included, on one and two threads; a MaxPool + MaxPoolGrad graph through the
remapper must give what the plain TF ops give.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import max_pool_numba, nn_fused
from ndflow.kernels.registry import NodeInfo
from ndflow.ops import nn_fused as fused_ops

pytestmark = pytest.mark.skipif(not max_pool_numba.available(),
                                reason="numba or ATen's OpenMP launcher is missing")

CASES = [  # (n, h, w, c, ksize, strides, padding)
    (4, 28, 28, 32, 2, 2, "SAME"),       # MNIST's first pool
    (3, 7, 9, 5, 2, 2, "SAME"),          # odd sizes: TF pads one row/column at the end
    (2, 7, 7, 3, 3, 2, "SAME"),          # overlapping windows: gradients add up
    (2, 8, 6, 4, 3, 1, "VALID"),
    (2, 9, 9, 2, 2, 3, "VALID"),         # strides past the window: skipped positions
    (1, 5, 5, 1, 5, 1, "SAME"),          # windows far into the padding
    (0, 4, 4, 2, 2, 2, "VALID"),         # empty batch
]


def _node(op, k, s, padding, dtype=tf.float32):
    attrs = {"ksize": [1, k, k, 1], "strides": [1, s, s, 1], "padding": padding,
             "data_format": "NHWC", "explicit_paddings": [], "T": dtype}
    return NodeInfo(op.name, op, attrs, [], [], [], [], torch.device("cpu"))


def _run(k, s, padding, x, g, numba_on: bool, monkeypatch):
    monkeypatch.setattr(max_pool_numba, "available", lambda: numba_on)
    dtype = tf.bfloat16 if x.dtype == torch.bfloat16 else tf.float32
    fwd = nn_fused._max_pool_with_indices(
        _node(fused_ops.MaxPoolWithIndices, k, s, padding, dtype))
    bwd = nn_fused._max_pool_grad_with_indices(
        _node(fused_ops.MaxPoolGradWithIndices, k, s, padding, dtype))
    y, idx = fwd(x)
    dx = bwd(x, g if g is not None else torch.ones_like(y), idx)
    return y, idx, dx


def _input(n, h, w, c, seed, dtype=torch.float32):
    rng = np.random.default_rng(seed)
    # few distinct values: many ties inside windows
    x = rng.integers(-3, 4, (n, h, w, c)).astype(np.float32)
    if x.size:
        x.reshape(-1)[rng.choice(x.size, max(1, x.size // 50), replace=False)] = np.nan
    return torch.from_numpy(x).to(dtype)


def _gradient(shape, seed):
    """Normal values with some -0.0 and NaN entries (ATen's sums turn -0.0 into +0.0)."""
    rng = np.random.default_rng(seed)
    g = rng.normal(size=tuple(shape)).astype(np.float32)
    if g.size:
        flat = g.reshape(-1)
        flat[rng.choice(g.size, max(1, g.size // 20), replace=False)] = -0.0
        flat[rng.choice(g.size, max(1, g.size // 50), replace=False)] = np.nan
    return g


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:4])) + f"-k{c[4]}"
                         f"s{c[5]}{c[6]}")
def test_equals_atens_path_bit_for_bit(case, threads, monkeypatch):
    n, h, w, c, k, s, padding = case
    x = _input(n, h, w, c, seed=h * w + k)
    # only 2x2 windows take the numba kernels; the others run ATen's both ways (applies())
    assert max_pool_numba.applies(x, (k, k), (s, s), (0, 0), (1, 1)) is (k == 2)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        y, idx, _ = _run(k, s, padding, x, None, True, monkeypatch)
        g = torch.from_numpy(_gradient(y.shape, seed=1))
        y, idx, dx = _run(k, s, padding, x, g, True, monkeypatch)
        y_ref, idx_ref, dx_ref = _run(k, s, padding, x, g, False, monkeypatch)
    finally:
        torch.set_num_threads(before)
    assert y.shape == y_ref.shape and dx.shape == dx_ref.shape == x.shape
    np.testing.assert_array_equal(y.numpy(), y_ref.numpy())        # NaN == NaN here
    np.testing.assert_array_equal(dx.numpy(), dx_ref.numpy())
    plan_extra = max(0, (y.shape[1] - 1) * s + k - h) if y.numel() else 0
    if plan_extra == 0:   # ATen's indices are in the unpadded plane too
        np.testing.assert_array_equal(idx.numpy(), idx_ref.numpy())


def test_gradient_goes_to_the_first_maximum_of_each_window():
    x = torch.tensor([[[[1.0], [5.0]], [[5.0], [2.0]]]])          # 1x2x2x1, a tie at 5
    y, idx = max_pool_numba.forward(x, (2, 2), (2, 2), (0, 0), (1, 1))
    dx = max_pool_numba.backward(x.shape, torch.tensor([[[[3.0]]]]), idx, (2, 2), (2, 2),
                                 (0, 0))
    assert y.item() == 5.0 and idx.item() == 1
    np.testing.assert_array_equal(dx.numpy().reshape(-1), [0.0, 3.0, 0.0, 0.0])


def test_pool_graph_through_the_remapper_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 6, 6, 3)).astype(np.float32)

    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.max_pool2d(x, 2, 2, "VALID")
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, x)

    y, dx = f(tf.constant(x))
    windows = x.reshape(2, 3, 2, 3, 2, 3).transpose(0, 1, 3, 5, 2, 4).reshape(2, 3, 3, 3, 4)
    y_ref = windows.max(-1)
    np.testing.assert_array_equal(y.numpy(), y_ref)
    first = windows.argmax(-1)
    dx_ref = np.zeros_like(windows)
    np.put_along_axis(dx_ref, first[..., None], 2 * y_ref[..., None], -1)
    dx_ref = dx_ref.reshape(2, 3, 3, 3, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(x.shape)
    np.testing.assert_allclose(dx.numpy(), dx_ref, rtol=1e-6)


BF16_CASES = [(4, 28, 28, 32, 2, 2, "VALID"), (3, 6, 8, 5, 2, 2, "SAME"),   # tiled: numba
              (2, 7, 7, 3, 2, 2, "SAME"), (2, 7, 7, 3, 3, 2, "SAME")]       # ATen's path


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", BF16_CASES, ids=["28x28-tiled", "odd-tiled", "padded",
                                                 "overlapping"])
def test_bfloat16_equals_atens_path_bit_for_bit(case, threads, monkeypatch):
    n, h, w, c, k, s, padding = case
    x = _input(n, h, w, c, seed=h + w + k, dtype=torch.bfloat16)
    ran = []
    real_forward = max_pool_numba.forward
    monkeypatch.setattr(max_pool_numba, "forward",
                        lambda *a: ran.append(True) or real_forward(*a))
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        y, idx, _ = _run(k, s, padding, x, None, True, monkeypatch)
        g = torch.from_numpy(_gradient(y.shape, seed=2)).to(torch.bfloat16)
        y, idx, dx = _run(k, s, padding, x, g, True, monkeypatch)
        y_ref, idx_ref, dx_ref = _run(k, s, padding, x, g, False, monkeypatch)
    finally:
        torch.set_num_threads(before)
    assert bool(ran) == (case[-1] == "VALID" or case[1] % 2 == 0 and case[2] % 2 == 0
                         and k == 2)
    # ATen's bfloat16 kernels keep or canonicalize NaN bits and zero signs depending on the
    # channel count: compared as values (NaN == NaN, -0 == +0), the indices exactly
    for got, ref in ((y, y_ref), (dx, dx_ref)):
        assert got.dtype == ref.dtype == torch.bfloat16 and got.shape == ref.shape
        np.testing.assert_array_equal(got.float().numpy(), ref.float().numpy())
    np.testing.assert_array_equal(idx.numpy(), idx_ref.numpy())
