"""Kernels for CudnnRNNV3 / CudnnRNNBackpropV3: one unidirectional LSTM, GRU or plain RNN
(cuDNN's rnn_tanh / rnn_relu) layer.

On CPUs, an LSTM in float32 (and bfloat16 where the CPU has bf16 units) runs oneDNN's LSTM
primitive through ATen (`mkldnn_rnn_layer` and its backward): the input projection of every
step is one GEMM, the per-step recurrent GEMMs and gate math run in oneDNN without returning
to Python, and the weight gradients are batched over the sequence. Measured on a 2-core Zen 4
(Keras' LSTM(128) on 64 x 100 steps of 64 features): forward 14.6 ms and backward 16.9 ms,
where the While loop of per-step ops took ~170 ms for both. `reserve_space` is then
oneDNN's workspace (its bytes seen as T).

GRUs and plain RNNs (ATen's oneDNN binding runs LSTMs only), LSTMs elsewhere (float64,
float16, GPUs), and _RecurrentDropoutRNN's configurations with Keras' per-gate dropout masks
run kernels/rnn_loops.py's loops (float32 on a CPU: all the steps in one numba call).
`sequence_lengths` shorter than the input (padded sequences, which oneDNN's binding does not
take) run those loops too, float32 on CPUs: each sequence's states hold after its end and
the outputs there are zeros, as cuDNN's. Both kernels of an op pair take the same path for
the same mode, dtype, device and lengths, so a reserve space is always read by the kernel
that wrote it.
"""

from __future__ import annotations

import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import rnn_loops, rnn_numba
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
        ("rnn_mode", a["rnn_mode"] in _GATES), ("direction", a["direction"] == "unidirectional"),
        ("input_mode", a["input_mode"] in ("linear_input", "auto_select")),
        ("num_proj", a["num_proj"] == 0)) if not ok]
    if unsupported:
        raise UnimplementedError(None, None, f"{name} runs one unidirectional RNN, LSTM or "
                                 f"GRU layer with linear input and no projection; got "
                                 f"{', '.join(unsupported)}")


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


class _Layout:
    """The sizes of one call and its time-major views."""

    def __init__(self, name, mode: str, x, h0, c0, params, lengths, time_major: bool):
        if x.dim() != 3 or h0.dim() != 3:
            raise InvalidArgumentError(None, None, f"{name}: input and input_h must be rank 3, "
                                       f"got shapes {list(x.shape)} and {list(h0.shape)}")
        self.time_major = time_major
        self.x = x if time_major else x.transpose(0, 1)
        self.seq, self.batch, self.input_size = self.x.shape
        self.units = h0.shape[2]
        state = (1, self.batch, self.units) if time_major else (self.batch, 1, self.units)
        self.mode, self.lstm = mode, mode == "lstm"
        for s, what in ((h0, "input_h"), (c0, "input_c"))[:2 if self.lstm else 1]:
            if tuple(s.shape) != state:
                raise InvalidArgumentError(None, None, f"{name}: {what} must have shape "
                                           f"{list(state)}, got {list(s.shape)}")
        self.state_shape = h0.shape
        self.h0 = h0.reshape(self.batch, self.units).contiguous()
        self.c0 = c0.reshape(self.batch, self.units).contiguous() if self.lstm else c0
        h, i, g = self.units, self.input_size, _GATES[mode]
        expected = g * h * i + g * h * h + 2 * g * h
        if params.dim() != 1 or params.numel() != expected:
            raise InvalidArgumentError(None, None, f"{name}: params must be a vector of "
                                       f"{expected} values for a {mode} of {h} units and input "
                                       f"size {i}, "
                                       f"got shape {list(params.shape)}")
        n_w, n_r = g * h * i, g * h * h
        params = params.contiguous()
        self.w_ih = params[:n_w].view(g * h, i)
        self.w_hh = params[n_w:n_w + n_r].view(g * h, h)
        self.b_ih = params[n_w + n_r:n_w + n_r + g * h]
        self.b_hh = params[n_w + n_r + g * h:]
        self.key = (self.seq, self.batch, self.input_size, self.units, x.dtype)
        self.input_masks = self.rec_masks = None   # Keras' dropout masks (rnn_loops.py)
        self.lengths = None     # every sequence has all `seq` steps
        if lengths.numel() and bool((lengths != self.seq).any()):
            if lengths.numel() != self.batch or bool((lengths < 0).any()) or \
                    bool((lengths > self.seq).any()):
                raise InvalidArgumentError(None, None, f"{name}: sequence_lengths must be "
                                           f"{self.batch} values in [0, {self.seq}], got "
                                           f"{lengths.tolist()}")
            if not rnn_numba.applies(self.x):
                raise UnimplementedError(None, None, f"{name}: sequences shorter than the "
                                         f"input's {self.seq} steps (sequence_lengths "
                                         f"{lengths.tolist()}) are supported for float32 "
                                         "CPU tensors only")
            self.lengths = lengths

    def take_masks(self, name: str, input_masks: torch.Tensor,
                   rec_masks: torch.Tensor) -> None:
        """_RecurrentDropoutRNN's masks: (G, B, input size) and (G, B, units), each or no
        values (none of that kind)."""
        g = _GATES[self.mode]
        for m, what, size in ((input_masks, "input_masks", self.input_size),
                              (rec_masks, "recurrent_masks", self.units)):
            if m.numel() and tuple(m.shape) != (g, self.batch, size):
                raise InvalidArgumentError(None, None, f"{name}: {what} must have shape "
                                           f"{[g, self.batch, size]} (one mask per gate of a "
                                           f"{self.mode}) or no values, got {list(m.shape)}")
        self.input_masks = input_masks if input_masks.numel() else None
        self.rec_masks = rec_masks.contiguous() if rec_masks.numel() else None

    def padded_output(self, y: torch.Tensor) -> torch.Tensor:
        """The op's outputs: zeros after each sequence's end (cuDNN's), where the loops'
        states hold."""
        if self.lengths is None:
            return y
        steps = torch.arange(self.seq, device=y.device).unsqueeze(1)
        return y * (steps < self.lengths.to(y.device).unsqueeze(0)).unsqueeze(2).to(y.dtype)

    def time_major_of(self, y: torch.Tensor) -> torch.Tensor:
        return (y if self.time_major else y.transpose(0, 1)).contiguous()

    def as_output(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.time_major else y.transpose(0, 1).contiguous()

    def state(self, s: torch.Tensor) -> torch.Tensor:
        return s.reshape(self.state_shape)


# the reserve space's size (in T) of oneDNN's workspace per (steps, batch, input, units,
# dtype), recorded by the forward kernel: a backward given anything else is refused (oneDNN
# would read past it)
_WORKSPACE_SIZES: dict = {}


def _onednn_forward(lay, training: bool):
    y, hy, cy, ws = aten.mkldnn_rnn_layer(
        lay.x.contiguous(), lay.w_ih, lay.w_hh, lay.b_ih, lay.b_hh, lay.h0, lay.c0, False, [],
        _LSTM_MODE, lay.units, 1, True, False, False, training)
    reserve = _bytes_as(ws, lay.x.dtype)
    if training:
        _WORKSPACE_SIZES[lay.key] = reserve.numel()
    return y, hy, cy, reserve


def _uses_onednn(lay) -> bool:
    """An LSTM runs oneDNN's primitive where it applies, every sequence is whole (it has
    no sequence lengths) and no dropout masks are given; else the loops."""
    return (lay.lstm and lay.lengths is None and lay.rec_masks is None
            and lay.input_masks is None and _onednn(lay.x, lay.units))


def _expected_reserve(lay) -> int:
    if lay.mode == "gru":
        return 4 * lay.seq * lay.batch * lay.units            # r, z, n, h R_n + b_Rn
    if not lay.lstm:
        return 0                                              # the outputs are read
    if not _uses_onednn(lay):
        return 5 * lay.seq * lay.batch * lay.units            # the gates, the cell states
    if lay.key not in _WORKSPACE_SIZES:   # no forward of this shape ran here: measure one
        _onednn_forward(lay, True)
    return _WORKSPACE_SIZES[lay.key]


def _check_backprop(lay, name: str, seqs: tuple, states: tuple, reserve) -> None:
    """The forward's outputs and their gradients must have the forward's shapes, and the
    reserve space its size: the kernels index them without further checks."""
    seq = (lay.seq, lay.batch, lay.units) if lay.time_major else \
        (lay.batch, lay.seq, lay.units)
    for t, what in seqs:
        if tuple(t.shape) != seq:
            raise InvalidArgumentError(None, None, f"{name}: {what} must have shape "
                                       f"{list(seq)}, got {list(t.shape)}")
    for t, what in states:
        if t.numel() != lay.batch * lay.units:
            raise InvalidArgumentError(None, None, f"{name}: {what} must have "
                                       f"{lay.batch * lay.units} values, got shape "
                                       f"{list(t.shape)}")
    expected = _expected_reserve(lay)
    if reserve.dim() != 1 or reserve.numel() != expected:
        raise InvalidArgumentError(None, None, f"{name}: reserve_space must be the forward's "
                                   f"({expected} values for this configuration), got shape "
                                   f"{list(reserve.shape)}")


def _bytes_as(ws: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """oneDNN's byte workspace seen as `dtype` (padded to whole elements)."""
    size = torch.empty(0, dtype=dtype).element_size()
    pad = -ws.numel() % size
    if pad:
        ws = torch.cat([ws, ws.new_zeros(pad)])
    return ws.view(dtype)


# -- kernels -----------------------------------------------------------------------------------

def _forward(lay, training: bool) -> tuple:
    """(outputs, h, c, reserve_space) in the op's layouts."""
    x = lay.x
    if not lay.lstm:
        forward = rnn_loops.gru_forward if lay.mode == "gru" else rnn_loops.simple_forward
        y, hy, reserve = forward(lay)
        cy = torch.zeros((), dtype=x.dtype, device=x.device)
    elif _uses_onednn(lay):
        y, hy, cy, reserve = _onednn_forward(lay, training)
        cy = lay.state(cy)
    else:
        y, hy, cy, reserve = rnn_loops.lstm_forward(lay)
        cy = lay.state(cy)
    return lay.as_output(lay.padded_output(y)), lay.state(hy), cy, reserve


def _backward(lay, name: str, c0, y, hy, cy, dy, dhy, dcy, reserve) -> tuple:
    """(dx, dh0, dc0, dparams) in the op's layouts."""
    _check_backprop(lay, name, ((y, "output"), (dy, "output_backprop")),
                    ((hy, "output_h"), (dhy, "output_h_backprop"))
                    + (((cy, "output_c"), (dcy, "output_c_backprop")) if lay.lstm else ()),
                    reserve)
    y, dy = lay.time_major_of(y), lay.time_major_of(dy)
    dhy = dhy.reshape(lay.batch, lay.units)
    if not lay.lstm:
        dx, dh0, dparams = rnn_loops.gru_backward(lay, y, dy, dhy, reserve) \
            if lay.mode == "gru" else rnn_loops.simple_backward(lay, y, dy, dhy)
        return lay.as_output(dx), lay.state(dh0), torch.zeros_like(c0), dparams
    dcy = dcy.reshape(lay.batch, lay.units)
    if _uses_onednn(lay):
        dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0 = aten.mkldnn_rnn_layer_backward(
            lay.x.contiguous(), lay.w_ih, lay.w_hh, lay.b_ih, lay.b_hh, lay.h0, lay.c0, y,
            hy.reshape(lay.batch, lay.units), cy.reshape(lay.batch, lay.units), dy,
            dhy.contiguous(), dcy.contiguous(), False, _LSTM_MODE, lay.units, 1, True,
            True, False, [], False, reserve.view(torch.uint8))
        dparams = torch.cat([dw_ih.reshape(-1), dw_hh.reshape(-1), db_ih, db_hh])
    else:
        dx, dh0, dc0, dparams = rnn_loops.lstm_backward(lay, y, dy, dhy, dcy, reserve)
    return lay.as_output(dx), lay.state(dh0), lay.state(dc0), dparams


@kernel(cudnn_rnn.CudnnRNNV3)
def _cudnn_rnn_v3(node):
    _check_config(node)
    name, mode = node.op_def.name, node.attrs["rnn_mode"]
    training, time_major = node.attrs["is_training"], node.attrs["time_major"]

    def run(x, h0, c0, params, lengths):
        lay = _Layout(name, mode, x, h0, c0, params, lengths, time_major)
        host = torch.empty(0, dtype=torch.int8, device=x.device)
        return (*_forward(lay, training), host)
    return run


@kernel(cudnn_rnn.CudnnRNNBackpropV3)
def _cudnn_rnn_backprop_v3(node):
    _check_config(node)
    name, mode = node.op_def.name, node.attrs["rnn_mode"]
    time_major = node.attrs["time_major"]

    def run(x, h0, c0, params, lengths, y, hy, cy, dy, dhy, dcy, reserve, _host):
        lay = _Layout(name, mode, x, h0, c0, params, lengths, time_major)
        return _backward(lay, name, c0, y, hy, cy, dy, dhy, dcy, reserve)
    return run


@kernel(cudnn_rnn.RecurrentDropoutRNN)
def _recurrent_dropout_rnn(node):
    name, mode, time_major = node.op_def.name, node.attrs["rnn_mode"], node.attrs["time_major"]

    def run(x, h0, c0, params, lengths, input_masks, rec_masks):
        lay = _Layout(name, mode, x, h0, c0, params, lengths, time_major)
        lay.take_masks(name, input_masks, rec_masks)
        return _forward(lay, True)
    return run


@kernel(cudnn_rnn.RecurrentDropoutRNNBackprop)
def _recurrent_dropout_rnn_backprop(node):
    name, mode, time_major = node.op_def.name, node.attrs["rnn_mode"], node.attrs["time_major"]

    def run(x, h0, c0, params, lengths, input_masks, rec_masks, y, hy, cy, dy, dhy, dcy,
            reserve):
        lay = _Layout(name, mode, x, h0, c0, params, lengths, time_major)
        lay.take_masks(name, input_masks, rec_masks)
        return _backward(lay, name, c0, y, hy, cy, dy, dhy, dcy, reserve)
    return run
