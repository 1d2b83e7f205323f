"""Kernels for CudnnRNNV3 / CudnnRNNBackpropV3 (one unidirectional LSTM layer).

On CPUs, float32 (and bfloat16 where the CPU has bf16 units) runs oneDNN's LSTM primitive
through ATen (`mkldnn_rnn_layer` and its backward): the input projection of every step is
one GEMM, the per-step recurrent GEMMs and gate math run in oneDNN without returning to
Python, and the weight gradients are batched over the sequence. Measured on a 2-core Zen 4
(Keras' LSTM(128) on 64 x 100 steps of 64 features): forward 14.6 ms and backward 16.9 ms,
where the While loop of per-step ops took ~170 ms for both. `reserve_space` is then
oneDNN's workspace (its bytes seen as T).

Elsewhere (float64, float16, GPUs) an ATen loop over the steps computes the same function:
the input projection as one GEMM, per step one GEMM and the gate math; `reserve_space`
holds the activated gates and the cell states of every step, from which the backward loop
runs. Both kernels take the same path for the same dtype and device, so a reserve space is
always read by the kernel that wrote it.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels.registry import kernel
from ndflow.ops import cudnn_rnn

aten = torch.ops.aten
_LSTM_MODE = 2   # ATen's RNN mode numbering (RNN_RELU, RNN_TANH, LSTM, GRU)


def _onednn(x: torch.Tensor, units: int) -> bool:
    """Whether oneDNN runs this call (never on empty tensors, which its primitive rejects)."""
    if (x.device.type != "cpu" or not torch.backends.mkldnn.is_available() or x.numel() == 0
            or units == 0):
        return False
    if x.dtype is torch.float32:
        return True
    return x.dtype is torch.bfloat16 and torch.ops.mkldnn._is_mkldnn_bf16_supported()


def _check_config(node) -> None:
    a, name = node.attrs, node.op_def.name
    unsupported = [f"{k}={a[k]!r}" for k, ok in (
        ("rnn_mode", a["rnn_mode"] == "lstm"), ("direction", a["direction"] == "unidirectional"),
        ("input_mode", a["input_mode"] in ("linear_input", "auto_select")),
        ("num_proj", a["num_proj"] == 0)) if not ok]
    if unsupported:
        raise UnimplementedError(None, None, f"{name} runs one unidirectional LSTM layer "
                                 f"with linear input and no projection; got "
                                 f"{', '.join(unsupported)}")


class _Layout:
    """The sizes of one call and its time-major views."""

    def __init__(self, name, x, h0, c0, params, lengths, time_major: bool):
        if x.dim() != 3 or h0.dim() != 3:
            raise InvalidArgumentError(None, None, f"{name}: input and input_h must be rank 3, "
                                       f"got shapes {list(x.shape)} and {list(h0.shape)}")
        self.time_major = time_major
        self.x = x if time_major else x.transpose(0, 1)
        self.seq, self.batch, self.input_size = self.x.shape
        self.units = h0.shape[2]
        state = (1, self.batch, self.units) if time_major else (self.batch, 1, self.units)
        for s, what in ((h0, "input_h"), (c0, "input_c")):
            if tuple(s.shape) != state:
                raise InvalidArgumentError(None, None, f"{name}: {what} must have shape "
                                           f"{list(state)}, got {list(s.shape)}")
        self.state_shape = h0.shape
        self.h0 = h0.reshape(self.batch, self.units).contiguous()
        self.c0 = c0.reshape(self.batch, self.units).contiguous()
        h, i = self.units, self.input_size
        expected = 4 * h * i + 4 * h * h + 8 * h
        if params.dim() != 1 or params.numel() != expected:
            raise InvalidArgumentError(None, None, f"{name}: params must be a vector of "
                                       f"{expected} values for {h} units and input size {i}, "
                                       f"got shape {list(params.shape)}")
        n_w, n_r = 4 * h * i, 4 * h * h
        params = params.contiguous()
        self.w_ih = params[:n_w].view(4 * h, i)
        self.w_hh = params[n_w:n_w + n_r].view(4 * h, h)
        self.b_ih = params[n_w + n_r:n_w + n_r + 4 * h]
        self.b_hh = params[n_w + n_r + 4 * h:]
        if lengths.numel() and bool((lengths != self.seq).any()):
            raise UnimplementedError(None, None, f"{name}: sequences shorter than the input's "
                                     f"{self.seq} steps (sequence_lengths "
                                     f"{lengths.tolist()}) are not supported")

    def time_major_of(self, y: torch.Tensor) -> torch.Tensor:
        return (y if self.time_major else y.transpose(0, 1)).contiguous()

    def as_output(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.time_major else y.transpose(0, 1).contiguous()

    def state(self, s: torch.Tensor) -> torch.Tensor:
        return s.reshape(self.state_shape)


def _bytes_as(ws: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """oneDNN's byte workspace seen as `dtype` (padded to whole elements)."""
    size = torch.empty(0, dtype=dtype).element_size()
    pad = -ws.numel() % size
    if pad:
        ws = torch.cat([ws, ws.new_zeros(pad)])
    return ws.view(dtype)


# -- the ATen loop -----------------------------------------------------------------------------

def _loop_forward(lay: _Layout):
    t_len, b, h = lay.seq, lay.batch, lay.units
    x = lay.x.reshape(t_len * b, lay.input_size)
    xw = torch.addmm(lay.b_ih + lay.b_hh, x, lay.w_ih.t()).view(t_len, b, 4 * h)
    gates = torch.empty_like(xw)
    hs = x.new_empty(t_len, b, h)
    cs = x.new_empty(t_len, b, h)
    h_t, c_t, w_hh_t = lay.h0, lay.c0, lay.w_hh.t()
    for t in range(t_len):
        z = torch.addmm(xw[t], h_t, w_hh_t, out=gates[t])
        torch.sigmoid_(z[:, :2 * h])
        torch.tanh_(z[:, 2 * h:3 * h])
        torch.sigmoid_(z[:, 3 * h:])
        i, f, g, o = z.split(h, 1)
        c_t = torch.addcmul(f * c_t, i, g, out=cs[t])
        h_t = torch.mul(o, torch.tanh(c_t), out=hs[t])
    reserve = torch.cat([gates.reshape(-1), cs.reshape(-1)])
    return hs, h_t, c_t, reserve


def _loop_backward(lay: _Layout, hs, dy, dh_last, dc_last, reserve):
    t_len, b, h = lay.seq, lay.batch, lay.units
    n = t_len * b * 4 * h
    gates = reserve[:n].view(t_len, b, 4 * h)
    cs = reserve[n:].view(t_len, b, h)
    dz_all = torch.empty_like(gates)
    dh, dc = dh_last.clone(), dc_last.clone()
    for t in reversed(range(t_len)):
        i, f, g, o = gates[t].split(h, 1)
        c_prev = cs[t - 1] if t else lay.c0
        tc = torch.tanh(cs[t])
        dh = dh + dy[t]
        dc = dc + dh * o * (1 - tc * tc)
        di, df, dg, do = dz_all[t].split(h, 1)
        torch.mul(dc * g, i * (1 - i), out=di)
        torch.mul(dc * c_prev, f * (1 - f), out=df)
        torch.mul(dc * i, 1 - g * g, out=dg)
        torch.mul(dh * tc, o * (1 - o), out=do)
        dc = dc * f
        dh = torch.mm(dz_all[t], lay.w_hh)
    dz = dz_all.view(t_len * b, 4 * h)
    h_prev = torch.cat([lay.h0.unsqueeze(0), hs[:-1]])[:t_len].reshape(t_len * b, h)
    dx = torch.mm(dz, lay.w_ih).view(t_len, b, lay.input_size)
    db = dz.sum(0)
    dparams = torch.cat([torch.mm(dz.t(), lay.x.reshape(t_len * b, -1)).reshape(-1),
                         torch.mm(dz.t(), h_prev).reshape(-1), db, db])
    return dx, dh, dc, dparams


# -- kernels -----------------------------------------------------------------------------------

@kernel(cudnn_rnn.CudnnRNNV3)
def _cudnn_rnn_v3(node):
    _check_config(node)
    name = node.op_def.name
    training, time_major = node.attrs["is_training"], node.attrs["time_major"]

    def run(x, h0, c0, params, lengths):
        lay = _Layout(name, x, h0, c0, params, lengths, time_major)
        if _onednn(x, lay.units):
            y, hy, cy, ws = aten.mkldnn_rnn_layer(
                lay.x.contiguous(), lay.w_ih, lay.w_hh, lay.b_ih, lay.b_hh, lay.h0, lay.c0,
                False, [], _LSTM_MODE, lay.units, 1, True, False, False, training)
            reserve = _bytes_as(ws, x.dtype)
        else:
            y, hy, cy, reserve = _loop_forward(lay)
        host = torch.empty(0, dtype=torch.int8, device=x.device)
        return lay.as_output(y), lay.state(hy), lay.state(cy), reserve, host
    return run


@kernel(cudnn_rnn.CudnnRNNBackpropV3)
def _cudnn_rnn_backprop_v3(node):
    _check_config(node)
    name = node.op_def.name
    time_major = node.attrs["time_major"]

    def run(x, h0, c0, params, lengths, y, hy, cy, dy, dhy, dcy, reserve, _host):
        lay = _Layout(name, x, h0, c0, params, lengths, time_major)
        y, dy = lay.time_major_of(y), lay.time_major_of(dy)
        dhy = dhy.reshape(lay.batch, lay.units)
        dcy = dcy.reshape(lay.batch, lay.units)
        if _onednn(x, lay.units):
            dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0 = aten.mkldnn_rnn_layer_backward(
                lay.x.contiguous(), lay.w_ih, lay.w_hh, lay.b_ih, lay.b_hh, lay.h0, lay.c0, y,
                hy.reshape(lay.batch, lay.units), cy.reshape(lay.batch, lay.units), dy,
                dhy.contiguous(), dcy.contiguous(), False, _LSTM_MODE, lay.units, 1, True,
                True, False, [], False, reserve.view(torch.uint8))
            dparams = torch.cat([dw_ih.reshape(-1), dw_hh.reshape(-1), db_ih, db_hh])
        else:
            dx, dh0, dc0, dparams = _loop_backward(lay, y, dy, dhy, dcy, reserve)
        return lay.as_output(dx), lay.state(dh0), lay.state(dc0), dparams
    return run
