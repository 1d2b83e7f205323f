"""The fused recurrent layer: TF's CudnnRNNV3 and CudnnRNNBackpropV3 (one op runs a whole
sequence; Keras' LSTM and GRU take it where their configuration is cuDNN's, as Keras 3 on TF
does).

`params` is cuDNN's canonical flat buffer for one unidirectional layer: the input weights
(per gate (units, input_size), row-major), the recurrent weights (per gate (units, units)),
the input biases, the recurrent biases; gates i, f, c, o for an LSTM, r, z, h for a GRU
(whose reset gate multiplies the recurrent projection, Keras' `reset_after`).
`reserve_space` carries what the gradient needs from the forward run (opaque: it is only
read by CudnnRNNBackpropV3 of the same configuration); `host_reserved` is empty.

Deviations from TF, whose kernels exist only on GPUs: they run on every device here (kernels
in kernels/cudnn_rnn.py: oneDNN's LSTM on CPUs, ATen loops otherwise), T also takes
bfloat16 (the CPU mixed-precision type), and the modes other than one unidirectional LSTM
or GRU layer without projection or padding are UnimplementedError when run.

_RecurrentDropoutRNN (ndflow's own, no TF counterpart) is CudnnRNNV3's computation with Keras'
per-gate dropout masks, so that Keras' recurrent dropout runs fused too."""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.array_fill import zeros_like
from ndflow.ops.op_def import op_def

_RNN_ATTRS = [
    "T: {half, bfloat16, float, double}",
    "rnn_mode: {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'} = 'lstm'",
    "input_mode: {'linear_input', 'skip_input', 'auto_select'} = 'linear_input'",
    "direction: {'unidirectional', 'bidirectional'} = 'unidirectional'",
    "dropout: float = 0.0", "seed: int = 0", "seed2: int = 0", "num_proj: int = 0",
]


def _forward_shape(ctx):
    x, h = ctx.shapes[0], ctx.shapes[1]
    for s, name, rank in ((x, "input", 3), (h, "input_h", 3), (ctx.shapes[3], "params", 1)):
        if s.rank is not None and s.rank != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {s.rank} for '{name}'")
    time_major = ctx.attrs["time_major"]
    seq, batch = (None, None) if x.rank is None else \
        ((x[0], x[1]) if time_major else (x[1], x[0]))
    units = None if h.rank is None else h[2]
    dirs = 2 if ctx.attrs.get("direction") == "bidirectional" else 1
    out_size = None if units is None else units * dirs
    out = TensorShape([seq, batch, out_size] if time_major else [batch, seq, out_size])
    c = h if ctx.attrs["rnn_mode"] == "lstm" else TensorShape([])
    return [out, h, c, TensorShape(None), TensorShape(None)]


CudnnRNNV3 = op_def(
    "CudnnRNNV3",
    inputs=["input: T", "input_h: T", "input_c: T", "params: T", "sequence_lengths: int32"],
    outputs=["output: T", "output_h: T", "output_c: T", "reserve_space: T",
             "host_reserved: int8"],
    attrs=[*_RNN_ATTRS, "is_training: bool = true", "time_major: bool = true"],
    shape=_forward_shape, stateful=True,
    doc="A recurrent network over a whole sequence (cuDNN's canonical weights).")

CudnnRNNBackpropV3 = op_def(
    "CudnnRNNBackpropV3",
    inputs=["input: T", "input_h: T", "input_c: T", "params: T", "sequence_lengths: int32",
            "output: T", "output_h: T", "output_c: T", "output_backprop: T",
            "output_h_backprop: T", "output_c_backprop: T", "reserve_space: T",
            "host_reserved: int8"],
    outputs=["input_backprop: T", "input_h_backprop: T", "input_c_backprop: T",
             "params_backprop: T"],
    attrs=[*_RNN_ATTRS, "time_major: bool = true"],
    shape=lambda ctx: [ctx.shapes[0], ctx.shapes[1], ctx.shapes[2], ctx.shapes[3]],
    stateful=True, gradient_undefined=True,
    doc="CudnnRNNV3's gradient w.r.t. its input, initial states and params.")


@CudnnRNNV3.def_grad
def _cudnn_rnn_v3_grad(op, grad_out, grad_h, grad_c, _grad_reserve, _grad_host):
    """TF's _CudnnRNNBackwardV3: an output nobody differentiated gets a zero gradient."""
    if not op.get_attr("is_training"):
        raise ValueError("To use CudnnRNNV3 in gradients, is_training must be set to True.")
    grads = [g if g is not None else zeros_like(op.outputs[i])
             for i, g in enumerate((grad_out, grad_h, grad_c))]
    attrs = {k: op.get_attr(k) for k in ("rnn_mode", "input_mode", "direction", "dropout",
                                         "seed", "seed2", "num_proj", "time_major")}
    dx, dh, dc, dparams = apply_op(
        CudnnRNNBackpropV3,
        [*op.inputs[:5], *op.outputs[:3], *grads, op.outputs[3], op.outputs[4]],
        attrs).outputs
    return [dx, dh, dc, dparams, None]


# -- Keras' recurrent dropout ------------------------------------------------------------------

_MASKED_ATTRS = ["T: {half, bfloat16, float, double}",
                 "rnn_mode: {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'} = 'lstm'",
                 "time_major: bool = true"]

RecurrentDropoutRNN = op_def(
    "_RecurrentDropoutRNN",
    inputs=["input: T", "input_h: T", "input_c: T", "params: T", "sequence_lengths: int32",
            "input_masks: T", "recurrent_masks: T"],
    outputs=["output: T", "output_h: T", "output_c: T", "reserve_space: T"],
    attrs=_MASKED_ATTRS,
    shape=lambda ctx: _forward_shape(ctx)[:4],
    doc="ndflow's CudnnRNNV3 with Keras' dropout masks, one per gate and the same at every "
        "step (Keras' implementation 1): gate k's input weights see input * input_masks[k] "
        "(G, B, input size), its recurrent weights h_prev * recurrent_masks[k] (G, B, "
        "units); either may have no values (no dropout of that kind). Keras' LSTM, GRU and "
        "SimpleRNN with per-gate masks run it in training; TensorFlow has no such op (its "
        "Keras runs the time loop there), so a SavedModel keeps the loop.")

RecurrentDropoutRNNBackprop = op_def(
    "_RecurrentDropoutRNNBackprop",
    inputs=["input: T", "input_h: T", "input_c: T", "params: T", "sequence_lengths: int32",
            "input_masks: T", "recurrent_masks: T", "output: T", "output_h: T",
            "output_c: T", "output_backprop: T", "output_h_backprop: T",
            "output_c_backprop: T", "reserve_space: T"],
    outputs=["input_backprop: T", "input_h_backprop: T", "input_c_backprop: T",
             "params_backprop: T"],
    attrs=_MASKED_ATTRS,
    shape=lambda ctx: [ctx.shapes[0], ctx.shapes[1], ctx.shapes[2], ctx.shapes[3]],
    gradient_undefined=True,
    doc="RecurrentDropoutRNN's gradient w.r.t. its input, initial states and params.")


@RecurrentDropoutRNN.def_grad
def _recurrent_dropout_rnn_grad(op, grad_out, grad_h, grad_c, _grad_reserve):
    """As CudnnRNNV3's; the masks (dropout draws) get none."""
    grads = [g if g is not None else zeros_like(op.outputs[i])
             for i, g in enumerate((grad_out, grad_h, grad_c))]
    attrs = {k: op.get_attr(k) for k in ("rnn_mode", "time_major")}
    dx, dh, dc, dparams = apply_op(
        RecurrentDropoutRNNBackprop, [*op.inputs[:7], *op.outputs[:3], *grads, op.outputs[3]],
        attrs, name="RecurrentDropoutRNNBackprop").outputs
    return [dx, dh, dc, dparams, None, None, None]
