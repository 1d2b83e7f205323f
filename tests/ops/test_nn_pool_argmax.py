"""MaxPoolWithArgmax / MaxPoolGradWithArgmax (`tf.nn.max_pool_with_argmax`), table-driven
(harness.py); the reference scans each window in NumPy."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops import nn_pool_argmax
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase
from tests.ops.nn_reference import _geometry

rng = np.random.default_rng(23)


def _r(*shape):
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.0, 1.0, n)).reshape(shape)


def _argmax_ref(x, k, s, padding, include_batch=False):
    n, h, w, c = x.shape
    oh, pt, _ = _geometry(h, k, s, 1, padding)
    ow, pl, _ = _geometry(w, k, s, 1, padding)
    out = np.zeros((n, oh, ow, c))
    arg = np.zeros((n, oh, ow, c), np.int64)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ch in range(c):
                    best, where = -np.inf, None
                    for yy in range(max(i * s - pt, 0), min(i * s - pt + k, h)):
                        for xx in range(max(j * s - pl, 0), min(j * s - pl + k, w)):
                            if x[b, yy, xx, ch] > best:
                                best, where = x[b, yy, xx, ch], (yy * w + xx) * c + ch
                    out[b, i, j, ch] = best
                    arg[b, i, j, ch] = where + (b * h * w * c if include_batch else 0)
    return [out, arg]


def _grad_ref(x, g, k, s, padding):
    _, arg = _argmax_ref(x, k, s, padding, True)
    out = np.zeros(x.size)
    np.add.at(out, arg.reshape(-1), g.reshape(-1))
    return out.reshape(x.shape)


CASES = [
    OpCase("argmax_k2s2_same_odd", lambda x: list(tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")),
           [_r(2, 5, 4, 3)], lambda x: _argmax_ref(x, 2, 2, "SAME")),
    OpCase("argmax_k3s1_valid_batch_index",
           lambda x: list(tf.nn.max_pool_with_argmax(x, 3, 1, "VALID",
                                                     include_batch_in_index=True)),
           [_r(2, 5, 5, 2)], lambda x: _argmax_ref(x, 3, 1, "VALID", True)),
    OpCase("argmax_v1_targmax_int32",
           lambda x: list(tf.compat.v1.nn.max_pool_with_argmax(
               x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME", Targmax=tf.int32)),
           [_r(1, 6, 5, 2)],
           lambda x: [a.astype(np.int32) if a.dtype == np.int64 else a
                      for a in _argmax_ref(x, 3, 2, "SAME")]),
    OpCase("max_pool_grad_with_argmax_raw",
           lambda x, g: nn_pool_argmax.max_pool_grad_with_argmax(
               x, g, tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")[1], [1, 2, 2, 1], [1, 2, 2, 1],
               "SAME"),
           [_r(2, 5, 4, 2), _r(2, 3, 2, 2)], lambda x, g: _grad_ref(x, g, 2, 2, "SAME"),
           grad=False),  # TF registers no gradient for MaxPoolGradWithArgmax
]


def test_gradient_is_max_pool_grad_with_argmax():
    with Graph().as_default():
        x = placeholder(tf.float32, [1, 4, 4, 1])
        y, _ = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID")
        (dx,) = tf.gradients(y, [x])
    assert dx.op.type == "MaxPoolGradWithArgmax"


def test_errors():
    x = np.ones((1, 4, 4, 1), np.float32)
    with pytest.raises(ValueError, match="`data_format` values other  than 'NHWC' are not "
                                         "supported"):
        tf.nn.max_pool_with_argmax(x, 2, 2, "SAME", data_format="NCHW")
    with pytest.raises(tf.errors.UnimplementedError, match="batch nor depth"):
        tf.compat.v1.nn.max_pool_with_argmax(x, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")
