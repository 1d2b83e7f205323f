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
products = add_rows = None


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
    """w_hh (G*H, H) transposed into (H, padded G*H), the padding zero."""
    gh, h = w_hh.shape
    w = w_hh.new_zeros(h, _padded(gh))
    w[:, :gh] = w_hh.t()
    return w


def _backward_weights(w_hh: torch.Tensor) -> torch.Tensor:
    """w_hh (G*H, H) with its rows padded to (G*H, padded H)."""
    gh, h = w_hh.shape
    w = w_hh.new_zeros(gh, _padded(h))
    w[:, :h] = w_hh
    return w


def _launch(which: int, sizes: tuple, width: int, extra: int, arrays: list,
            flags: tuple = ()) -> None:
    """Runs kernel `which` over the batch's rows, a block of rows per thread: `sizes` = (T, B,
    H), `width` the padded row of the products, `extra` floats of scratch a block needs
    beside its rows' products, `flags` integers the kernel reads after those."""
    b = sizes[1]
    threads = max(1, min(torch.get_num_threads(), b))
    chunk = -(-b // threads)
    per_slot = chunk * width + extra
    scratch = torch.empty(-(-b // chunk) * per_slot, dtype=torch.float32)
    params = np.array([*sizes, width, per_slot, *flags], np.int64)
    omp_pool.run_chunks(_kernels()[which], b, chunk, [*arrays, scratch, params], threads)


def gru_forward(xw: torch.Tensor, b_hh: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor,
                lengths=None):
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
                 _lengths(lengths, t_len, b)])
    return hs, saved


def gru_backward(saved: torch.Tensor, hs: torch.Tensor, h0: torch.Tensor, dy: torch.Tensor,
                 dh_last: torch.Tensor, w_hh: torch.Tensor, lengths=None):
    """(d_xw, d_hr (T, B, 3H): the gradients of the input and recurrent projections, dh0)."""
    t_len, b, h = hs.shape
    d_xw = hs.new_empty(t_len, b, 3 * h)
    d_hr = hs.new_empty(t_len, b, 3 * h)
    dh = dh_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(1, (t_len, b, h), w.shape[1], 0,
                [saved.contiguous(), hs.contiguous(), h0.contiguous(), dy.contiguous(), dh,
                 d_xw, d_hr, w, _lengths(lengths, t_len, b)])
    return d_xw, d_hr, dh


def lstm_forward(xw: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor,
                 lengths=None):
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
                 reserve[n:], hs, _lengths(lengths, t_len, b)])
    return hs, reserve


def lstm_backward(gates: torch.Tensor, cs: torch.Tensor, c0: torch.Tensor, dy: torch.Tensor,
                  dh_last: torch.Tensor, dc_last: torch.Tensor, w_hh: torch.Tensor,
                  lengths=None):
    """(dz (T, B, 4H): the gradients of the gates' pre-activations, dh0, dc0)."""
    t_len, b, h = cs.shape
    dz = gates.new_empty(t_len, b, 4 * h)
    dh, dc = dh_last.contiguous().clone(), dc_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(3, (t_len, b, h), w.shape[1], h,
                [gates.contiguous(), cs.contiguous(), c0.contiguous(), dy.contiguous(), dh, dc,
                 dz, w, _lengths(lengths, t_len, b)])
    return dz, dh, dc


def simple_forward(xw: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor, lengths=None,
                   relu: bool = False) -> torch.Tensor:
    """hs (T, B, H) of a tanh (or relu) RNN, h = act(xw_t + h_prev R^T), from the input
    projections xw (T, B, H) with both biases, the recurrent weights (H, H), the first state
    and the sequences' lengths; an ended sequence's rows hold its state."""
    t_len, b, h = xw.shape[0], h0.shape[0], h0.shape[1]
    hs = xw.new_empty(t_len, b, h)
    if t_len and b:
        w = _forward_weights(w_hh)
        _launch(4, (t_len, b, h), w.shape[1], 0,
                [xw.contiguous(), w, h0.contiguous(), hs, _lengths(lengths, t_len, b)],
                (int(relu),))
    return hs


def simple_backward(hs: torch.Tensor, dy: torch.Tensor, dh_last: torch.Tensor,
                    w_hh: torch.Tensor, lengths=None, relu: bool = False):
    """(d_pre (T, B, H): the gradients of the pre-activations, dh0) for `simple_forward`'s
    states hs (its outputs at the running steps are all this reads)."""
    t_len, b, h = hs.shape
    d_pre = hs.new_empty(t_len, b, h)
    dh = dh_last.contiguous().clone()
    if t_len and b:
        w = _backward_weights(w_hh)
        _launch(5, (t_len, b, h), w.shape[1], 0,
                [hs.contiguous(), dy.contiguous(), dh, d_pre, w, _lengths(lengths, t_len, b)],
                (int(relu),))
    return d_pre, dh


_kernels = built_once(lambda: _build())


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
        d = carray(data, 22, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            gru_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def gru_backward(data):
        wide_vectors()
        d = carray(data, 26, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            gru_backward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def lstm_forward(data):
        wide_vectors()
        d = carray(data, 24, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            lstm_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def lstm_backward(data):
        wide_vectors()
        d = carray(data, 26, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            lstm_backward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def simple_forward(data):
        wide_vectors()
        d = carray(data, 18, dtype=np.int64)
        slot = claim_chunk(data)
        while slot * d[2] < d[1]:
            simple_forward_rows(d, slot * d[2], min(slot * d[2] + d[2], d[1]), slot)
            slot = claim_chunk(data)

    @cfunc(types.void(types.voidptr), nopython=True, cache=True, error_model="numpy")
    def simple_backward(data):
        wide_vectors()
        d = carray(data, 20, dtype=np.int64)
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
        scr, p = view(d, 17, f32), view(d, 19, np.int64)
        t_len, b, h, cp = p[0], p[1], p[2], p[3]
        sb = slot * p[4]
        for t in range(t_len):
            prev = h0 if t == 0 else hs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                products(prev, prev_base, h, g0, g1, h, w, cp, scr, sb)
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
        w, lengths = view(d, 17, f32), view(d, 19, np.int64)
        scr, p = view(d, 21, f32), view(d, 23, np.int64)
        t_len, b, h, hp_w = p[0], p[1], p[2], p[3]
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
            products(d_hr, t * b * 3 * h, 3 * h, lo, hi, 3 * h, w, hp_w, scr, sb)
            add_rows(dh, lo, hi, h, scr, sb, hp_w)

    @inline
    def lstm_forward_rows(d, lo, hi, slot):
        f32 = np.float32
        xw, w, h0, c0 = view(d, 3, f32), view(d, 5, f32), view(d, 7, f32), view(d, 9, f32)
        gates, cs, hs = view(d, 11, f32), view(d, 13, f32), view(d, 15, f32)
        lengths, scr, p = view(d, 17, np.int64), view(d, 19, f32), view(d, 21, np.int64)
        t_len, b, h, cp = p[0], p[1], p[2], p[3]
        sb = slot * p[4]
        for t in range(t_len):
            prev_h = h0 if t == 0 else hs
            prev_c = c0 if t == 0 else cs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                products(prev_h, prev_base, h, g0, g1, h, w, cp, scr, sb)
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
        w, lengths = view(d, 17, f32), view(d, 19, np.int64)
        scr, p = view(d, 21, f32), view(d, 23, np.int64)
        t_len, b, h, hp_w = p[0], p[1], p[2], p[3]
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
            products(dz, t * b * 4 * h, 4 * h, lo, hi, 4 * h, w, hp_w, scr, sb)
            add_rows(dh, lo, hi, h, scr, sb, hp_w)

    @inline
    def products(a, a_base, a_row, lo, hi, inner, w, width, scr, sb):
        """scr[sb + (r - lo) * width + j] = sum_k a[a_base + r * a_row + k] w[k * width + j]
        for the rows r in [lo, hi): a block of COLS columns of w at a time, so that the
        block stays in the L1 cache over all the rows."""
        for j0 in range(0, width, COLS):
            cols = min(COLS, width - j0)
            for r0 in range(lo, hi, ROWS):
                product(a, a_base + r0 * a_row, a_row, 1, min(ROWS, hi - r0), inner, w, j0,
                        width, cols, scr, sb + (r0 - lo) * width + j0, width, np.float32(1.0),
                        False)

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
        lengths, scr, p = view(d, 11, np.int64), view(d, 13, f32), view(d, 15, np.int64)
        t_len, b, h, cp, relu = p[0], p[1], p[2], p[3], p[5]
        sb = slot * p[4]
        zero = f32(0.0)
        for t in range(t_len):
            prev = h0 if t == 0 else hs
            prev_base = 0 if t == 0 else (t - 1) * b * h
            for g0 in range(lo, hi, GROUP):
                g1 = min(g0 + GROUP, hi)
                products(prev, prev_base, h, g0, g1, h, w, cp, scr, sb)
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
        w, lengths = view(d, 11, f32), view(d, 13, np.int64)
        scr, p = view(d, 15, f32), view(d, 17, np.int64)
        t_len, b, h, hp_w, relu = p[0], p[1], p[2], p[3], p[5]
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
            products(d_pre, t * b * h, h, lo, hi, h, w, hp_w, scr, sb)
            add_rows(dh, lo, hi, h, scr, sb, hp_w)
