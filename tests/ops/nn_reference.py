"""NumPy float64 references for the NN ops (written independently of ndflow's code)."""

from __future__ import annotations

import math

import numpy as np


def _same_pads(size, k, s, d):
    eff = (k - 1) * d + 1
    out = math.ceil(size / s)
    total = max((out - 1) * s + eff - size, 0)
    return out, total // 2, total - total // 2


def _geometry(size, k, s, d, padding, explicit=None):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        return _same_pads(size, k, s, d)
    if padding == "VALID":
        return (size - eff) // s + 1, 0, 0
    before, after = explicit
    return (size + before + after - eff) // s + 1, before, after


def _to_nhwc(x, data_format):
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def _from_nhwc(x, data_format):
    return x.transpose(0, 3, 1, 2) if data_format == "NCHW" else x


def conv2d(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1), data_format="NHWC",
           explicit=None, depthwise=False):
    """x NHWC (or NCHW), w HWIO (depthwise: H, W, C, multiplier); strides/dilations (h, w)."""
    x = _to_nhwc(x, data_format)
    n, h, wd, c = x.shape
    kh, kw, ci, co = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    ex_h, ex_w = (explicit[0], explicit[1]) if explicit else (None, None)
    oh, pt, pb = _geometry(h, kh, sh, dh, padding, ex_h)
    ow, pl, pr = _geometry(wd, kw, sw, dw, padding, ex_w)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    out_c = c * co if depthwise else co
    out = np.zeros((n, oh, ow, out_c))
    groups = 1 if depthwise else c // ci
    for a in range(kh):
        for b in range(kw):
            patch = xp[:, a * dh: a * dh + (oh - 1) * sh + 1: sh,
                       b * dw: b * dw + (ow - 1) * sw + 1: sw, :]
            if depthwise:
                out += (patch[..., :, None] * w[a, b]).reshape(n, oh, ow, out_c)
                continue
            og = co // groups
            for g in range(groups):
                out[..., g * og:(g + 1) * og] += patch[..., g * ci:(g + 1) * ci] @ \
                    w[a, b, :, g * og:(g + 1) * og]
    return _from_nhwc(out, data_format)


def pool2d(x, ksize, strides, padding, kind="max", data_format="NHWC"):
    """Max or average pooling (TF semantics: SAME pads are ignored, not counted)."""
    x = _to_nhwc(x, data_format)
    n, h, wd, c = x.shape
    (kh, kw), (sh, sw) = ksize, strides
    oh, pt, pb = _geometry(h, kh, sh, 1, padding)
    ow, pl, pr = _geometry(wd, kw, sw, 1, padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * sh - pt, j * sw - pl
            win = x[:, max(h0, 0):min(h0 + kh, h), max(w0, 0):min(w0 + kw, wd), :]
            out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return _from_nhwc(out, data_format)


def batch_norm(x, scale, offset, mean, var, epsilon, data_format="NHWC"):
    x = _to_nhwc(x, data_format)
    y = (x - mean) / np.sqrt(var + epsilon) * scale + offset
    return _from_nhwc(y, data_format)


def batch_norm_train(x, scale, offset, epsilon, data_format="NHWC"):
    """(y, mean, biased variance, Bessel-corrected variance) over all axes but channels."""
    xn = _to_nhwc(x, data_format)
    axes = (0, 1, 2)
    mean = xn.mean(axis=axes)
    var = xn.var(axis=axes)
    m = xn.size // xn.shape[-1]
    y = batch_norm(x, scale, offset, mean, var, epsilon, data_format)
    return y, mean, var, var * m / max(m - 1, 1)


def batch_norm_grad(dy, x, scale, epsilon, mean=None, var=None):
    """(dx, dscale) of y = batch_norm(x): batch statistics when mean/var are None (training),
    else the given population statistics (inference). NHWC."""
    axes = (0, 1, 2)
    training = mean is None
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    inv = 1.0 / np.sqrt(var + epsilon)
    xhat = (x - mean) * inv
    dscale = (dy * xhat).sum(axis=axes)
    if not training:
        return dy * scale * inv, dscale
    dx = scale * inv * (dy - dy.mean(axis=axes) - xhat * (dy * xhat).mean(axis=axes))
    return dx, dscale


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def softmax(x, axis=-1):
    return np.exp(log_softmax(x, axis))
