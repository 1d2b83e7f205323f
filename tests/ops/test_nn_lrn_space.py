"""LRN / LRNGrad and DepthToSpace / SpaceToDepth, table-driven (harness.py); references are
written index by index in NumPy float64."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops import nn_lrn
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(5)


def _lrn_ref(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    r = depth_radius
    sq = np.zeros_like(x)
    for d in range(x.shape[-1]):
        sq[..., d] = (x[..., max(0, d - r):d + r + 1] ** 2).sum(-1)
    return x / (bias + alpha * sq) ** beta


def _d2s_ref(x, bs, fmt="NHWC"):
    if fmt == "NCHW":
        return _d2s_ref(x.transpose(0, 2, 3, 1), bs).transpose(0, 3, 1, 2)
    n, h, w, c = x.shape
    oc = c // (bs * bs)
    out = np.zeros((n, h * bs, w * bs, oc), x.dtype)
    for i in range(h * bs):
        for j in range(w * bs):
            k = ((i % bs) * bs + (j % bs)) * oc
            out[:, i, j, :] = x[:, i // bs, j // bs, k:k + oc]
    return out


def _s2d_ref(x, bs, fmt="NHWC"):
    if fmt == "NCHW":
        return _s2d_ref(x.transpose(0, 2, 3, 1), bs).transpose(0, 3, 1, 2)
    n, h, w, c = x.shape
    out = np.zeros((n, h // bs, w // bs, c * bs * bs), x.dtype)
    for i in range(h):
        for j in range(w):
            k = ((i % bs) * bs + (j % bs)) * c
            out[:, i // bs, j // bs, k:k + c] = x[:, i, j, :]
    return out


def _lrn_case(id_, x, **kw):
    return OpCase(id_, lambda a: tf.nn.local_response_normalization(a, **kw), [x],
                  lambda a: _lrn_ref(a, **kw), rtol=1e-5, atol=1e-6)


CASES = [
    _lrn_case("lrn_defaults", rng.normal(size=(2, 3, 2, 13))),
    _lrn_case("lrn_r2_beta075", rng.normal(size=(1, 2, 3, 7)), depth_radius=2, bias=2.0,
              alpha=0.3, beta=0.75),
    _lrn_case("lrn_r1_beta1", rng.normal(size=(2, 2, 2, 4)), depth_radius=1, bias=1.5,
              alpha=0.5, beta=1.0),
    _lrn_case("lrn_r0", rng.normal(size=(1, 2, 2, 3)), depth_radius=0, bias=1.0, alpha=2.0,
              beta=0.4),
    # Depth > 512 takes the kernel's avg_pool1d path instead of the band matmul.
    _lrn_case("lrn_deep_input", rng.normal(size=(1, 1, 1, 520)), depth_radius=3, alpha=0.2,
              beta=0.75),
    _lrn_case("lrn_radius_exceeds_depth", rng.normal(size=(1, 1, 2, 3)), depth_radius=7,
              alpha=0.1, beta=0.6),
    OpCase("lrn_alias", lambda a: tf.nn.lrn(a, 3, 1.0, 0.2, 0.75), [rng.normal(size=(1, 2, 2, 9))],
           lambda a: _lrn_ref(a, 3, 1.0, 0.2, 0.75)),
    OpCase("lrn_grad_raw",
           lambda g, x: nn_lrn.lrn_grad(g, x, tf.nn.lrn(x, 2, 1.0, 0.5, 0.75), 2, 1.0, 0.5, 0.75),
           [rng.normal(size=(1, 2, 2, 6)), rng.normal(size=(1, 2, 2, 6))],
           lambda g, x: _lrn_grad_ref(g, x, 2, 1.0, 0.5, 0.75), grad=False),
    OpCase("depth_to_space_nhwc", lambda a: tf.nn.depth_to_space(a, 2),
           [rng.normal(size=(2, 2, 3, 12))], lambda a: _d2s_ref(a, 2)),
    OpCase("depth_to_space_bs3_nchw", lambda a: tf.nn.depth_to_space(a, 3, data_format="NCHW"),
           [rng.normal(size=(1, 18, 2, 1))], lambda a: _d2s_ref(a, 3, "NCHW")),
    OpCase("space_to_depth_nhwc", lambda a: tf.nn.space_to_depth(a, 2),
           [rng.normal(size=(2, 4, 6, 3))], lambda a: _s2d_ref(a, 2)),
    OpCase("space_to_depth_nchw", lambda a: tf.nn.space_to_depth(a, 2, data_format="NCHW"),
           [rng.normal(size=(1, 2, 4, 2))], lambda a: _s2d_ref(a, 2, "NCHW")),
    OpCase("space_to_depth_v1_int", lambda a: tf.compat.v1.space_to_depth(a, 2),
           [np.arange(32, dtype=np.int32).reshape(1, 4, 4, 2)], lambda a: _s2d_ref(a, 2),
           grad=False),
]


def _lrn_grad_ref(g, x, r, bias, alpha, beta):
    # Central differences of the float64 reference: the gradient of sum(g * lrn(x)).
    out = np.zeros_like(x)
    flat, eps = x.reshape(-1), 1e-6
    for i in range(flat.size):
        p, m = flat.copy(), flat.copy()
        p[i] += eps
        m[i] -= eps
        out.reshape(-1)[i] = (np.sum(g * _lrn_ref(p.reshape(x.shape), r, bias, alpha, beta))
                              - np.sum(g * _lrn_ref(m.reshape(x.shape), r, bias, alpha, beta))) \
            / (2 * eps)
    return out


def test_lrn_needs_rank_4():
    with pytest.raises(InvalidArgumentError, match="rank 4"):
        tf.nn.lrn(np.ones((2, 3, 4), np.float32))
    with Graph().as_default(), pytest.raises(ValueError, match="Shape must be rank 4"):
        tf.nn.lrn(placeholder(tf.float32, [2, 3]))


def test_lrn_rejects_integers():
    with pytest.raises((TypeError, InvalidArgumentError)):
        tf.nn.lrn(np.ones((1, 1, 1, 2), np.int32))


def test_lrn_gradient_has_lrn_grad_node():
    g = Graph()
    with g.as_default():
        x = placeholder(tf.float32, [1, 2, 2, 5])
        (dx,) = tf.gradients(tf.nn.lrn(x, 2), [x])
    assert dx.op.type == "LRNGrad" and dx.op.attrs["depth_radius"] == 2


def test_space_ops_errors():
    with pytest.raises(InvalidArgumentError, match="evenly divisible by 2 but is 5"):
        tf.nn.space_to_depth(np.ones((1, 5, 4, 8), np.float32), 2)
    with pytest.raises(InvalidArgumentError, match="evenly divisible by 4 but is 6"):
        tf.nn.depth_to_space(np.ones((1, 4, 4, 6), np.float32), 2)
    with Graph().as_default(), pytest.raises(ValueError, match="less than minimum 2"):
        tf.nn.depth_to_space(placeholder(tf.float32, [1, 4, 4, 4]), 1)
    with Graph().as_default(), pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.nn.space_to_depth(placeholder(tf.float32, [None, 5, 4, 8]), 2)
