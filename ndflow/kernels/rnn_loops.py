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

Keras' dropout masks (RecurrentDropoutRNN, Keras' implementation 1: one mask per gate, the
same at every step): `lay.input_masks` (G, B, I) scale the input that gate k's input weights
see, `lay.rec_masks` (G, B, H) the previous state that its recurrent weights see; None where
there are none. Each then turns a GEMM over all the gates into one per gate.
"""

from __future__ import annotations

import torch

from ndflow.kernels import gemm, rnn_numba, tanh_numba


def _tanh_(x: torch.Tensor) -> torch.Tensor:
    return tanh_numba.tanh(x, x) if tanh_numba.applies(x) else x.tanh_()


def _tanh(x: torch.Tensor) -> torch.Tensor:
    return tanh_numba.tanh(x) if tanh_numba.applies(x) else torch.tanh(x)


def _gate(k: int, h: int) -> slice:
    return slice(k * h, (k + 1) * h)


def _masked(seq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """seq (T, B, X) times a (B, X) mask at every step, as (T*B, X)."""
    return (seq * mask).reshape(-1, seq.shape[-1])


def _input_projection(lay, bias: torch.Tensor) -> torch.Tensor:
    t_len, b, h = lay.seq, lay.batch, lay.units
    if lay.input_masks is None:
        x = lay.x.reshape(t_len * b, lay.input_size)
        return gemm.linear(x, lay.w_ih, bias).view(t_len, b, lay.w_ih.shape[0])
    xw = lay.x.new_empty(t_len, b, lay.w_ih.shape[0])
    x_k = torch.empty_like(lay.x, memory_format=torch.contiguous_format)
    for k, mask in enumerate(lay.input_masks):
        torch.mul(lay.x, mask, out=x_k)
        xw[:, :, _gate(k, h)] = gemm.linear(x_k.view(t_len * b, -1), lay.w_ih[_gate(k, h)],
                                            bias[_gate(k, h)]).view(t_len, b, h)
    return xw


def _input_grad(lay, d_xw: torch.Tensor) -> torch.Tensor:
    """dx (T, B, I) from the input-side gate gradients (T*B, G*H)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    if lay.input_masks is None:
        return gemm.linear(d_xw, lay.w_ih.t()).view(t_len, b, lay.input_size)
    dx = torch.zeros_like(lay.x)
    for k, mask in enumerate(lay.input_masks):
        part = gemm.linear(d_xw[:, _gate(k, h)], lay.w_ih[_gate(k, h)].t())
        dx.addcmul_(part.view(t_len, b, -1), mask)
    return dx


def _gate_weight_grad(seq: torch.Tensor, masks, d: torch.Tensor, out: torch.Tensor,
                      h: int) -> None:
    """out (G*H, X) = d^T seq: d (T*B, G*H) a side's gate gradients, seq (T, B, X) what that
    side's weights saw (times gate k's mask for gate k's rows, where `masks`). As (seq^T d)^T:
    the long sum over T*B steps ran at 180 GFLOP/s as d^T seq, at 250 this way (oneDNN, Zen
    5)."""
    if masks is None:
        out.copy_(gemm.linear(seq.reshape(-1, seq.shape[-1]).t(), d.t()).t())
        return
    for k, mask in enumerate(masks):
        out[_gate(k, h)].copy_(gemm.linear(_masked(seq, mask).t(), d[:, _gate(k, h)].t()).t())


def _weight_grads(lay, hs, d_xw, d_hr) -> torch.Tensor:
    """params' gradient: input weights from the input-side gate gradients (T*B, G*H),
    recurrent weights from the recurrent-side ones and the states each step saw (h0, then
    hs), written into their places in one vector."""
    t_len, h = lay.seq, lay.units
    gh, i = lay.w_ih.shape
    n_w, n_r = gh * i, gh * h
    dparams = d_xw.new_empty(n_w + n_r + 2 * gh)
    if t_len == 0:
        return dparams.zero_()
    _gate_weight_grad(lay.x, lay.input_masks, d_xw, dparams[:n_w].view(gh, i), h)
    h_prev = torch.cat([lay.h0.unsqueeze(0), hs[:-1]])
    _gate_weight_grad(h_prev, lay.rec_masks, d_hr, dparams[n_w:n_w + n_r].view(gh, h), h)
    torch.sum(d_xw, 0, out=dparams[n_w + n_r:n_w + n_r + gh])
    torch.sum(d_hr, 0, out=dparams[n_w + n_r + gh:])
    return dparams


def _recurrent(lay, base: torch.Tensor, h_t: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """out (B, G*H) = base + h_t R^T, gate k's block from h_t times its recurrent mask."""
    if lay.rec_masks is None:
        return torch.addmm(base, h_t, lay.w_hh.t(), out=out)
    h = lay.units
    for k, mask in enumerate(lay.rec_masks):
        out[:, _gate(k, h)] = torch.addmm(base[:, _gate(k, h)], h_t * mask,
                                          lay.w_hh[_gate(k, h)].t())
    return out


def _state_grad(lay, d: torch.Tensor, base: torch.Tensor | None = None) -> torch.Tensor:
    """(base +) the previous state's gradient through the recurrent product, from its gate
    gradients d (B, G*H)."""
    if lay.rec_masks is None:
        return torch.mm(d, lay.w_hh) if base is None else torch.addmm(base, d, lay.w_hh)
    h = lay.units
    out = torch.zeros_like(lay.h0) if base is None else base.clone()
    for k, mask in enumerate(lay.rec_masks):
        out.addcmul_(torch.mm(d[:, _gate(k, h)], lay.w_hh[_gate(k, h)]), mask)
    return out


# -- LSTM --------------------------------------------------------------------------------------

def lstm_forward(lay):
    """(outputs (T, B, H), h, c, reserve_space: the activated gates and the cell states).
    float32 on the CPU runs all the steps in one numba call (kernels/rnn_numba.py), which also
    takes sequences shorter than T (`lay.lengths`)."""
    t_len, b, h = lay.seq, lay.batch, lay.units
    xw = _input_projection(lay, lay.b_ih + lay.b_hh)
    if rnn_numba.applies(xw):
        hs, reserve = rnn_numba.lstm_forward(xw, lay.w_hh, lay.h0, lay.c0, lay.lengths,
                                             lay.rec_masks)
        c_last = reserve[-b * h:].view(b, h) if t_len else lay.c0
        return hs, hs[-1] if t_len else lay.h0, c_last, reserve
    gates = torch.empty_like(xw)
    hs = xw.new_empty(t_len, b, h)
    cs = xw.new_empty(t_len, b, h)
    h_t, c_t = lay.h0, lay.c0
    for t in range(t_len):
        z = _recurrent(lay, xw[t], h_t, gates[t])
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
                                                 lay.w_hh, lay.lengths, lay.rec_masks)
    else:
        dz_all, dh, dc = _lstm_backward_loop(lay, gates, cs, dy, dh_last, dc_last)
    dz = dz_all.view(t_len * b, 4 * h)
    return _input_grad(lay, dz), dh, dc, _weight_grads(lay, hs, dz, dz)


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
        dh = _state_grad(lay, dz_all[t])
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
        hs, saved = rnn_numba.gru_forward(xw, lay.b_hh, lay.w_hh, lay.h0, lay.lengths,
                                          lay.rec_masks)
        return hs, hs[-1] if t_len else lay.h0, saved.reshape(-1)
    saved = xw.new_empty(t_len, 4, b, h)
    hs = xw.new_empty(t_len, b, h)
    h_t, b_hh = lay.h0, lay.b_hh.expand(b, 3 * h)
    hr = xw.new_empty(b, 3 * h)
    rz = xw.new_empty(b, 2 * h)
    for t in range(t_len):
        _recurrent(lay, b_hh, h_t, hr)
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
                                                lay.lengths, lay.rec_masks)
    else:
        d_xw, d_hr, dh = _gru_backward_loop(lay, saved, hs, dy, dh_last)
    d_xw = d_xw.view(t_len * b, 3 * h)
    d_hr = d_hr.view(t_len * b, 3 * h)
    return _input_grad(lay, d_xw), dh, _weight_grads(lay, hs, d_xw, d_hr)


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
        dh = _state_grad(lay, d_hr[t].view(b, 3 * h), dh * z[t])
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
                                      lay.mode == "rnn_relu", lay.rec_masks)
    else:
        hs, act, h_t = xw.new_empty(t_len, b, h), _activation(lay), lay.h0
        for t in range(t_len):
            h_t = act(_recurrent(lay, xw[t], h_t, hs[t]))
    return hs, hs[-1] if t_len else lay.h0, xw.new_empty(0)


def simple_backward(lay, hs, dy, dh_last):
    """(dx (T, B, I), dh0, dparams) from the forward's outputs hs (T, B, H)."""
    t_len, b = lay.seq, lay.batch
    relu = lay.mode == "rnn_relu"
    if rnn_numba.applies(hs):
        d_pre, dh = rnn_numba.simple_backward(hs, dy, dh_last, lay.w_hh, lay.lengths, relu,
                                              lay.rec_masks)
    else:
        d_pre, dh = torch.empty_like(hs), dh_last
        for t in reversed(range(t_len)):
            y = hs[t]
            slope = (y > 0).to(y.dtype) if relu else 1 - y * y
            torch.mul(dh + dy[t], slope, out=d_pre[t])
            dh = _state_grad(lay, d_pre[t])
    d_pre = d_pre.view(t_len * b, lay.units)
    return _input_grad(lay, d_pre), dh, _weight_grads(lay, hs, d_pre, d_pre)
