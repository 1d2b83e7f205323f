"""Dilation2D and its backprop ops, `tf.nn.dilation2d` / `tf.nn.erosion2d`, table-driven
(harness.py) against a window-by-window NumPy reference (values checked against TF 2.21's
when written: equal, gradients within float32 rounding)."""

import numpy as np
import pytest

import ndflow as tf
from ndflow.core.graph import Graph
from ndflow.ops.array_core import placeholder
from tests.ops.harness import OpCase
from tests.ops.nn_reference import _geometry

rng = np.random.default_rng(29)


def _r(*shape):
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-1.0, 1.0, n)).reshape(shape)


def _dilation_ref(x, f, s, r, padding):
    n, h, w, c = x.shape
    fh, fw, _ = f.shape
    oh, pt, _ = _geometry(h, fh, s[0], r[0], padding)
    ow, pl, _ = _geometry(w, fw, s[1], r[1], padding)
    out = np.full((n, oh, ow, c), -np.inf)
    for i in range(oh):
        for j in range(ow):
            for dy in range(fh):
                for dx in range(fw):
                    yy, xx = i * s[0] + dy * r[0] - pt, j * s[1] + dx * r[1] - pl
                    if 0 <= yy < h and 0 <= xx < w:
                        out[:, i, j] = np.maximum(out[:, i, j], x[:, yy, xx] + f[dy, dx])
    return out


def _case(id_, xs, fs, s, r, padding, erosion=False):
    # Random (not grid) filter values: sums of two grids tie, and ties have no derivative.
    s4, r4 = [1, *s, 1], [1, *r, 1]
    if erosion:
        return OpCase(id_, lambda x, f: tf.nn.erosion2d(x, f, s4, padding, "NHWC", r4),
                      [_r(*xs), rng.normal(size=fs) * 0.3],
                      lambda x, f: -_dilation_ref(-x, f[::-1, ::-1], s, r, padding))
    return OpCase(id_, lambda x, f: tf.nn.dilation2d(x, f, s4, padding, "NHWC", r4),
                  [_r(*xs), rng.normal(size=fs) * 0.3],
                  lambda x, f: _dilation_ref(x, f, s, r, padding))


CASES = [
    _case("dilation_same", (2, 5, 4, 2), (3, 2, 2), [1, 1], [1, 1], "SAME"),
    _case("dilation_valid_strided", (1, 7, 6, 2), (2, 3, 2), [2, 1], [1, 1], "VALID"),
    _case("dilation_rates", (1, 7, 7, 1), (2, 2, 1), [1, 1], [2, 3], "SAME"),
    _case("erosion_same", (2, 5, 5, 2), (2, 3, 2), [1, 1], [1, 1], "SAME", erosion=True),
    _case("erosion_strided_rates", (1, 8, 7, 2), (3, 2, 2), [2, 2], [1, 2], "VALID",
          erosion=True),
    OpCase("dilation_v1_rates",
           lambda x, f: tf.compat.v1.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 2, 1, 1], "SAME"),
           [_r(1, 5, 4, 2), rng.normal(size=(2, 2, 2)) * 0.3],
           lambda x, f: _dilation_ref(x, f, [1, 1], [2, 1], "SAME")),
    OpCase("erosion_v1_kernel",
           lambda x, f: tf.compat.v1.nn.erosion2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
           [_r(1, 4, 4, 1), rng.normal(size=(2, 2, 1)) * 0.3],
           lambda x, f: -_dilation_ref(-x, f[::-1, ::-1], [1, 1], [1, 1], "VALID")),
]


def test_gradient_ops_and_shapes():
    with Graph().as_default():
        x = placeholder(tf.float32, [2, 5, 4, 3])
        f = placeholder(tf.float32, [3, 2, 3])
        y = tf.nn.dilation2d(x, f, [1, 2, 1, 1], "SAME", "NHWC", [1, 1, 2, 1])
        assert y.shape.as_list() == [2, 3, 4, 3]
        dx, df = tf.gradients(y, [x, f])
        assert dx.op.type == "Dilation2DBackpropInput" and df.op.type == \
            "Dilation2DBackpropFilter"
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.nn.dilation2d(x, placeholder(tf.float32, [3, 2, 2]), [1] * 4, "SAME", "NHWC",
                             [1] * 4)
        with pytest.raises(ValueError, match="requires the stride attribute to contain 4 "
                                             "values, but got: 3"):
            tf.nn.dilation2d(x, f, [1] * 3, "SAME", "NHWC", [1] * 4)
    with pytest.raises(ValueError, match="`data_format` values other  than 'NHWC'"):
        tf.nn.erosion2d(np.ones((1, 2, 2, 1), np.float32), np.ones((1, 1, 1), np.float32),
                        [1] * 4, "SAME", "NCHW", [1] * 4)
