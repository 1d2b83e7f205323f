"""weighted_cross_entropy_with_logits, log_poisson_loss, compute_average_loss,
scale_regularization_loss, sufficient_statistics, normalize_moments, weighted_moments and
crelu, table-driven (harness.py) against NumPy float64 references."""

import math

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase

rng = np.random.default_rng(21)


def _wce_ref(z, x, q):
    # The plain formula: -(q z log(sigmoid(x)) + (1 - z) log(1 - sigmoid(x))).
    s = 1 / (1 + np.exp(-x))
    return -(q * z * np.log(s) + (1 - z) * np.log(1 - s))


def _poisson_ref(z, c, full=False):
    out = np.exp(c) - c * z
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            st = z * np.log(z) - z + 0.5 * np.log(2 * math.pi * z)
        out = out + np.where((z >= 0) & (z <= 1), 0.0, st)
    return out


def _weighted_moments_ref(x, axes, w, keepdims=False):
    wb = np.broadcast_to(w, x.shape)
    mean = (wb * x).sum(axes, keepdims=True) / wb.sum(axes, keepdims=True)
    var = (wb * (x - mean) ** 2).sum(axes, keepdims=True) / wb.sum(axes, keepdims=True)
    if not keepdims:
        mean, var = mean.squeeze(axes), var.squeeze(axes)
    return [mean, var]


_labels = rng.uniform(0, 1, (3, 4))
_targets = np.array([[0.0, 0.5, 2.0, 3.0], [1.0, 4.0, 0.2, 7.0]])

CASES = [
    OpCase("weighted_ce", lambda z, x: tf.nn.weighted_cross_entropy_with_logits(z, x, 2.5),
           [_labels, rng.normal(0, 3, (3, 4))], lambda z, x: _wce_ref(z, x, 2.5)),
    OpCase("weighted_ce_tensor_pos_weight",
           lambda z, x, q: tf.nn.weighted_cross_entropy_with_logits(z, x, q),
           [_labels, rng.normal(0, 3, (3, 4)), rng.uniform(0.5, 2, (4,))],
           lambda z, x, q: _wce_ref(z, x, q)),
    OpCase("weighted_ce_v1_targets",
           lambda z, x: tf.compat.v1.nn.weighted_cross_entropy_with_logits(
               targets=z, logits=x, pos_weight=0.5),
           [_labels, rng.normal(0, 2, (3, 4))], lambda z, x: _wce_ref(z, x, 0.5)),
    OpCase("log_poisson_loss", lambda z, c: tf.nn.log_poisson_loss(z, c),
           [_targets, rng.normal(size=(2, 4))], lambda z, c: _poisson_ref(z, c)),
    OpCase("log_poisson_loss_full", lambda z, c: tf.nn.log_poisson_loss(z, c, True),
           [_targets, rng.normal(size=(2, 4))], lambda z, c: _poisson_ref(z, c, True),
           grad=(1,)),
    OpCase("compute_average_loss", lambda l: tf.nn.compute_average_loss(l),
           [rng.normal(size=(5,))], lambda l: l.sum() / 5),
    OpCase("compute_average_loss_weighted",
           lambda l, w: tf.nn.compute_average_loss(l, w, global_batch_size=8),
           [rng.normal(size=(4, 3)), rng.uniform(size=(4,))],
           lambda l, w: (l * w[:, None]).sum() / 8, dtypes=(tf.float32,),
           grad=False),  # TF computes weighted losses in float32: no float64 differences
    OpCase("scale_regularization_loss", lambda l: tf.nn.scale_regularization_loss(l),
           [rng.normal(size=(3, 2))], lambda l: l.sum()),
    OpCase("sufficient_statistics",
           lambda x: tf.nn.sufficient_statistics(x, [0, 2])[:3],
           [rng.normal(size=(3, 2, 4))],
           lambda x: [np.array(12.0), x.sum((0, 2)), (x ** 2).sum((0, 2))]),
    OpCase("sufficient_statistics_shift_keepdims",
           lambda x, s: tf.nn.sufficient_statistics(x, [1], s, keepdims=True)[:3],
           [rng.normal(size=(3, 4)), rng.normal(size=(3, 1))],
           lambda x, s: [np.array(4.0), (x - s).sum(1, keepdims=True),
                         ((x - s) ** 2).sum(1, keepdims=True)]),
    OpCase("normalize_moments",
           lambda c, m, v, s: tf.nn.normalize_moments(c, m, v, s),
           [np.array(4.0), rng.normal(size=(3,)), rng.uniform(2, 3, (3,)), rng.normal(size=(3,))],
           lambda c, m, v, s: [m / c + s, v / c - (m / c) ** 2]),
    OpCase("normalize_moments_no_shift",
           lambda c, m, v: tf.nn.normalize_moments(c, m, v, None),
           [np.array(3.0), rng.normal(size=(2,)), rng.uniform(2, 3, (2,))],
           lambda c, m, v: [m / c, v / c - (m / c) ** 2]),
    OpCase("weighted_moments",
           lambda x, w: tf.nn.weighted_moments(x, [0], w),
           [rng.normal(size=(4, 3)), rng.uniform(0.5, 2, (4, 1))],
           lambda x, w: _weighted_moments_ref(x, (0,), w)),
    OpCase("weighted_moments_v1_keep_dims",
           lambda x, w: tf.compat.v1.nn.weighted_moments(x, [1, 2], w, keep_dims=True),
           [rng.normal(size=(2, 3, 2)), rng.uniform(0.5, 2, (2, 3, 2))],
           lambda x, w: _weighted_moments_ref(x, (1, 2), w, True)),
    OpCase("crelu", lambda x: tf.nn.crelu(x), [rng.normal(size=(2, 3))],
           lambda x: np.maximum(np.concatenate([x, -x], -1), 0)),
    OpCase("crelu_axis0_v1", lambda x: tf.compat.v1.nn.crelu(x, axis=0),
           [rng.normal(size=(2, 3))], lambda x: np.maximum(np.concatenate([x, -x], 0), 0)),
]


def test_shape_mismatch_messages():
    with pytest.raises(ValueError, match=r"`logits` and `labels` must have the same shape, "
                                         r"received \(\(3,\) vs \(2,\)\)"):
        tf.nn.weighted_cross_entropy_with_logits([1.0, 0.0], [1.0, 2.0, 3.0], 2.0)
    with pytest.raises(ValueError, match=r"`log_input` and `targets` must have the same shape"):
        tf.nn.log_poisson_loss([1.0, 0.0], [1.0, 2.0, 3.0])


def test_compute_average_loss_checks():
    loss = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    assert tf.nn.compute_average_loss(loss, global_batch_size=0).numpy() == 0.0
    with pytest.raises(TypeError, match="global_batch_size must be an integer"):
        tf.nn.compute_average_loss(loss, global_batch_size=2.0)
    with pytest.raises(ValueError, match="global_batch_size must be scalar"):
        tf.nn.compute_average_loss(loss, global_batch_size=[2])
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        tf.nn.compute_average_loss(loss, global_batch_size=-1)
    with pytest.raises(ValueError, match="Expected a tensor with at least rank 1"):
        tf.nn.compute_average_loss(np.float32(2.0))
    # Weights of rank + 1 are squeezed, of rank - 1 expanded (Keras' rule), as TF's.
    assert tf.nn.compute_average_loss(np.ones(2, np.float32), [[1.0], [2.0]]).numpy() == 1.5
    assert tf.nn.compute_average_loss(np.ones(2)).dtype is tf.float64


def test_sufficient_statistics_dynamic_count():
    with Graph().as_default():
        x = placeholder(tf.float32, [None, 3])
        count = tf.nn.sufficient_statistics(x, [0, -1])[0]
        assert count.op.type == "Prod"
    assert float(tf.nn.sufficient_statistics(np.ones((2, 3), np.float32), [1])[0]) == 3.0


CASES += [
    OpCase("batch_norm_with_global_normalization_scaled",
           lambda x, m, v, b, g: tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3,
                                                                            True),
           [rng.normal(size=(4, 3)), rng.normal(size=(3,)), rng.uniform(1, 2, (3,)),
            rng.normal(size=(3,)), rng.normal(size=(3,))],
           lambda x, m, v, b, g: (x - m) / np.sqrt(v + 1e-3) * g + b),
    OpCase("batch_norm_with_global_normalization_v1_unscaled",
           lambda x, m, v, b, g: tf.compat.v1.nn.batch_norm_with_global_normalization(
               x, m, v, b, g, 1e-3, False),
           [rng.normal(size=(2, 3)), rng.normal(size=(3,)), rng.uniform(1, 2, (3,)),
            rng.normal(size=(3,)), rng.normal(size=(3,))],
           lambda x, m, v, b, g: (x - m) / np.sqrt(v + 1e-3) + b, grad=(0, 1, 2, 3)),
    OpCase("xw_plus_b", lambda x, w, b: tf.compat.v1.nn.xw_plus_b(x, w, b),
           [rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(2,))],
           lambda x, w, b: x @ w + b),
    OpCase("relu_layer", lambda x, w, b: tf.compat.v1.nn.relu_layer(x, w, b),
           [rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(2,))],
           lambda x, w, b: np.maximum(x @ w + b, 0)),
]
