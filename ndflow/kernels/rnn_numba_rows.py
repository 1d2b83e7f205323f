"""The numba bodies of kernels/rnn_numba.py's sequence kernels: one OpenMP callback per
kernel (GRU, LSTM, plain RNN; forward and backward), each claiming blocks of batch rows and
running every time step for them. Kept apart from the Python side because numba's disk cache
keys a callback on the file that defines it and its inlined helpers: they all live here.

Recurrent dropout (Keras' implementation 1, `masked` among the params): gate k's recurrent
product reads the previous state times that gate's mask, (h_prev * m_k) R_k, so the forward
runs one product per gate from masked rows in scratch, and the backward's dh_prev sums
m_k * (d_k R_k^T) over the gates; a product writes whole 16-lane tiles, so gate k's tiles may
spill into gate k + 1's first columns, which that gate's product (run after) overwrites.
"""

from __future__ import annotations

import numpy as np

from ndflow.kernels import exp_numba, omp_pool, register_gemm_numba, simd_numba, tanh_numba
from ndflow.kernels.build_once import built_once

ROWS = register_gemm_numba.ROWS
GROUP = 8   # batch rows whose products the forward computes before their gates
COLS = 64   # columns of the weights per block of the products (see `products`)
# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
claim_chunk = address_as_pointer = carray = wide_vectors = product = None
sigmoid_f32 = tanh_f32 = view = None
gru_forward_rows = gru_backward_rows = lstm_forward_rows = lstm_backward_rows = None
simple_forward_rows = simple_backward_rows = None
products = add_rows = masked_products = masked_state_grad = None


kernels = built_once(lambda: _build())


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first such layer, not with `import ndflow`
    except ImportError:
        return None
    if tanh_numba.tanh_f32_function() is None:
        return None
    from numba import cfunc, types  # noqa: PLC0415

    global claim_chunk, address_as_pointer, carray, wide_vectors, product
    global sigmoid_f32, tanh_f32
    claim_chunk, address_as_pointer = omp_pool.chunk_intrinsics()[:2]
    carray = numba.carray
    wide_vectors = simd_numba.vector_ops().wide_vectors
    product = register_gemm_numba.helpers().product
    sigmoid_f32 = exp_numba.helpers()[1]
    tanh_f32 = tanh_numba.tanh_f32_function()
    _row_functions(numba.njit(inline="always"))

    # data = [counter, batch, chunk, (address, length) of each array..., finished]; each
    # callback claims blocks of batch rows and runs all the steps for them
    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def gru_forward(data):
        wide_vectors()
        d = carray(data, 24, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            gru_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def gru_backward(data):
        wide_vectors()
        d = carray(data, 28, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            gru_backward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def lstm_forward(data):
        wide_vectors()
        d = carray(data, 26, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            lstm_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def lstm_backward(data):
        wide_vectors()
        d = carray(data, 28, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            lstm_backward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def simple_forward(data):
        wide_vectors()
        d = carray(data, 20, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            simple_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def simple_backward(data):
        wide_vectors()
        d = carray(data, 22, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            simple_backward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    return (gru_forward.address, gru_backward.address, lstm_forward.address,
            lstm_backward.address, simple_forward.address, simple_backward.address)


def _row_functions(inline) -> None:
    """The kernels' bodies: all steps for batch rows [lo, hi), `slot` the thread's scratch."""
    global view, gru_forward_rows, gru_backward_rows, lstm_forward_rows, lstm_backward_rows
    global products, add_rows, simple_forward_rows, simple_backward_rows
    global masked_products, masked_state_grad

    @inline
    def view(d, k, dtype):
        """The array at d[k] (its length at d[k + 1])."""
        return carray(address_as_pointer(d[k], dtype), d[k + 1])

    # Element loops index row slices from 0: an index `base + j` could be negative to
    # numba, whose wraparound select per element kept LLVM from vectorizing (8 ns an element
    # instead of 0.4)
    @inline
    def gru_forward_rows(d, lo, hi, slot):
        f32 = np.float32
        xw, w, bh, h0 = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        saved, hs, lengths = view(d, 11, f32), view(d, 13, f32), view(d, 15, np.int64)
        masks, scr, p = view(d, 17, f32), view(d, 19, f32), view(d, 21, np.int64)
        t_len, b, h, cp, masked = p[0], p[1], p[2], p[3], p[5]
        sb = slot * p[4]
        for t in range(t_len):
            prev = h0 if t == 0 else hs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                if masked:
                    masked_products(prev, prev_base, h, g0, g1, w, cp, masks, 3, b, scr, sb,
                                    sb + p[4] - GROUP * h)
                else:
                    products(prev, prev_base, h, g0, g1, h, w, 0, cp, scr, sb)
                for i in range(g0, g1):
                    r = i - g0
                    hp = prev[prev_base + i * h:prev_base + (i + 1) * h]
                    out = hs[(t * b + i) * h:(t * b + i + 1) * h]
                    if t >= lengths[i]:          # ended: the state holds
                        out[:] = hp
                        continue
                    x = xw[(t * b + i) * 3 * h:(t * b + i + 1) * 3 * h]
                    rec = scr[sb + r * cp:sb + r * cp + 3 * h]
                    sr = (t * 4 * b + i) * h
                    r_out, z_out = saved[sr:sr + h], saved[sr + b * h:sr + b * h + h]
                    n_out = saved[sr + 2 * b * h:sr + 2 * b * h + h]
                    hn_out = saved[sr + 3 * b * h:sr + 3 * b * h + h]
                    for j in range(h):
                        rg = sigmoid_f32(x[j] + rec[j] + bh[j])
                        z = sigmoid_f32(x[h + j] + rec[h + j] + bh[h + j])
                        hn = rec[2 * h + j] + bh[2 * h + j]
                        n = tanh_f32(x[2 * h + j] + rg * hn)
                        r_out[j], z_out[j], n_out[j], hn_out[j] = rg, z, n, hn
                        out[j] = n + z * (hp[j] - n)

    @inline
    def gru_backward_rows(d, lo, hi, slot):
        f32 = np.float32
        saved, hs, h0, dy = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        dh, d_xw, d_hr = view(d, 11, f32), view(d, 13, f32), view(d, 15, f32)
        w, lengths, masks = view(d, 17, f32), view(d, 19, np.int64), view(d, 21, f32)
        scr, p = view(d, 23, f32), view(d, 25, np.int64)
        t_len, b, h, hp_w, masked = p[0], p[1], p[2], p[3], p[5]
        sb = slot * p[4]
        one = f32(1.0)
        for t in range(t_len - 1, -1, -1):
            prev = h0 if t == 0 else hs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for i in range(lo, hi):
                o = (t * b + i) * 3 * h
                dx_out, dh_out = d_xw[o:o + 3 * h], d_hr[o:o + 3 * h]
                if t >= lengths[i]:          # ended: dh passes to the held state
                    dx_out[:] = 0.0
                    dh_out[:] = 0.0
                    continue
                g = dh[i * h:(i + 1) * h]    # dh + dy, kept in dh's row
                hp = prev[prev_base + i * h:prev_base + (i + 1) * h]
                dyi = dy[(t * b + i) * h:(t * b + i + 1) * h]
                sr = (t * 4 * b + i) * h
                r_in, z_in = saved[sr:sr + h], saved[sr + b * h:sr + b * h + h]
                n_in = saved[sr + 2 * b * h:sr + 2 * b * h + h]
                hn_in = saved[sr + 3 * b * h:sr + 3 * b * h + h]
                for j in range(h):
                    g[j] = g[j] + dyi[j]
                for j in range(h):         # the update gate
                    z = z_in[j]
                    c_z = g[j] * (hp[j] - n_in[j]) * (z * (one - z))
                    dx_out[h + j] = c_z
                    dh_out[h + j] = c_z
                for j in range(h):         # the candidate (a) and the reset gate
                    n, rg = n_in[j], r_in[j]
                    a = g[j] * (one - z_in[j]) * (one - n * n)
                    c_r = a * hn_in[j] * (rg * (one - rg))
                    dx_out[j] = c_r
                    dh_out[j] = c_r
                    dx_out[2 * h + j] = a
                    dh_out[2 * h + j] = a * rg
                for j in range(h):
                    g[j] = g[j] * z_in[j]
            # dh_prev = g z + d_hr W (an ended row's d_hr is 0: its dh holds)
            if masked:
                masked_state_grad(d_hr, t * b * 3 * h, 3, lo, hi, h, w, hp_w, masks, b, scr,
                                  sb, dh)
            else:
                products(d_hr, t * b * 3 * h, 3 * h, lo, hi, 3 * h, w, 0, hp_w, scr, sb)
                add_rows(dh, lo, hi, h, scr, sb, hp_w)

    @inline
    def lstm_forward_rows(d, lo, hi, slot):
        f32 = np.float32
        xw, w, h0, c0 = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        gates, cs, hs = view(d, 11, f32), view(d, 13, f32), view(d, 15, f32)
        lengths, masks = view(d, 17, np.int64), view(d, 19, f32)
        scr, p = view(d, 21, f32), view(d, 23, np.int64)
        t_len, b, h, cp, masked = p[0], p[1], p[2], p[3], p[5]
        sb = slot * p[4]
        for t in range(t_len):
            prev_h = h0 if t == 0 else hs
            prev_c = c0 if t == 0 else cs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                if masked:
                    masked_products(prev_h, prev_base, h, g0, g1, w, cp, masks, 4, b, scr, sb,
                                    sb + p[4] - GROUP * h)
                else:
                    products(prev_h, prev_base, h, g0, g1, h, w, 0, cp, scr, sb)
                for i in range(g0, g1):
                    r = i - g0
                    hp = prev_base + i * h
                    cp_row = prev_c[hp:hp + h]
                    out = (t * b + i) * h
                    co, ho = cs[out:out + h], hs[out:out + h]
                    if t >= lengths[i]:          # ended: the states hold
                        co[:] = cp_row
                        ho[:] = prev_h[hp:hp + h]
                        continue
                    x = xw[(t * b + i) * 4 * h:(t * b + i + 1) * 4 * h]
                    z = gates[(t * b + i) * 4 * h:(t * b + i + 1) * 4 * h]
                    rec = scr[sb + r * cp:sb + r * cp + 4 * h]
                    for j in range(2 * h):
                        z[j] = sigmoid_f32(x[j] + rec[j])
                    for j in range(2 * h, 3 * h):
                        z[j] = tanh_f32(x[j] + rec[j])
                    for j in range(3 * h, 4 * h):
                        z[j] = sigmoid_f32(x[j] + rec[j])
                    for j in range(h):
                        c = z[h + j] * cp_row[j] + z[j] * z[2 * h + j]
                        co[j] = c
                        ho[j] = z[3 * h + j] * tanh_f32(c)

    @inline
    def lstm_backward_rows(d, lo, hi, slot):
        f32 = np.float32
        gates, cs, c0, dy = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        dh, dc, dz = view(d, 11, f32), view(d, 13, f32), view(d, 15, f32)
        w, lengths, masks = view(d, 17, f32), view(d, 19, np.int64), view(d, 21, f32)
        scr, p = view(d, 23, f32), view(d, 25, np.int64)
        t_len, b, h, hp_w, masked = p[0], p[1], p[2], p[3], p[5]
        sb = slot * p[4]
        tc = scr[sb + (hi - lo) * hp_w:sb + (hi - lo) * hp_w + h]   # tanh(c_t) of a row
        one = f32(1.0)
        for t in range(t_len - 1, -1, -1):
            prev_c = c0 if t == 0 else cs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for i in range(lo, hi):
                o = dz[(t * b + i) * 4 * h:(t * b + i + 1) * 4 * h]
                if t >= lengths[i]:          # ended: dh and dc pass to the held states
                    o[:] = 0.0
                    continue
                z = gates[(t * b + i) * 4 * h:(t * b + i + 1) * 4 * h]
                g, dci = dh[i * h:(i + 1) * h], dc[i * h:(i + 1) * h]
                ct = cs[(t * b + i) * h:(t * b + i + 1) * h]
                dyi = dy[(t * b + i) * h:(t * b + i + 1) * h]
                cp = prev_c[prev_base + i * h:prev_base + (i + 1) * h]
                for j in range(h):         # g = dh + dy, kept in dh's row
                    g[j] = g[j] + dyi[j]
                for j in range(h):
                    tc[j] = tanh_f32(ct[j])
                for j in range(h):         # the output gate
                    og = z[3 * h + j]
                    o[3 * h + j] = g[j] * tc[j] * (og * (one - og))
                for j in range(h):         # dc gains h's path through tanh(c)
                    og = z[3 * h + j]
                    dci[j] = dci[j] + g[j] * og * (one - tc[j] * tc[j])
                for j in range(h):         # the input, forget and candidate gates
                    ig, fg, gg, d_c = z[j], z[h + j], z[2 * h + j], dci[j]
                    o[j] = d_c * gg * (ig * (one - ig))
                    o[h + j] = d_c * cp[j] * (fg * (one - fg))
                    o[2 * h + j] = d_c * ig * (one - gg * gg)
                for j in range(h):
                    dci[j] = dci[j] * z[h + j]
                    g[j] = 0.0
            # dh_prev = dz W (an ended row's dz is 0: its dh holds)
            if masked:
                masked_state_grad(dz, t * b * 4 * h, 4, lo, hi, h, w, hp_w, masks, b, scr, sb,
                                  dh)
            else:
                products(dz, t * b * 4 * h, 4 * h, lo, hi, 4 * h, w, 0, hp_w, scr, sb)
                add_rows(dh, lo, hi, h, scr, sb, hp_w)

    @inline
    def products(a, a_base, a_row, lo, hi, inner, w, w_base, width, scr, sb):
        """scr[sb + (r - lo) * width + j] = sum_k a[a_base + r * a_row + k]
        w[w_base + k * width + j] for the rows r in [lo, hi): a block of COLS columns of w at
        a time, so that the block stays in the L1 cache over all the rows."""
        for j0 in range(0, width, COLS):
            cols = min(COLS, width - j0)
            for r0 in range(lo, hi, ROWS):
                product(a, a_base + r0 * a_row, a_row, 1, min(ROWS, hi - r0), inner, w,
                        w_base + j0, width, cols, scr, sb + (r0 - lo) * width + j0, width,
                        np.float32(1.0), False)

    @inline
    def masked_products(prev, prev_base, h, lo, hi, w, width, masks, gates, b, scr, sb, hm):
        """`products` of the rows [lo, hi) of the previous states by the forward weights (H,
        width), gate k's columns from the rows times gate k's masks (masks (gates, B, H)),
        copied to scratch at `hm` first; the gates in order (module doc: the spill)."""
        tiles = -(-h // 16) * 16
        for k in range(gates):
            for i in range(lo, hi):
                src = prev[prev_base + i * h:prev_base + (i + 1) * h]
                m = masks[(k * b + i) * h:(k * b + i + 1) * h]
                dst = scr[hm + (i - lo) * h:hm + (i - lo + 1) * h]
                for j in range(h):
                    dst[j] = src[j] * m[j]
            for j0 in range(0, tiles, COLS):
                cols = min(COLS, tiles - j0)
                for r0 in range(lo, hi, ROWS):
                    product(scr, hm + (r0 - lo) * h, h, 1, min(ROWS, hi - r0), h, w,
                            k * h + j0, width, cols, scr, sb + (r0 - lo) * width + k * h + j0,
                            width, np.float32(1.0), False)

    @inline
    def masked_state_grad(dz, dz_base, gates, lo, hi, h, w, width, masks, b, scr, sb, dh):
        """dh's rows [lo, hi) += sum_k m_k * (dz_k W_k) over the gates k: dz (T, B, gates*H)
        the pre-activations' gradients at `dz_base`, W (gates*H, width) the backward weights,
        masks (gates, B, H)."""
        for k in range(gates):
            products(dz, dz_base + k * h, gates * h, lo, hi, h, w, k * h * width, width, scr,
                     sb)
            for i in range(lo, hi):
                r = sb + (i - lo) * width
                g, s = dh[i * h:(i + 1) * h], scr[r:r + h]
                m = masks[(k * b + i) * h:(k * b + i + 1) * h]
                for j in range(h):
                    g[j] = g[j] + s[j] * m[j]

    @inline
    def add_rows(dh, lo, hi, h, scr, sb, width):
        """dh's rows lo..hi += the products' rows in scratch (`width` apart)."""
        for i in range(lo, hi):
            r = sb + (i - lo) * width
            g, s = dh[i * h:(i + 1) * h], scr[r:r + h]
            for j in range(h):
                g[j] = g[j] + s[j]

    @inline
    def simple_forward_rows(d, lo, hi, slot):
        f32 = np.float32
        xw, w, h0, hs = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        lengths, masks = view(d, 11, np.int64), view(d, 13, f32)
        scr, p = view(d, 15, f32), view(d, 17, np.int64)
        t_len, b, h, cp, relu, masked = p[0], p[1], p[2], p[3], p[5], p[6]
        sb = slot * p[4]
        zero = f32(0.0)
        for t in range(t_len):
            prev = h0 if t == 0 else hs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                if masked:
                    masked_products(prev, prev_base, h, g0, g1, w, cp, masks, 1, b, scr, sb,
                                    sb + p[4] - GROUP * h)
                else:
                    products(prev, prev_base, h, g0, g1, h, w, 0, cp, scr, sb)
                for i in range(g0, g1):
                    out = hs[(t * b + i) * h:(t * b + i + 1) * h]
                    if t >= lengths[i]:          # ended: the state holds
                        out[:] = prev[prev_base + i * h:prev_base + (i + 1) * h]
                        continue
                    x = xw[(t * b + i) * h:(t * b + i + 1) * h]
                    rec = scr[sb + (i - g0) * cp:sb + (i - g0) * cp + h]
                    if relu:
                        for j in range(h):     # NaN stays NaN, as tf.nn.relu
                            v = x[j] + rec[j]
                            out[j] = zero if v < zero else v
                    else:
                        for j in range(h):
                            out[j] = tanh_f32(x[j] + rec[j])

    @inline
    def simple_backward_rows(d, lo, hi, slot):
        f32 = np.float32
        hs, dy, dh, d_pre = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        w, lengths, masks = view(d, 11, f32), view(d, 13, np.int64), view(d, 15, f32)
        scr, p = view(d, 17, f32), view(d, 19, np.int64)
        t_len, b, h, hp_w, relu, masked = p[0], p[1], p[2], p[3], p[5], p[6]
        sb = slot * p[4]
        zero, one = f32(0.0), f32(1.0)
        for t in range(t_len - 1, -1, -1):
            for i in range(lo, hi):
                o = d_pre[(t * b + i) * h:(t * b + i + 1) * h]
                if t >= lengths[i]:          # ended: dh passes to the held state
                    o[:] = 0.0
                    continue
                g, dyi = dh[i * h:(i + 1) * h], dy[(t * b + i) * h:(t * b + i + 1) * h]
                y = hs[(t * b + i) * h:(t * b + i + 1) * h]
                if relu:
                    for j in range(h):
                        o[j] = g[j] + dyi[j] if y[j] > zero else zero
                else:
                    for j in range(h):
                        o[j] = (g[j] + dyi[j]) * (one - y[j] * y[j])
                g[:] = 0.0
            # dh_prev = d_pre R (an ended row's d_pre is 0: its dh holds)
            if masked:
                masked_state_grad(d_pre, t * b * h, 1, lo, hi, h, w, hp_w, masks, b, scr, sb,
                                  dh)
            else:
                products(d_pre, t * b * h, h, lo, hi, h, w, 0, hp_w, scr, sb)
                add_rows(dh, lo, hi, h, scr, sb, hp_w)
