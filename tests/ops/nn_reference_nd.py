"""NumPy float64 references for N-d convolution and pooling (channels-last, any number of
spatial dims), written independently of ndflow's code."""

from __future__ import annotations

import itertools

import numpy as np

from tests.ops.nn_reference import _geometry


def conv_nd(x, w, strides, padding="SAME", dilations=None):
    """x [N, *spatial, C], w [*k, C_in, C_out] (groups = C // C_in)."""
    sp = x.shape[1:-1]
    ks = w.shape[:-2]
    dilations = dilations or [1] * len(sp)
    geo = [_geometry(n, k, s, d, padding) for n, k, s, d in zip(sp, ks, strides, dilations)]
    xp = np.pad(x, [(0, 0)] + [(b, a) for _, b, a in geo] + [(0, 0)])
    ci, co = w.shape[-2:]
    groups = x.shape[-1] // ci
    og = co // groups
    out = np.zeros((x.shape[0], *[o for o, _, _ in geo], co))
    for off in itertools.product(*[range(k) for k in ks]):
        sl = tuple(slice(o * d, o * d + (g[0] - 1) * s + 1, s)
                   for o, d, s, g in zip(off, dilations, strides, geo))
        patch = xp[(slice(None), *sl)]
        for g in range(groups):
            out[..., g * og:(g + 1) * og] += patch[..., g * ci:(g + 1) * ci] @ \
                w[off][:, g * og:(g + 1) * og]
    return out


def pool_nd(x, ksize, strides, padding, kind="max", dilations=None):
    """Max/average pooling over the spatial dims of channels-last `x` (SAME pads ignored)."""
    sp = x.shape[1:-1]
    dilations = dilations or [1] * len(sp)
    geo = [_geometry(n, k, s, d, padding) for n, k, s, d in zip(sp, ksize, strides, dilations)]
    out = np.zeros((x.shape[0], *[o for o, _, _ in geo], x.shape[-1]))
    for pos in itertools.product(*[range(g[0]) for g in geo]):
        vals = []
        for off in itertools.product(*[range(k) for k in ksize]):
            idx = [p * s - g[1] + o * d for p, s, g, o, d in zip(pos, strides, geo, off, dilations)]
            if all(0 <= i < n for i, n in zip(idx, sp)):
                vals.append(x[(slice(None), *idx)])
        v = np.stack(vals)
        out[(slice(None), *pos)] = v.max(0) if kind == "max" else v.mean(0)
    return out


def to_channels_first(x):
    return np.moveaxis(x, -1, 1)


def to_channels_last(x):
    return np.moveaxis(x, 1, -1)
