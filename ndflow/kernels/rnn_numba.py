"""The gate math of one GRU or LSTM time step as one numba loop, for CudnnRNNV3's float32
LSTM and GRU on CPUs (kernels/rnn_loops.py runs the steps; other dtypes and devices keep its
ATen calls, and an LSTM over full-length sequences oneDNN's primitive).

A step of the ATen loop is the recurrent GEMM and eight small calls (add, sigmoid, three
copies into the reserve, two addcmuls, tanh) in the forward, an add, two products and the
GEMM in the backward after a pass computing the gates' factors for every step: on the
Embedding+GRU benchmark (batch 64, 128 units, 100 steps) ~50 us of dispatch a step against
~45 us of GEMM. Here each step is the GEMM and one call that reads each value once. GRU
(cuDNN's gate order r, z, n; the reset gate scales the recurrent projection):

    forward   r = s(xw_r + hr_r), z = s(xw_z + hr_z), n = tanh(xw_n + r * hr_n),
              h = n + z * (h_prev - n); r, z, n, hr_n saved for the backward
    backward  g = dh + dy_t, a = g (1 - z)(1 - n^2),
              d_xw = (a hr_n r(1 - r), g (h_prev - n) z(1 - z), a), d_hr = (.., .., a r),
              dh_prev = g z + d_hr @ R (the GEMM, outside)

LSTM (gates i, f, g, o): c = f c_prev + i g, h = o tanh(c), the activated gates and the cell
states saved; its backward carries dc through f.

`lengths` (CudnnRNNV3's sequence_lengths): a row whose sequence has ended holds its state
(h, c) from then on and takes no gradient at those steps, so a batch of padded sequences
runs in one op (the op's outputs there are zeroed by the caller).

sigmoid and tanh are the vectorized float32 functions the Tanh kernel and the JIT use
(kernels/exp_numba.py, kernels/tanh_numba.py). One thread: a step's 8192 gates are ~10 us of
work, less than waking ATen's team. Each loop touches few arrays: LLVM vectorizes a loop only
while its runtime checks that the arrays do not overlap stay few (one loop writing three
arrays and reading six ran scalar, 24 us a step instead of 16).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.kernels import exp_numba, simd_numba, tanh_numba
from ndflow.kernels.build_once import built_once

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
sigmoid_f32 = tanh_f32 = wide_vectors = None


def _build():
    if tanh_numba.tanh_f32_function() is None:
        return None
    from numba import njit  # noqa: PLC0415 - loads with the first such kernel, not with ndflow
    global sigmoid_f32, tanh_f32, wide_vectors
    sigmoid_f32 = exp_numba.helpers()[1]
    tanh_f32 = tanh_numba.tanh_f32_function()
    wide_vectors = simd_numba.vector_ops().wide_vectors

    @njit(cache=True, nogil=True, error_model="numpy")
    def gru_forward_step(xw, hr, h0, saved, hs, lengths, t):
        """xw (T, B, 3H) input projections, hr (B, 3H) = h_prev R^T + b_R; writes saved[t]
        (4, B, H: r, z, n, hr_n) and hs[t]."""
        wide_vectors()
        b, h = h0.shape
        h_prev = h0 if t == 0 else hs[t - 1]
        for i in range(b):
            hp, out = h_prev[i], hs[t, i]
            if t >= lengths[i]:          # ended: the state holds
                for j in range(h):
                    out[j] = hp[j]
                continue
            x, rec = xw[t, i], hr[i]
            r_out, z_out, n_out, hn_out = saved[t, 0, i], saved[t, 1, i], saved[t, 2, i], \
                saved[t, 3, i]
            for j in range(h):
                r = sigmoid_f32(x[j] + rec[j])
                z = sigmoid_f32(x[h + j] + rec[h + j])
                hn = rec[2 * h + j]
                n = tanh_f32(x[2 * h + j] + r * hn)
                r_out[j], z_out[j], n_out[j], hn_out[j] = r, z, n, hn
                out[j] = n + z * (hp[j] - n)

    @njit(cache=True, nogil=True, error_model="numpy")
    def gru_backward_step(saved, hs, h0, dy, dh, d_xw, d_hr, dh_z, lengths, t):
        """dh (B, H): the gradient reaching h_t from later steps; writes d_xw[t], d_hr[t]
        (B, 3H) and dh_z (B, H), the part of dh_prev outside the GEMM."""
        wide_vectors()
        b, h = h0.shape
        h_prev = h0 if t == 0 else hs[t - 1]
        one = np.float32(1.0)
        for i in range(b):
            dx_out, dh_out, g = d_xw[t, i], d_hr[t, i], dh_z[i]
            dhi = dh[i]
            if t >= lengths[i]:          # ended: dh passes to the held state unchanged
                for j in range(3 * h):
                    dx_out[j] = 0.0
                    dh_out[j] = 0.0
                for j in range(h):
                    g[j] = dhi[j]
                continue
            r_in, z_in, n_in, hn_in = saved[t, 0, i], saved[t, 1, i], saved[t, 2, i], \
                saved[t, 3, i]
            dyi, hp = dy[t, i], h_prev[i]
            for j in range(h):         # g = dh + dy, in dh_z's row until its last loop
                g[j] = dhi[j] + dyi[j]
            for j in range(h):         # the update gate
                z = z_in[j]
                c_z = g[j] * (hp[j] - n_in[j]) * (z * (one - z))
                dx_out[h + j] = c_z
                dh_out[h + j] = c_z
            for j in range(h):         # the candidate (a) and the reset gate
                n, r = n_in[j], r_in[j]
                a = g[j] * (one - z_in[j]) * (one - n * n)
                c_r = a * hn_in[j] * (r * (one - r))
                dx_out[j] = c_r
                dh_out[j] = c_r
                dx_out[2 * h + j] = a
                dh_out[2 * h + j] = a * r
            for j in range(h):
                g[j] = g[j] * z_in[j]

    @njit(cache=True, nogil=True, error_model="numpy")
    def lstm_forward_step(pre, gates, h0, c0, cs, hs, lengths, t):
        """pre (B, 4H) = xw_t + h_prev R^T; writes the activated gates[t] (B, 4H), cs[t] and
        hs[t]."""
        wide_vectors()
        b, h = c0.shape
        h_prev = h0 if t == 0 else hs[t - 1]
        c_prev = c0 if t == 0 else cs[t - 1]
        for i in range(b):
            cp, co, ho = c_prev[i], cs[t, i], hs[t, i]
            if t >= lengths[i]:          # ended: the state holds
                hp = h_prev[i]
                for j in range(h):
                    co[j] = cp[j]
                    ho[j] = hp[j]
                continue
            x, z = pre[i], gates[t, i]
            for j in range(2 * h):
                z[j] = sigmoid_f32(x[j])
            for j in range(2 * h, 3 * h):
                z[j] = tanh_f32(x[j])
            for j in range(3 * h, 4 * h):
                z[j] = sigmoid_f32(x[j])
            for j in range(h):
                c = z[h + j] * cp[j] + z[j] * z[2 * h + j]
                co[j] = c
                ho[j] = z[3 * h + j] * tanh_f32(c)

    @njit(cache=True, nogil=True, error_model="numpy")
    def lstm_backward_step(gates, cs, c0, dy, dh, dc, dz, carry, scratch, lengths, t):
        """dh, dc (B, H): the gradients reaching h_t and c_t; writes dz[t] (B, 4H), the new
        dc in place and `carry`, the part of dh_prev outside the GEMM."""
        wide_vectors()
        b, h = c0.shape
        one = np.float32(1.0)
        c_prev = c0 if t == 0 else cs[t - 1]
        g, tc = scratch[0], scratch[1]
        for i in range(b):
            o, dci, cr, dhi = dz[t, i], dc[i], carry[i], dh[i]
            if t >= lengths[i]:          # ended: dh and dc pass to the held state
                for j in range(4 * h):
                    o[j] = 0.0
                for j in range(h):
                    cr[j] = dhi[j]
                continue
            for j in range(h):
                cr[j] = 0.0
            z, dyi, ct = gates[t, i], dy[t, i], cs[t, i]
            for j in range(h):
                g[j] = dhi[j] + dyi[j]
            for j in range(h):
                tc[j] = tanh_f32(ct[j])
            for j in range(h):         # the output gate
                og = z[3 * h + j]
                o[3 * h + j] = g[j] * tc[j] * (og * (one - og))
            for j in range(h):         # dc gains h's path through tanh(c)
                og = z[3 * h + j]
                dci[j] = dci[j] + g[j] * og * (one - tc[j] * tc[j])
            cp = c_prev[i]
            for j in range(h):         # the input, forget and candidate gates
                ig, fg, gg, d_c = z[j], z[h + j], z[2 * h + j], dci[j]
                o[j] = d_c * gg * (ig * (one - ig))
                o[h + j] = d_c * cp[j] * (fg * (one - fg))
                o[2 * h + j] = d_c * ig * (one - gg * gg)
            for j in range(h):
                dci[j] = dci[j] * z[h + j]

    return gru_forward_step, gru_backward_step, lstm_forward_step, lstm_backward_step


_steps = built_once(_build)
gru_forward_step = gru_backward_step = lstm_forward_step = lstm_backward_step = None


def applies(x: torch.Tensor) -> bool:
    """Whether the loops below run for tensors like `x` (float32 on the CPU, numba present)."""
    return x.dtype == torch.float32 and x.device.type == "cpu" and _steps() is not None


def _lengths(lengths, t_len: int, b: int) -> np.ndarray:
    if lengths is None:
        return np.full(b, t_len, np.int64)
    return np.ascontiguousarray(lengths.to("cpu", torch.int64).numpy())


def gru_forward(xw: torch.Tensor, b_hh: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor,
                lengths=None):
    """(hs (T, B, H), saved (T, 4, B, H)) from the input projections xw (T, B, 3H) with the
    input bias, the recurrent bias (3H) and weights (3H, H), the first state (B, H) and the
    sequences' lengths (B,) (None: all T); an ended sequence's rows of hs hold its state."""
    step = _steps()[0]
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    xw, h0 = xw.contiguous(), h0.contiguous()
    saved = xw.new_zeros(t_len, 4, b, h) if lengths is not None else \
        xw.new_empty(t_len, 4, b, h)
    hs = xw.new_empty(t_len, b, h)
    hr = xw.new_empty(b, 3 * h)
    arrays = (xw.numpy(), hr.numpy(), h0.numpy(), saved.numpy(), hs.numpy(),
              _lengths(lengths, t_len, b))
    h_t, w_hh_t = h0, w_hh.t()
    for t in range(t_len):
        torch.addmm(b_hh, h_t, w_hh_t, out=hr)
        step(*arrays, t)
        h_t = hs[t]
    return hs, saved


def gru_backward(saved: torch.Tensor, hs: torch.Tensor, h0: torch.Tensor, dy: torch.Tensor,
                 dh_last: torch.Tensor, w_hh: torch.Tensor, lengths=None):
    """(d_xw, d_hr (T, B, 3H): the gradients of the input and recurrent projections, dh0)."""
    step = _steps()[1]
    t_len, b, h = hs.shape
    d_xw = hs.new_empty(t_len, b, 3 * h)
    d_hr = hs.new_empty(t_len, b, 3 * h)
    dh_z = hs.new_empty(b, h)
    dh = dh_last.contiguous().clone()
    arrays = (saved.contiguous().numpy(), hs.contiguous().numpy(), h0.contiguous().numpy(),
              dy.contiguous().numpy(), dh.numpy(), d_xw.numpy(), d_hr.numpy(), dh_z.numpy(),
              _lengths(lengths, t_len, b))
    for t in reversed(range(t_len)):
        step(*arrays, t)
        torch.addmm(dh_z, d_hr[t], w_hh, out=dh)
    return d_xw, d_hr, dh


def lstm_forward(xw: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                 lengths=None):
    """(hs (T, B, H), reserve: the activated gates (T, B, 4H) then the cell states (T, B, H),
    one buffer) from the input projections xw (T, B, 4H) with both biases, the recurrent
    weights (4H, H), the first states and the sequences' lengths; an ended sequence's rows
    hold its states."""
    step = _steps()[2]
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    h0, c0 = h0.contiguous(), c0.contiguous()
    n = t_len * b * 4 * h
    reserve = xw.new_zeros(n + t_len * b * h) if lengths is not None else \
        xw.new_empty(n + t_len * b * h)
    gates, cs = reserve[:n].view(t_len, b, 4 * h), reserve[n:].view(t_len, b, h)
    hs = xw.new_empty(t_len, b, h)
    pre = xw.new_empty(b, 4 * h)
    arrays = (pre.numpy(), gates.numpy(), h0.numpy(), c0.numpy(), cs.numpy(), hs.numpy(),
              _lengths(lengths, t_len, b))
    h_t, w_hh_t = h0, w_hh.t()
    for t in range(t_len):
        torch.addmm(xw[t], h_t, w_hh_t, out=pre)
        step(*arrays, t)
        h_t = hs[t]
    return hs, reserve


def lstm_backward(gates: torch.Tensor, cs: torch.Tensor, c0: torch.Tensor, dy: torch.Tensor,
                  dh_last: torch.Tensor, dc_last: torch.Tensor, w_hh: torch.Tensor,
                  lengths=None):
    """(dz (T, B, 4H): the gradients of the gates' pre-activations, dh0, dc0)."""
    step = _steps()[3]
    t_len, b, h = cs.shape
    dz = gates.new_empty(t_len, b, 4 * h)
    dh, dc = dh_last.contiguous().clone(), dc_last.contiguous().clone()
    carry = gates.new_empty(b, h)
    scratch = np.empty((2, h), np.float32)
    arrays = (gates.contiguous().numpy(), cs.contiguous().numpy(), c0.contiguous().numpy(),
              dy.contiguous().numpy(), dh.numpy(), dc.numpy(), dz.numpy(), carry.numpy(),
              scratch, _lengths(lengths, t_len, b))
    for t in reversed(range(t_len)):
        step(*arrays, t)
        torch.addmm(carry, dz[t], w_hh, out=dh)
    return dz, dh, dc
