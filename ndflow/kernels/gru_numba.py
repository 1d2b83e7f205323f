"""The GRU's gate math of one time step as one numba loop, for CudnnRNNV3's float32 GRU on
CPUs (kernels/rnn_loops.py runs the steps; other dtypes and devices keep its ATen calls).

A step of the ATen loop is the recurrent GEMM and eight small calls (add, sigmoid, three
copies into the reserve, two addcmuls, tanh) in the forward, an add, two products and the
GEMM in the backward after a pass computing the gates' factors for every step: on the
Embedding+GRU benchmark (batch 64, 128 units, 100 steps) ~50 us of dispatch a step against
~45 us of GEMM. Here each step is the GEMM and one call that reads each value once:

    forward   r = s(xw_r + hr_r), z = s(xw_z + hr_z), n = tanh(xw_n + r * hr_n),
              h = n + z * (h_prev - n); r, z, n, hr_n saved for the backward
    backward  g = dh + dy_t, a = g (1 - z)(1 - n^2),
              d_xw = (a hr_n r(1 - r), g (h_prev - n) z(1 - z), a), d_hr = (.., .., a r),
              dh_prev = g z + d_hr @ R (the GEMM, outside)

with sigmoid and tanh as the vectorized float32 functions the Tanh kernel and the JIT use
(kernels/exp_numba.py, kernels/tanh_numba.py). One thread: a step's 8192 gates are ~10 us of
work, less than waking ATen's team.
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
    def forward_step(xw, hr, h0, saved, hs, t):
        """xw (T, B, 3H) input projections, hr (B, 3H) = h_prev R^T + b_R; writes saved[t]
        (4, B, H: r, z, n, hr_n) and hs[t]."""
        wide_vectors()
        b, h = h0.shape
        h_prev = h0 if t == 0 else hs[t - 1]
        for i in range(b):
            x, rec, hp, out = xw[t, i], hr[i], h_prev[i], hs[t, i]
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
    def backward_step(saved, hs, h0, dy, dh, d_xw, d_hr, dh_z, t):
        """dh (B, H): the gradient reaching h_t from later steps; writes d_xw[t], d_hr[t]
        (B, 3H) and dh_z = g z (B, H). Short loops over a row, each touching few arrays:
        LLVM vectorizes a loop only when its runtime checks that the arrays do not overlap
        stay few (one loop writing three arrays and reading six ran scalar, 24 us a step
        instead of 16)."""
        wide_vectors()
        b, h = h0.shape
        h_prev = h0 if t == 0 else hs[t - 1]
        one = np.float32(1.0)
        for i in range(b):
            r_in, z_in, n_in, hn_in = saved[t, 0, i], saved[t, 1, i], saved[t, 2, i], \
                saved[t, 3, i]
            dx_out, dh_out, g = d_xw[t, i], d_hr[t, i], dh_z[i]
            dyi, dhi, hp = dy[t, i], dh[i], h_prev[i]
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

    return forward_step, backward_step


_steps = built_once(_build)
forward_step = backward_step = None


def applies(x: torch.Tensor) -> bool:
    """Whether the loops below run for tensors like `x` (float32 on the CPU, numba present)."""
    return x.dtype == torch.float32 and x.device.type == "cpu" and _steps() is not None


def forward(xw: torch.Tensor, b_hh: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor):
    """(hs (T, B, H), saved (T, 4, B, H)) from the input projections xw (T, B, 3H) with the
    input bias, the recurrent bias (3H) and weights (3H, H) and the first state (B, H)."""
    step = _steps()[0]
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    xw, h0 = xw.contiguous(), h0.contiguous()
    saved = xw.new_empty(t_len, 4, b, h)
    hs = xw.new_empty(t_len, b, h)
    hr = xw.new_empty(b, 3 * h)
    arrays = (xw.numpy(), hr.numpy(), h0.numpy(), saved.numpy(), hs.numpy())
    h_t, w_hh_t = h0, w_hh.t()
    for t in range(t_len):
        torch.addmm(b_hh, h_t, w_hh_t, out=hr)
        step(*arrays, t)
        h_t = hs[t]
    return hs, saved


def backward(saved: torch.Tensor, hs: torch.Tensor, h0: torch.Tensor, dy: torch.Tensor,
             dh_last: torch.Tensor, w_hh: torch.Tensor):
    """(d_xw, d_hr (T, B, 3H): the gradients of the input and recurrent projections, dh0)."""
    step = _steps()[1]
    t_len, b, h = hs.shape
    d_xw = hs.new_empty(t_len, b, 3 * h)
    d_hr = hs.new_empty(t_len, b, 3 * h)
    dh_z = hs.new_empty(b, h)
    dh = dh_last.contiguous().clone()
    arrays = (saved.contiguous().numpy(), hs.contiguous().numpy(), h0.contiguous().numpy(),
              dy.contiguous().numpy(), dh.numpy(), d_xw.numpy(), d_hr.numpy(), dh_z.numpy())
    for t in reversed(range(t_len)):
        step(*arrays, t)
        torch.addmm(dh_z, d_hr[t], w_hh, out=dh)
    return d_xw, d_hr, dh
