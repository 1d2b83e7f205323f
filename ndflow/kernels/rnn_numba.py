"""CudnnRNNV3's float32 GRU, LSTM and plain RNN on CPUs as one call over all time steps (kernels/
rnn_loops.py calls these; other dtypes and devices keep its ATen loops, and an LSTM over
full-length sequences may take oneDNN's primitive, kernels/cudnn_rnn.py).

Each thread of ATen's OpenMP team (kernels/omp_pool.py) takes a block of the batch's rows and
runs every step for them, the recurrent product included (kernels/register_gemm_numba.py's
register-blocked `product`): a batch row's recurrence reads only its own previous state, so
the threads never wait for each other, and a sequence costs one dispatch. The loops before
ran each step as an ATen GEMM and one numba call: on the Bidirectional GRU(64) probe (batch
64, 100 steps, 2-core Zen 5) ~30 us a step forward and ~60 backward, of which the product
is ~8. Per step, the forward multiplies the previous states of GROUP rows by the recurrent
weights into per-thread scratch and then runs those rows' gates; the backward runs the gates'
gradients of all its rows, then their products with the weights (COLS columns of the weights
at a time, which stay in the L1 cache over the rows). GRU (cuDNN's gate order r, z, n; the
reset gate scales the recurrent projection):

    forward   r = s(xw_r + hr_r), z = s(xw_z + hr_z), n = tanh(xw_n + r * hr_n),
              h = n + z * (h_prev - n); r, z, n, hr_n saved for the backward
    backward  g = dh + dy_t, a = g (1 - z)(1 - n^2),
              d_xw = (a hr_n r(1 - r), g (h_prev - n) z(1 - z), a), d_hr = (.., .., a r),
              dh_prev = g z + d_hr R

LSTM (gates i, f, g, o): c = f c_prev + i g, h = o tanh(c), the activated gates and the cell
states saved; its backward carries dc through f. cuDNN's plain RNN (Keras' SimpleRNN):
h = tanh(xw + h_prev R) or relu(..), its backward reading the derivative off h.

`lengths` (CudnnRNNV3's sequence_lengths): a row whose sequence has ended holds its state
(h, c) from then on and takes no gradient at those steps, so a batch of padded sequences
runs in one op (the op's outputs there are zeroed by the caller).

`masks` (G, B, H), where given: Keras' recurrent dropout with one mask per gate (its
implementation 1), gate k's recurrent product reading h_prev * m_k; the numba bodies are in
kernels/rnn_numba_rows.py.

The product writes whole 16-lane column tiles, so the weights are copied into matrices whose
rows are padded to a multiple of 16: the transposed recurrent weights (H, G*H) for the
forward, the weights themselves (G*H, H) for the backward's dh_prev. sigmoid and tanh are
the vectorized float32 functions the Tanh kernel and the JIT use (kernels/exp_numba.py,
kernels/tanh_numba.py). Without ATen's OpenMP launcher the callbacks run on the calling
thread (omp_pool.run_chunks).
"""


from __future__ import annotations

import importlib.util

import numpy as np
import torch

from ndflow.kernels import omp_pool, rnn_numba_rows

_kernels = rnn_numba_rows.kernels


def applies(x: torch.Tensor) -> bool:
    """Whether these kernels run for tensors like `x` (float32 on the CPU, numba present)."""
    return (x.dtype == torch.float32 and x.device.type == "cpu"
            and importlib.util.find_spec("numba") is not None and _kernels() is not None)


def _padded(n: int) -> int:
    return -(-n // 16) * 16


def _lengths(lengths, t_len: int, b: int) -> np.ndarray:
    if lengths is None:
        return np.full(b, t_len, np.int64)
    return np.ascontiguousarray(lengths.to("cpu", torch.int64).numpy())


def _forward_weights(w_hh: torch.Tensor) -> torch.Tensor:
    """w_hh (G*H, H) transposed into (H, W), the padding zero: W in whole 16-lane tiles,
    wide enough for the last gate's own tiles (recurrent dropout's per-gate products,
    kernels/rnn_numba_rows.py)."""
    gh, h = w_hh.shape
    w = w_hh.new_zeros(h, _padded(gh - h + _padded(h)))
    w[:, :gh] = w_hh.t()
    return w


def _backward_weights(w_hh: torch.Tensor) -> torch.Tensor:
    """w_hh (G*H, H) with its rows padded to (G*H, padded H)."""
    gh, h = w_hh.shape
    w = w_hh.new_zeros(gh, _padded(h))
    w[:, :h] = w_hh
    return w


def _launch(which: int, sizes: tuple, width: int, extra: int, arrays: list, masks,
            flags: tuple = ()) -> None:
    """Runs kernel `which` over the batch's rows, a block of rows per thread: `sizes` = (T, B,
    H), `width` the padded row of the products, `extra` floats of scratch a block needs
    beside its rows' products, `masks` the recurrent dropout masks (G, B, H) or None, `flags`
    integers the kernel reads after those (then whether masks are given)."""
    b = sizes[1]
    threads = max(1, min(torch.get_num_threads(), b))
    chunk = -(-b // threads)
    if masks is not None and which % 2 == 0:    # a forward's masked rows (GROUP of them)
        extra += rnn_numba_rows.GROUP * sizes[2]
    per_slot = chunk * width + extra
    scratch = torch.empty(-(-b // chunk) * per_slot, dtype=torch.float32)
    params = np.array([*sizes, width, per_slot, *flags, int(masks is not None)], np.int64)
    mask_values = masks.contiguous() if masks is not None else scratch[:0]
    arrays = [*arrays, mask_values]
    omp_pool.run_chunks(_kernels()[which], b, chunk, [*arrays, scratch, params], threads)


def gru_forward(xw: torch.Tensor, b_hh: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor,
                lengths=None, masks=None):
    """(hs (T, B, H), saved (T, 4, B, H)) from the input projections xw (T, B, 3H) with the
    input bias, the recurrent bias (3H) and weights (3H, H), the first state (B, H) and the
    sequences' lengths (B,) (None: all T); an ended sequence's rows of hs hold its state."""
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    saved = xw.new_zeros(t_len, 4, b, h) if lengths is not None else \
        xw.new_empty(t_len, 4, b, h)
    hs = xw.new_empty(t_len, b, h)
    if t_len and b:
        w = _forward_weights(w_hh)
        _launch(0, (t_len, b, h), w.shape[1], 0,
                [xw.contiguous(), w, b_hh.contiguous(), h0.contiguous(), saved, hs,
                 _lengths(lengths, t_len, b)], masks)
    return hs, saved


def gru_backward(saved: torch.Tensor, hs: torch.Tensor, h0: torch.Tensor, dy: torch.Tensor,
                 dh_last: torch.Tensor, w_hh: torch.Tensor, lengths=None, masks=None):
    """(d_xw, d_hr (T, B, 3H): the gradients of the input and recurrent projections, dh0)."""
    t_len, b, h = hs.shape
    d_xw = hs.new_empty(t_len, b, 3 * h)
    d_hr = hs.new_empty(t_len, b, 3 * h)
    dh = dh_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(1, (t_len, b, h), w.shape[1], 0,
                [saved.contiguous(), hs.contiguous(), h0.contiguous(), dy.contiguous(), dh,
                 d_xw, d_hr, w, _lengths(lengths, t_len, b)], masks)
    return d_xw, d_hr, dh


def lstm_forward(xw: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                 lengths=None, masks=None):
    """(hs (T, B, H), reserve: the activated gates (T, B, 4H) then the cell states (T, B, H),
    one buffer) from the input projections xw (T, B, 4H) with both biases, the recurrent
    weights (4H, H), the first states and the sequences' lengths; an ended sequence's rows
    hold its states."""
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    n = t_len * b * 4 * h
    reserve = xw.new_zeros(n + t_len * b * h) if lengths is not None else \
        xw.new_empty(n + t_len * b * h)
    hs = xw.new_empty(t_len, b, h)
    if t_len and b:
        w = _forward_weights(w_hh)
        _launch(2, (t_len, b, h), w.shape[1], 0,
                [xw.contiguous(), w, h0.contiguous(), c0.contiguous(), reserve[:n],
                 reserve[n:], hs, _lengths(lengths, t_len, b)], masks)
    return hs, reserve


def lstm_backward(gates: torch.Tensor, cs: torch.Tensor, c0: torch.Tensor, dy: torch.Tensor,
                  dh_last: torch.Tensor, dc_last: torch.Tensor, w_hh: torch.Tensor,
                  lengths=None, masks=None):
    """(dz (T, B, 4H): the gradients of the gates' pre-activations, dh0, dc0)."""
    t_len, b, h = cs.shape
    dz = gates.new_empty(t_len, b, 4 * h)
    dh, dc = dh_last.contiguous().clone(), dc_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(3, (t_len, b, h), w.shape[1], h,
                [gates.contiguous(), cs.contiguous(), c0.contiguous(), dy.contiguous(), dh, dc,
                 dz, w, _lengths(lengths, t_len, b)], masks)
    return dz, dh, dc


def simple_forward(xw: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor, lengths=None,
                   relu: bool = False, masks=None) -> torch.Tensor:
    """hs (T, B, H) of a tanh (or relu) RNN, h = act(xw_t + h_prev R^T), from the input
    projections xw (T, B, H) with both biases, the recurrent weights (H, H), the first state
    and the sequences' lengths; an ended sequence's rows hold its state."""
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    hs = xw.new_empty(t_len, b, h)
    if t_len and b:
        w = _forward_weights(w_hh)
        _launch(4, (t_len, b, h), w.shape[1], 0,
                [xw.contiguous(), w, h0.contiguous(), hs, _lengths(lengths, t_len, b)],
                masks, (int(relu),))
    return hs


def simple_backward(hs: torch.Tensor, dy: torch.Tensor, dh_last: torch.Tensor,
                    w_hh: torch.Tensor, lengths=None, relu: bool = False, masks=None):
    """(d_pre (T, B, H): the gradients of the pre-activations, dh0) for `simple_forward`'s
    states hs (its outputs at the running steps are all this reads)."""
    t_len, b, h = hs.shape
    d_pre = hs.new_empty(t_len, b, h)
    dh = dh_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(5, (t_len, b, h), w.shape[1], 0,
                [hs.contiguous(), dy.contiguous(), dh, d_pre, w, _lengths(lengths, t_len, b)],
                masks, (int(relu),))
    return d_pre, dh


