"""kernels/rnn_numba.py: CudnnRNNV3's float32 GRU, LSTM and plain RNN over whole sequences,
blocks of batch rows per thread. Values and gradients against float64 references written from the
recurrences (torch autograd differentiates them), for unit counts that are and are not
multiples of the 16-lane tiles, batches that split unevenly into blocks of four rows,
padded sequences (lengths 0, between and full), and one thread, two, or no OpenMP launcher:
the results must be the same bits whichever thread ran a row."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ndflow.kernels import omp_pool, rnn_numba

pytestmark = pytest.mark.skipif(not rnn_numba.applies(torch.zeros(1)), reason="needs numba")

SHAPES = [(6, 5, 16), (4, 9, 20), (3, 2, 48)]   # (T, B, H)


def _lengths(t_len, b, padded):
    if not padded:
        return None
    return torch.tensor([(t_len * k) // (b - 1) if b > 1 else 0 for k in range(b)])[
        torch.randperm(b, generator=torch.Generator().manual_seed(b))]


def _mask(lengths, t, b):
    """(B, 1) float64: 1 where row i is still running at step t."""
    if lengths is None:
        return torch.ones(b, 1, dtype=torch.float64)
    return (t < lengths).to(torch.float64).unsqueeze(1)


def gru_reference(xw, b_hh, w_hh, h0, lengths):
    """hs (T, B, H) by the GRU recurrence (cuDNN's gate order, reset after the product)."""
    h, hs = h0, []
    for t in range(xw.shape[0]):
        hr = h @ w_hh.t() + b_hh
        xr, xz, xn = xw[t].chunk(3, 1)
        rr, rz, rn = hr.chunk(3, 1)
        r, z = torch.sigmoid(xr + rr), torch.sigmoid(xz + rz)
        n = torch.tanh(xn + r * rn)
        m = _mask(lengths, t, h0.shape[0])
        h = m * (n + z * (h - n)) + (1 - m) * h
        hs.append(h)
    return torch.stack(hs)


def lstm_reference(xw, w_hh, h0, c0, lengths):
    """(hs, cs) (T, B, H) by the LSTM recurrence (gates i, f, g, o)."""
    h, c, hs, cs = h0, c0, [], []
    for t in range(xw.shape[0]):
        i, f, g, o = (xw[t] + h @ w_hh.t()).chunk(4, 1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        m = _mask(lengths, t, h0.shape[0])
        c, h = m * c_new + (1 - m) * c, m * h_new + (1 - m) * h
        hs.append(h)
        cs.append(c)
    return torch.stack(hs), torch.stack(cs)


def _running(dy, lengths):
    """dy where the sequence runs, 0 after its end (the op's outputs there are zeros, so the
    kernels take no gradient from those steps)."""
    dy = torch.tensor(dy)
    if lengths is None:
        return dy
    return dy * (torch.arange(dy.shape[0]).unsqueeze(1) < lengths).unsqueeze(2)


def simple_reference(xw, w_hh, h0, lengths, relu):
    """hs (T, B, H) of h = act(xw_t + h_prev R^T)."""
    h, hs = h0, []
    for t in range(xw.shape[0]):
        pre = xw[t] + h @ w_hh.t()
        m = _mask(lengths, t, h0.shape[0])
        h = m * (torch.relu(pre) if relu else torch.tanh(pre)) + (1 - m) * h
        hs.append(h)
    return torch.stack(hs)


def _leaves(*arrays):
    return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]


def _f32(t):
    return t.detach().to(torch.float32)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("padded", [False, True])
def test_gru_values_and_gradients_match_float64(shape, padded):
    t_len, b, h = shape
    rng = np.random.default_rng(t_len * b * h)
    lengths = _lengths(t_len, b, padded)
    xw, b_hh, w_hh, h0 = _leaves(rng.standard_normal((t_len, b, 3 * h)),
                                 rng.standard_normal(3 * h) * 0.5,
                                 rng.standard_normal((3 * h, h)) * 0.4,
                                 rng.standard_normal((b, h)))
    dy, dh_last = rng.standard_normal((t_len, b, h)), rng.standard_normal((b, h))
    hs_ref = gru_reference(xw, b_hh, w_hh, h0, lengths)
    grads = torch.autograd.grad((hs_ref * _running(dy, lengths)).sum()
                                + (hs_ref[-1] * torch.tensor(dh_last)).sum(), [xw, w_hh, h0])

    hs, saved = rnn_numba.gru_forward(_f32(xw), _f32(b_hh), _f32(w_hh), _f32(h0), lengths)
    np.testing.assert_allclose(hs.numpy(), hs_ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    d_xw, d_hr, dh0 = rnn_numba.gru_backward(saved, hs, _f32(h0), torch.tensor(dy).float(),
                                             torch.tensor(dh_last).float(), _f32(w_hh),
                                             lengths)
    h_prev = torch.cat([_f32(h0).unsqueeze(0), hs[:-1]])
    dw_hh = torch.einsum("tbg,tbh->gh", d_hr, h_prev)
    for got, want in zip((d_xw, dw_hh, dh0), grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4,
                                   atol=1e-4 * float(want.abs().max()))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("padded", [False, True])
def test_lstm_values_and_gradients_match_float64(shape, padded):
    t_len, b, h = shape
    rng = np.random.default_rng(7 + t_len * b * h)
    lengths = _lengths(t_len, b, padded)
    xw, w_hh, h0, c0 = _leaves(rng.standard_normal((t_len, b, 4 * h)),
                               rng.standard_normal((4 * h, h)) * 0.4,
                               rng.standard_normal((b, h)), rng.standard_normal((b, h)))
    dy, dh_last, dc_last = (rng.standard_normal(s) for s in ((t_len, b, h), (b, h), (b, h)))
    hs_ref, cs_ref = lstm_reference(xw, w_hh, h0, c0, lengths)
    grads = torch.autograd.grad((hs_ref * _running(dy, lengths)).sum()
                                + (hs_ref[-1] * torch.tensor(dh_last)).sum()
                                + (cs_ref[-1] * torch.tensor(dc_last)).sum(), [xw, h0, c0])

    hs, reserve = rnn_numba.lstm_forward(_f32(xw), _f32(w_hh), _f32(h0), _f32(c0), lengths)
    n = t_len * b * 4 * h
    gates, cs = reserve[:n].view(t_len, b, 4 * h), reserve[n:].view(t_len, b, h)
    np.testing.assert_allclose(hs.numpy(), hs_ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cs.numpy(), cs_ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    dz, dh0, dc0 = rnn_numba.lstm_backward(gates, cs, _f32(c0), torch.tensor(dy).float(),
                                           torch.tensor(dh_last).float(),
                                           torch.tensor(dc_last).float(), _f32(w_hh), lengths)
    for got, want in zip((dz, dh0, dc0), grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4,
                                   atol=1e-4 * float(want.abs().max()))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("relu", [False, True])
def test_plain_rnn_values_and_gradients_match_float64(shape, padded, relu):
    t_len, b, h = shape
    rng = np.random.default_rng(11 + t_len * b * h)
    lengths = _lengths(t_len, b, padded)
    xw, w_hh, h0 = _leaves(rng.standard_normal((t_len, b, h)),
                           rng.standard_normal((h, h)) * 0.4, rng.standard_normal((b, h)))
    dy, dh_last = rng.standard_normal((t_len, b, h)), rng.standard_normal((b, h))
    hs_ref = simple_reference(xw, w_hh, h0, lengths, relu)
    grads = torch.autograd.grad((hs_ref * _running(dy, lengths)).sum()
                                + (hs_ref[-1] * torch.tensor(dh_last)).sum(), [xw, h0])
    hs = rnn_numba.simple_forward(_f32(xw), _f32(w_hh), _f32(h0), lengths, relu)
    np.testing.assert_allclose(hs.numpy(), hs_ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    d_pre, dh0 = rnn_numba.simple_backward(hs, torch.tensor(dy).float(),
                                           torch.tensor(dh_last).float(), _f32(w_hh), lengths,
                                           relu)
    for got, want in zip((d_pre, dh0), grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4,
                                   atol=1e-4 * float(want.abs().max()))


def test_plain_rnn_relu_keeps_nans():
    xw = torch.tensor([[[float("nan"), -1.0] + [0.5] * 14]])
    hs = rnn_numba.simple_forward(xw, torch.zeros(16, 16), torch.zeros(1, 16), relu=True)
    assert torch.isnan(hs[0, 0, 0]) and hs[0, 0, 1] == 0 and hs[0, 0, 2] == 0.5


def _run_all(t_len, b, h, lengths, seed=3):
    g = torch.Generator().manual_seed(seed)
    xw3, xw4 = torch.randn(t_len, b, 3 * h, generator=g), torch.randn(t_len, b, 4 * h, generator=g)
    w3, w4 = torch.randn(3 * h, h, generator=g) * 0.3, torch.randn(4 * h, h, generator=g) * 0.3
    b3, h0, c0 = torch.randn(3 * h, generator=g), torch.randn(b, h, generator=g), \
        torch.randn(b, h, generator=g)
    dy = torch.randn(t_len, b, h, generator=g)
    hs, saved = rnn_numba.gru_forward(xw3, b3, w3, h0, lengths)
    out = [hs, saved, *rnn_numba.gru_backward(saved, hs, h0, dy, h0, w3, lengths)]
    hs, reserve = rnn_numba.lstm_forward(xw4, w4, h0, c0, lengths)
    n = t_len * b * 4 * h
    out += [hs, reserve, *rnn_numba.lstm_backward(reserve[:n].view(t_len, b, 4 * h),
                                                  reserve[n:].view(t_len, b, h), c0, dy, h0,
                                                  c0, w4, lengths)]
    for relu in (False, True):
        hs = rnn_numba.simple_forward(xw3[..., :h], w3[:h], h0, lengths, relu)
        out += [hs, *rnn_numba.simple_backward(hs, dy, h0, w3[:h], lengths, relu)]
    return out


@pytest.mark.parametrize("padded", [False, True])
def test_the_same_bits_on_any_thread_count_and_without_a_launcher(monkeypatch, padded):
    t_len, b, h = 5, 11, 32
    lengths = _lengths(t_len, b, padded)
    threads = torch.get_num_threads()
    runs = []
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            runs.append(_run_all(t_len, b, h, lengths))
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setattr(omp_pool, "launcher", lambda: None)
    runs.append(_run_all(t_len, b, h, lengths))
    for other in runs[1:]:
        for x, y in zip(runs[0], other):
            assert torch.equal(x, y)


def test_empty_sequences_and_batches():
    for t_len, b in ((0, 3), (4, 0)):
        hs, saved = rnn_numba.gru_forward(torch.zeros(t_len, b, 48), torch.zeros(48),
                                          torch.zeros(48, 16), torch.ones(b, 16))
        assert hs.shape == (t_len, b, 16) and saved.shape == (t_len, 4, b, 16)
        d_xw, d_hr, dh = rnn_numba.gru_backward(saved, hs, torch.ones(b, 16),
                                                torch.zeros(t_len, b, 16),
                                                torch.full((b, 16), 2.0), torch.zeros(48, 16))
        assert torch.equal(dh, torch.full((b, 16), 2.0)) and d_xw.shape == (t_len, b, 48)
