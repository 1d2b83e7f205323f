"""CudnnRNNV3's LSTM, GRU and plain RNN as ATen loops over the time steps, for every device
and dtype (kernels/cudnn_rnn.py takes oneDNN's LSTM instead on CPUs in float32/bfloat16).

The input projection of all steps is one GEMM; each step is one GEMM with the recurrent
weights and a few elementwise calls; the backward loop keeps the gates' gradients of every
step, so the weight gradients are again single GEMMs over the sequence. The GEMMs over the
sequence run on the faster CPU library for their shape (kernels/gemm.py). `reserve_space`
holds what the backward loop reads: the activated gates (and for the LSTM the cell states;
the plain RNN's backward reads the outputs).

`lay` is the call's `_Layout`: time-major input `x` (T, B, I), `h0`/`c0` (B, H), the
canonical weights `w_ih` (G*H, I), `w_hh` (G*H, H), biases `b_ih`, `b_hh` (G*H) with G = 4
(LSTM gates i, f, c, o), 3 (GRU gates r, z, n: cuDNN's order) or 1 (`lay.mode` rnn_tanh or
rnn_relu), and `lengths`: None when
every sequence has all T steps, else their lengths, which only the numba loops take
(`_Layout` refuses them elsewhere); the returned states of an ended sequence hold.
"""

from __future__ import annotations

import torch

from ndflow.kernels import gemm, rnn_numba, tanh_numba


def _tanh_(x: torch.Tensor) -> torch.Tensor:
    return tanh_numba.tanh(x, x) if tanh_numba.applies(x) else x.tanh_()


def _tanh(x: torch.Tensor) -> torch.Tensor:
    return tanh_numba.tanh(x) if tanh_numba.applies(x) else torch.tanh(x)


def _input_projection(lay, bias: torch.Tensor) -> torch.Tensor:
    t_len, b = lay.seq, lay.batch
    x = lay.x.reshape(t_len * b, lay.input_size)
    return gemm.linear(x, lay.w_ih, bias).view(t_len, b, lay.w_ih.shape[0])


def _weight_grads(lay, hs, d_xw, d_hr) -> torch.Tensor:
    """params' gradient: input weights from the input-side gate gradients (T*B, G*H),
    recurrent weights from the recurrent-side ones and the states each step saw (h0, then
    hs), written into their places in one vector."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    gh, i = lay.w_ih.shape
    n_w, n_r = gh * i, gh * h
    dparams = d_xw.new_empty(n_w + n_r + 2 * gh)
    if t_len == 0:
        return dparams.zero_()
    # as (x^T d_xw)^T: the long sum over T*B steps ran at 180 GFLOP/s as d_xw^T x, at 250
    # this way (oneDNN, Zen 5)
    x = lay.x.reshape(t_len * b, i)
    dparams[:n_w].view(gh, i).copy_(gemm.linear(x.t(), d_xw.t()).t())
    h_prev = torch.cat([lay.h0, hs[:-1].reshape((t_len - 1) * b, h)])
    dparams[n_w:n_w + n_r].view(gh, h).copy_(gemm.linear(h_prev.t(), d_hr.t()).t())
    torch.sum(d_xw, 0, out=dparams[n_w + n_r:n_w + n_r + gh])
    torch.sum(d_hr, 0, out=dparams[n_w + n_r + gh:])
    return dparams


# -- LSTM --------------------------------------------------------------------------------------

def lstm_forward(lay):
    """(outputs (T, B, H), h, c, reserve_space: the activated gates and the cell states).
    float32 on the CPU runs all the steps in one numba call (kernels/rnn_numba.py), which also
    takes sequences shorter than T (`lay.lengths`)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    xw = _input_projection(lay, lay.b_ih + lay.b_hh)
    if rnn_numba.applies(xw):
        hs, reserve = rnn_numba.lstm_forward(xw, lay.w_hh, lay.h0, lay.c0, lay.lengths)
        c_last = reserve[-b * h:].view(b, h) if t_len else lay.c0
        return hs, hs[-1] if t_len else lay.h0, c_last, reserve
    gates = torch.empty_like(xw)
    hs = xw.new_empty(t_len, b, h)
    cs = xw.new_empty(t_len, b, h)
    h_t, c_t, w_hh_t = lay.h0, lay.c0, lay.w_hh.t()
    for t in range(t_len):
        z = torch.addmm(xw[t], h_t, w_hh_t, out=gates[t])
        torch.sigmoid_(z[:, :2 * h])
        _tanh_(z[:, 2 * h:3 * h])
        torch.sigmoid_(z[:, 3 * h:])
        i, f, g, o = z.split(h, 1)
        c_t = torch.addcmul(f * c_t, i, g, out=cs[t])
        h_t = torch.mul(o, _tanh(c_t), out=hs[t])
    return hs, h_t, c_t, torch.cat([gates.reshape(-1), cs.reshape(-1)])


def lstm_backward(lay, hs, dy, dh_last, dc_last, reserve):
    """(dx (T, B, I), dh0, dc0, dparams)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    n = t_len * b * 4 * h
    gates = reserve[:n].view(t_len, b, 4 * h)
    cs = reserve[n:].view(t_len, b, h)
    if rnn_numba.applies(gates):
        dz_all, dh, dc = rnn_numba.lstm_backward(gates, cs, lay.c0, dy, dh_last, dc_last,
                                                 lay.w_hh, lay.lengths)
    else:
        dz_all, dh, dc = _lstm_backward_loop(lay, gates, cs, dy, dh_last, dc_last)
    dz = dz_all.view(t_len * b, 4 * h)
    dx = gemm.linear(dz, lay.w_ih.t()).view(t_len, b, lay.input_size)
    return dx, dh, dc, _weight_grads(lay, hs, dz, dz)


def _lstm_backward_loop(lay, gates, cs, dy, dh_last, dc_last):
    """(dz, dh0, dc0) in ATen calls."""
    h = lay.units
    dz_all = torch.empty_like(gates)
    dh, dc = dh_last.clone(), dc_last.clone()
    for t in reversed(range(lay.seq)):
        i, f, g, o = gates[t].split(h, 1)
        c_prev = cs[t - 1] if t else lay.c0
        tc = _tanh(cs[t])
        dh = dh + dy[t]
        dc = dc + dh * o * (1 - tc * tc)
        di, df, dg, do = dz_all[t].split(h, 1)
        torch.mul(dc * g, i * (1 - i), out=di)
        torch.mul(dc * c_prev, f * (1 - f), out=df)
        torch.mul(dc * i, 1 - g * g, out=dg)
        torch.mul(dh * tc, o * (1 - o), out=do)
        dc = dc * f
        dh = torch.mm(dz_all[t], lay.w_hh)
    return dz_all, dh, dc


# -- GRU (cuDNN's: the reset gate multiplies the recurrent projection, Keras' reset_after) ---

def gru_forward(lay):
    """(outputs (T, B, H), h, reserve_space): per step r = s(x W_r + b_Wr + h R_r + b_Rr),
    z likewise, n = tanh(x W_n + b_Wn + r * (h R_n + b_Rn)), h = n + z * (h - n). The reserve
    holds r, z, n and h R_n + b_Rn of every step, (T, 4, B, H): each a contiguous block.
    float32 on the CPU runs all the steps in one numba call (kernels/rnn_numba.py), which also
    takes sequences shorter than T (`lay.lengths`)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    xw = _input_projection(lay, lay.b_ih)
    if rnn_numba.applies(xw):
        hs, saved = rnn_numba.gru_forward(xw, lay.b_hh, lay.w_hh, lay.h0, lay.lengths)
        return hs, hs[-1] if t_len else lay.h0, saved.reshape(-1)
    saved = xw.new_empty(t_len, 4, b, h)
    hs = xw.new_empty(t_len, b, h)
    h_t, w_hh_t = lay.h0, lay.w_hh.t()
    hr = xw.new_empty(b, 3 * h)
    rz = xw.new_empty(b, 2 * h)
    for t in range(t_len):
        torch.addmm(lay.b_hh, h_t, w_hh_t, out=hr)
        torch.sigmoid_(torch.add(xw[t, :, :2 * h], hr[:, :2 * h], out=rz))
        r, z, n, hn = saved[t]
        r.copy_(rz[:, :h])
        z.copy_(rz[:, h:])
        hn.copy_(hr[:, 2 * h:])
        _tanh_(torch.addcmul(xw[t, :, 2 * h:], r, hn, out=n))
        h_t = torch.addcmul(n, z, h_t - n, out=hs[t])
    return hs, h_t, saved.reshape(-1)


def gru_backward(lay, hs, dy, dh_last, reserve):
    """(dx (T, B, I), dh0, dparams)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    saved = reserve.view(t_len, 4, b, h)
    if rnn_numba.applies(saved):
        d_xw, d_hr, dh = rnn_numba.gru_backward(saved, hs, lay.h0, dy, dh_last, lay.w_hh,
                                                lay.lengths)
    else:
        d_xw, d_hr, dh = _gru_backward_loop(lay, saved, hs, dy, dh_last)
    d_xw = d_xw.view(t_len * b, 3 * h)
    d_hr = d_hr.view(t_len * b, 3 * h)
    dx = gemm.linear(d_xw, lay.w_ih.t()).view(t_len, b, lay.input_size)
    return dx, dh, _weight_grads(lay, hs, d_xw, d_hr)


def _gru_backward_loop(lay, saved, hs, dy, dh_last):
    """(d_xw, d_hr, dh0) in ATen calls. Every factor of a step's gate gradients that does not
    depend on the incoming dh is computed for all steps at once before the loop:
    d(pre-activations) = dh * J (input side: r, z, n gates) and dh * K (recurrent side, where
    the reset gate scales n's part), so a step is an add, two products and one GEMM."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    r, z, n, hn = saved.unbind(1)
    h_prev = torch.cat([lay.h0.unsqueeze(0), hs[:-1]])[:t_len]
    a = (1 - z) * (1 - n * n)                  # d pre_n / dh
    factors = saved.new_empty(t_len, b, 4, h)  # J = (c_r, c_z, a), and a * r for K's n part
    torch.mul(a * hn, r * (1 - r), out=factors[:, :, 0])
    torch.mul(h_prev - n, z * (1 - z), out=factors[:, :, 1])
    factors[:, :, 2] = a
    torch.mul(a, r, out=factors[:, :, 3])
    j, k = factors[:, :, :3], factors[:, :, (0, 1, 3)].contiguous()
    dhs = saved.new_empty(t_len, b, h)
    d_hr = saved.new_empty(t_len, b, 3, h)
    dh = dh_last
    for t in reversed(range(t_len)):
        dh = torch.add(dh, dy[t], out=dhs[t])
        torch.mul(dh.unsqueeze(1), k[t], out=d_hr[t])
        dh = torch.addmm(dh * z[t], d_hr[t].view(b, 3 * h), lay.w_hh)
    d_xw = dhs.unsqueeze(2) * j
    return d_xw.view(t_len, b, 3 * h), d_hr.view(t_len, b, 3 * h), dh


# -- the plain RNN (cuDNN's rnn_tanh / rnn_relu: Keras' SimpleRNN) --------------------------

def _activation(lay):
    return torch.relu_ if lay.mode == "rnn_relu" else _tanh_


def simple_forward(lay):
    """(outputs (T, B, H), h, reserve_space: empty, the backward reads the outputs) of
    h = act(x W + b_W + h R + b_R). float32 on the CPU runs all the steps in one numba call
    (kernels/rnn_numba.py), which also takes sequences shorter than T (`lay.lengths`)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    xw = _input_projection(lay, lay.b_ih + lay.b_hh)
    if rnn_numba.applies(xw):
        hs = rnn_numba.simple_forward(xw, lay.w_hh, lay.h0, lay.lengths,
                                      lay.mode == "rnn_relu")
    else:
        hs, act, h_t, w_hh_t = xw.new_empty(t_len, b, h), _activation(lay), lay.h0, lay.w_hh.t()
        for t in range(t_len):
            h_t = act(torch.addmm(xw[t], h_t, w_hh_t, out=hs[t]))
    return hs, hs[-1] if t_len else lay.h0, xw.new_empty(0)


def simple_backward(lay, hs, dy, dh_last):
    """(dx (T, B, I), dh0, dparams) from the forward's outputs hs (T, B, H)."""
    t_len, b = lay.seq, lay.batch
    relu = lay.mode == "rnn_relu"
    if rnn_numba.applies(hs):
        d_pre, dh = rnn_numba.simple_backward(hs, dy, dh_last, lay.w_hh, lay.lengths, relu)
    else:
        d_pre, dh = torch.empty_like(hs), dh_last
        for t in reversed(range(t_len)):
            y = hs[t]
            slope = (y > 0).to(y.dtype) if relu else 1 - y * y
            torch.mul(dh + dy[t], slope, out=d_pre[t])
            dh = torch.mm(d_pre[t], lay.w_hh)
    d_pre = d_pre.view(t_len * b, lay.units)
    dx = gemm.linear(d_pre, lay.w_ih.t()).view(t_len, b, lay.input_size)
    return dx, dh, _weight_grads(lay, hs, d_pre, d_pre)
