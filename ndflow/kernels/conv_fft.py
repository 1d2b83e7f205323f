"""Stride-1 NHWC convolutions and their two gradients through 2-D discrete Fourier transforms,
one of the algorithms the CPU convolution autotuner (autotune.py) times, as cuDNN's FFT
algorithms are among those TF's GPU autotuner times.

A convolution of an H x W image with a KH x KW filter is a pointwise product of their
spectra: per frequency, a [N, C] x [C, O] complex matrix product. On MNIST's second layer
(14 x 14 images, 5 x 5 x 32 x 64 filters, SAME) the spectra are 16 x 9 frequencies (real
transforms), so the products take 144 x 64 x 32 x 64 complex multiply-adds, 151 MFLOP,
against 1.28 GFLOP for the direct convolution. The transforms themselves are small dense
matrix products (a DFT matrix along one axis at a time: at these sizes a GEMM against the
DFT matrix beats an FFT library's many tiny transforms; the two-dimensional ones run on the
faster GEMM library for their shape, `_mm`; the per-frequency products run in
conv_fft_numba.py's vector kernel where the output channels are a multiple of 16, at ~3x
ATen's batched products), laid out so every step is a GEMM over contiguous operands and no
copy moves single floats:

    spectrum:  x [N,H,W,C] -> [H, W, N*C] (moves rows of channels) -> along W:
               [H, (re/im, v), N*C] -> along H: [(re/im, u), (v, N, C)]
    products:  per frequency f = (u, v), [Xr | Xi] [N, 2C] times the filter spectrum
               [Wr; Wi] [2C, O] (conjugated for the forward pass), and Xi Wr - Xr Wi:
               [re/im, f, N, O]
    inverse:   along u, complex (the bias joins the zero frequency): [(i, re/im), (v, N*O)]
               -> real part along v: [i, j, N*O] -> NHWC (moves rows of channels; relu)
    filter gradient: per frequency Xr^T Gr + Xi^T Gi and Xi^T Gr - Xr^T Gi [C, O] -> the
               real inverse transform at the filter's taps only

The circular transforms compute linear convolutions when the transform size along an axis is
at least the image size plus the larger of the two paddings (the wrapped-around indices then
fall on zeros); the filter's spectrum carries the shift by the leading padding. Errors are
those of float32 GEMMs: on MNIST's layer 3.0e-7 of the largest output against float64,
where oneDNN's direct convolution is off by 1.2e-6.

The inverse transforms along u first, complex to complex, in one GEMM over both halves of
the products, then takes the real part along v: a half-transform of [oh, 2, v, N*O] written
once (4.1 MB for MNIST's layer), where going along v first wrote [ph, 2, ow, N*O] (7.3 MB)
and read-modified-wrote it to add the imaginary half (the forward pass's inverse 1.29 ->
0.95 ms).

A training step transforms each tensor once: the filter gradient takes the spectra of the
forward pass's input and of the output gradient from the passes that computed them (below).
On an AMX Xeon (2 cores) MNIST's three passes took 2.4-3.0 / 2.5-2.9 / 2.2-2.5 ms standalone
(the forward pass 2.6-2.75 ms after the inverse above) against oneDNN's 3.1-3.6 / 2.7-3.3 /
2.9-3.5 ms, and the training step goes from 13.8-14.4 to 10.9-11.3 ms with the spectra
shared."""

from __future__ import annotations

import collections
import functools
import math
import threading
import time

import torch

from ndflow.kernels import autotune, conv_fft_numba, gemm
from ndflow.kernels.permute import permute_copy

MAX_SIZE = 64   # transform sizes above this make the dense DFT matrices cost more than FFTs
WORKSPACE_BYTES = 1 << 30   # intermediates at most (as cuDNN's algorithms have a workspace
                            # limit): MNIST's layer needs 24 MB at batch 64
SHARED_SPECTRA = 8   # spectra kept for the other pass that reads the same tensor


def transform_size(size: int, pad_before: int, pad_after: int) -> int:
    """The even circular transform size along one axis that computes the linear result."""
    p = size + max(pad_before, pad_after)
    return p + (p % 2)


def workspace_bytes(x_shape, w_shape, pads) -> int:
    """The bytes of a pass's intermediates, counted as if all were live at once: spectra, the
    spectra's rows for the products, the filter's spectrum, the products and the inverse's
    half-transformed rows (no more than the products), for the larger channel count."""
    n, h, wd, _ = x_shape
    kh, kw, cin, cout = w_shape
    pt, pb, pl, pr = pads
    ph, pw = transform_size(h, pt, pb), transform_size(wd, pl, pr)
    freqs, ch = ph * (pw // 2 + 1), max(cin, cout)
    return 4 * (8 * freqs * n * ch + 4 * freqs * cin * cout)


def eligible(stride, dilation, x_shape, w_shape, pads) -> bool:
    """Whether a convolution (of one group) of x [N,H,W,C] with w [KH,KW,C,O] has an FFT
    algorithm: stride 1, no dilation, filters of at least 3 x 3 (smaller ones gain
    nothing), no padding wider than the filter less one (SAME's and VALID's; wider would make
    outputs outnumber the transform size), images up to MAX_SIZE and intermediates within
    WORKSPACE_BYTES."""
    pt, pb, pl, pr = pads
    kh, kw = w_shape[:2]
    return (tuple(stride) == (1, 1) and tuple(dilation) == (1, 1) and min(kh, kw) >= 3
            and max(pt, pb) < kh and max(pl, pr) < kw
            and transform_size(x_shape[1], pt, pb) <= MAX_SIZE
            and transform_size(x_shape[2], pl, pr) <= MAX_SIZE
            and workspace_bytes(x_shape, w_shape, pads) <= WORKSPACE_BYTES)


def all_finite(t: torch.Tensor) -> bool:
    """Whether a result has no NaN or infinity. A transform spreads one non-finite input over
    a whole image's outputs, where a direct convolution confines it to the windows that
    read it (TF's CPU kernels do): callers recompute such results directly. One sum's pass
    (40 us for MNIST's 3.2 MB output); a finite sum that overflows only costs a recompute."""
    return bool(torch.isfinite(t.sum()))


def _hermitian_weights(pw: int) -> torch.Tensor:
    """A real signal's spectrum holds v = 0..pw/2; the others are conjugates: weight 2."""
    c = torch.full((pw // 2 + 1,), 2.0, dtype=torch.float64)
    c[0] = c[-1] = 1.0
    return c


def _cos_sin(angles: torch.Tensor):
    """cos and sin of float64 angles (multiples of 2 pi / n for transform sizes n), with the
    values that are exactly zero (quarter turns) made exactly zero: float64's cos(pi / 2) is
    6e-17, and products of such entries through the transforms' GEMMs reach subnormal
    floats, which cost some CPUs (AMD Zen 4) a slow path: MNIST's forward pass took 8 ms
    there, 4.3 ms without them. Every nonzero entry is at least sin(2 pi / 128) = 0.05."""
    c, s = torch.cos(angles), torch.sin(angles)
    return c.masked_fill(c.abs() < 1e-9, 0.0), s.masked_fill(s.abs() < 1e-9, 0.0)


@functools.lru_cache(maxsize=64)
def _forward_matrices(h: int, w: int, ph: int, pw: int, device: torch.device):
    """(along W [(re/im, v), j], along H [(re/im, u), (i, re/im)]) of an h x w signal."""
    v = torch.arange(pw // 2 + 1, dtype=torch.float64)
    j = torch.arange(w, dtype=torch.float64)
    ca, sa = _cos_sin(2 * math.pi * v[:, None] * j[None, :] / pw)
    along_w = torch.stack([ca, -sa]).reshape(-1, w)
    u = torch.arange(ph, dtype=torch.float64)
    i = torch.arange(h, dtype=torch.float64)
    c, s = _cos_sin(2 * math.pi * u[:, None] * i[None, :] / ph)
    # (c - i s)(re + i im): real c re + s im, imaginary c im - s re
    along_h = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)]).reshape(2 * ph,
                                                                                       2 * h)
    return along_w.float().to(device), along_h.float().to(device)


@functools.lru_cache(maxsize=64)
def _inverse_matrices(oh: int, ow: int, ph: int, pw: int, device: torch.device):
    """(along u [(i, re/im), (re/im, u)]: complex to complex, scaled by 1/(ph pw); along v
    [j, (re/im, v)]: the real part, with the Hermitian weights): an inverse transform's
    outputs at circular indices 0..o-1."""
    u = torch.arange(ph, dtype=torch.float64)
    i = torch.arange(oh, dtype=torch.float64)
    c, s = _cos_sin(2 * math.pi * i[:, None] * u[None, :] / ph)          # i, u
    # (re + i im)(c + i s): real c re - s im, imaginary s re + c im
    along_u = torch.stack([torch.cat([c, -s], 1), torch.cat([s, c], 1)], 1)
    along_u = along_u.reshape(2 * oh, 2 * ph) / (ph * pw)
    v = torch.arange(pw // 2 + 1, dtype=torch.float64)
    j = torch.arange(ow, dtype=torch.float64)
    cb, sb = _cos_sin(2 * math.pi * j[:, None] * v[None, :] / pw)        # j, v
    cv = _hermitian_weights(pw)
    along_v = torch.cat([cb * cv, -sb * cv], 1)
    return along_u.float().to(device), along_v.float().to(device)


def _tap_phases(kh: int, kw: int, ph: int, pw: int, pt: int, pl: int) -> torch.Tensor:
    """[(u, v), (a, b)]: the phase of frequency (u, v) at a filter tap (a - pt, b - pl)."""
    u = torch.arange(ph, dtype=torch.float64)
    v = torch.arange(pw // 2 + 1, dtype=torch.float64)
    da = torch.arange(kh, dtype=torch.float64) - pt
    db = torch.arange(kw, dtype=torch.float64) - pl
    t = 2 * math.pi * (u[:, None, None, None] * da[None, None, :, None] / ph
                       + v[None, :, None, None] * db[None, None, None, :] / pw)
    return t.reshape(-1, kh * kw)


@functools.lru_cache(maxsize=64)
def _filter_matrix(kh: int, kw: int, ph: int, pw: int, pt: int, pl: int, conj: bool,
                   device: torch.device):
    """[(f, 2), kh*kw]: per frequency, the two matrices of the products (`_products`) from a
    filter [kh*kw, (in, out)] (taps at offsets -pt, -pl), whose spectrum is W = sum w (c - i
    s): the forward pass, X conj(W), takes [Wr, Wi]; the input gradient, G W^T, takes [Wr^T,
    -Wi^T] from the filter's transpose."""
    c, s = _cos_sin(_tap_phases(kh, kw, ph, pw, pt, pl))
    return torch.stack([c, -s if conj else s], 1).reshape(-1, kh * kw).float().to(device)


@functools.lru_cache(maxsize=64)
def _tap_matrix(kh: int, kw: int, ph: int, pw: int, pt: int, pl: int, device: torch.device):
    """[kh*kw, (re/im, f)]: a correlation's taps at offsets -pt.., -pl.. from its spectrum's
    real and imaginary parts (the real inverse transform at those points), scaled by
    1/(ph pw)."""
    c, s = _cos_sin(_tap_phases(kh, kw, ph, pw, pt, pl).t())
    cv = (_hermitian_weights(pw) / (ph * pw)).repeat(ph)       # per (u, v)
    return torch.cat([c * cv, -s * cv], 1).float().to(device)


def _mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for a small DFT or tap matrix `a` and a wide `b`, on the faster GEMM library for
    the shape (kernels/gemm.py): MKL ran these few-row products at 60-130 GFLOP/s on a Zen 5
    EPYC, oneDNN at twice that (MNIST's 5x5 layer: 32x28 by 28x18432, 0.25 -> 0.11 ms)."""
    return gemm.linear(a, b.t())


def _spectrum(t: torch.Tensor, ph: int, pw: int) -> torch.Tensor:
    """[2 (re, im), ph * (pw//2+1), N, C] of an NHWC tensor, zero-padded to ph x pw."""
    n, h, w, ch = t.shape
    along_w, along_h = _forward_matrices(h, w, ph, pw, t.device)
    rows = t.permute(1, 2, 0, 3).reshape(h, w, n * ch)
    half = torch.matmul(along_w, rows)                                   # i, (re/im, v), n*c
    spec = _mm(along_h, half.view(2 * h, -1))                            # (re/im, u), (v, n, c)
    return spec.view(2, -1, n, ch)


# A training step transforms each tensor twice: the filter gradient reads the spectrum of
# the forward pass's input and that of the output gradient, which the forward pass and the
# input gradient transform too. So the forward pass leaves its input's spectrum here for the
# filter gradient, and whichever gradient transforms the output gradient first leaves it for
# the other, which takes it out: an entry is taken once, and only by the pass it was left
# for (a pass never reads what it left itself, say in an earlier step). An entry holds its
# tensor (so the tensor's id and memory stay its own) and the tensor's version counter,
# which any in-place write through ATen bumps; TF's tensors are immutable, so between a
# forward pass and its gradients nothing else writes them. Kernels of a graph leave a
# spectrum only when the graph has the pass that takes it (NodeInfo.input_readers); eager
# ops cannot know and always leave. Bounded: a spectrum nobody takes (an eager inference's,
# or one whose reader runs ATen's algorithm) is dropped after SHARED_SPECTRA others.
# While the tuner times a pass's candidates, a spectrum it takes stays for its next run: every
# timed run of the FFT then reads what a step's one run reads. (Taken once, the later runs
# computed both spectra, so a filter gradient whose inputs' spectra the other passes leave was
# timed above its cost: DCGAN's 7x7x128x256 layer 12.3 ms, 9.6 with the spectra.)
_shared: collections.OrderedDict = collections.OrderedDict()
_shared_lock = threading.Lock()
_left = threading.local()   # seconds this thread spent on spectra it left for another pass
FORWARD, INPUT_GRADIENT, FILTER_GRADIENT = "forward", "input gradient", "filter gradient"


def _shared_spectrum(t: torch.Tensor, ph: int, pw: int, left_by: str, take_from: str | None,
                     leave: bool) -> torch.Tensor:
    """`_spectrum(t, ph, pw)` for the pass `left_by`: taken from the entry the pass
    `take_from` left, else computed, and then left for the other pass when `leave`."""
    key = (id(t), ph, pw)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is not None and entry[3] == take_from and entry[0] is t \
                and entry[1] == t._version:
            if not autotune.comparing():   # kept while candidates are timed (below)
                del _shared[key]
            return entry[2]
    start = time.perf_counter()
    spec = _spectrum(t, ph, pw)
    if leave:
        _left.seconds = getattr(_left, "seconds", 0.0) + time.perf_counter() - start
        with _shared_lock:
            _shared[key] = (t, t._version, spec, left_by)
            _shared.move_to_end(key)
            while len(_shared) > SHARED_SPECTRA:
                _shared.popitem(last=False)
    return spec


def take_left_seconds() -> float:
    """Seconds this thread spent since the last call computing spectra it left for another
    pass: the tuner credits them to this algorithm, since the other pass saves them."""
    seconds = getattr(_left, "seconds", 0.0)
    _left.seconds = 0.0
    return seconds


def clear_shared_spectra() -> None:
    with _shared_lock:
        _shared.clear()


def drop_left(t: torch.Tensor, left_by: str) -> None:
    """Drops the spectra of `t` that the pass `left_by` left: after the tuner timed that
    pass's FFT and chose another algorithm, they are no run's of a step, and a pass timed
    next must not take them for free."""
    with _shared_lock:
        for key in [k for k, e in _shared.items() if e[0] is t and e[3] == left_by]:
            del _shared[key]


def _products(spec: torch.Tensor, filt: torch.Tensor) -> torch.Tensor:
    """[2 (re, im), f, N, out channels]: per frequency, of the data's [re | im] rows [N, 2C]
    and the filter's matrices F0, F1 [C, out] (`_filter_matrix`), the real part Xr F0 +
    Xi F1 (one GEMM over [F0; F1]) and the imaginary part Xi F0 - Xr F1. The filter's
    spectrum is computed once, not once per part: half the transform and its memory."""
    f, n, ch = spec.shape[1:]
    if conv_fft_numba.applies(filt.numel() // (2 * f * ch), spec):
        return conv_fft_numba.spectra_products(spec, filt)
    rows = spec.permute(1, 2, 0, 3).reshape(f, n, 2 * ch)                # f, n, (re/im, c)
    filt = filt.view(f, 2, ch, -1)
    prod = torch.empty((2, f, n, filt.shape[-1]), dtype=spec.dtype, device=spec.device)
    torch.bmm(rows, filt.view(f, 2 * ch, -1), out=prod[0])
    torch.bmm(rows[..., ch:], filt[:, 0], out=prod[1]).baddbmm_(rows[..., :ch], filt[:, 1],
                                                                alpha=-1)
    return prod


def _inverse(prod: torch.Tensor, ph: int, pw: int, oh: int, ow: int,
             bias: torch.Tensor | None, relu: bool = False) -> torch.Tensor:
    """The contiguous [N, oh, ow, C] real inverse transform of the products [2, (u, v), N, C],
    plus `bias` per channel, then relu when asked. The bias joins the zero frequency, which
    adds its value / (ph pw) to every output; `prod` is the caller's to overwrite."""
    along_u, along_v = _inverse_matrices(oh, ow, ph, pw, prod.device)
    n, ch = prod.shape[2:]
    if bias is not None:
        prod[0, 0].add_(bias, alpha=ph * pw)
    half = _mm(along_u, prod.view(2 * ph, -1))                          # (i, re/im), (v, n, c)
    y = torch.matmul(along_v, half.view(oh, -1, n * ch))                 # i, j, (n, c)
    y = y.view(oh, ow, n, ch).permute(2, 0, 1, 3)   # moves whole rows of channels: cheap
    out = torch.empty((n, oh, ow, ch), dtype=y.dtype, device=y.device)
    return torch.clamp_min(y, 0.0, out=out) if relu else out.copy_(y)


def forward(x: torch.Tensor, w: torch.Tensor, pads, bias: torch.Tensor | None = None,
            relu: bool = False, leave: bool = True):
    """The NHWC convolution of x [N,H,W,C] with w [KH,KW,C,O] padded by (top, bottom, left,
    right), plus `bias`, then relu when asked: a fresh [N, OH, OW, O] tensor. `leave`: x's
    spectrum is left for a filter gradient (one may read x)."""
    n, h, wd, _ = x.shape
    kh, kw, cin, cout = w.shape
    pt, pb, pl, pr = pads
    ph, pw = transform_size(h, pt, pb), transform_size(wd, pl, pr)
    oh, ow = h + pt + pb - kh + 1, wd + pl + pr - kw + 1
    m = _filter_matrix(kh, kw, ph, pw, pt, pl, True, x.device)
    filt = _mm(m, w.reshape(kh * kw, cin * cout))
    spec = _shared_spectrum(x, ph, pw, FORWARD, None, leave)
    return _inverse(_products(spec, filt), ph, pw, oh, ow, bias, relu)


def backprop_input(g: torch.Tensor, w: torch.Tensor, pads, h: int, wd: int,
                   leave: bool = True):
    """The gradient [N, h, wd, C] of the forward pass's input from g [N,OH,OW,O]; `leave`:
    g's spectrum is left for a filter gradient (one may read g)."""
    kh, kw, cin, cout = w.shape
    pt, pb, pl, pr = pads
    ph, pw = transform_size(h, pt, pb), transform_size(wd, pl, pr)
    m = _filter_matrix(kh, kw, ph, pw, pt, pl, False, g.device)
    filt = _mm(m, permute_copy(w, (0, 1, 3, 2)).view(kh * kw, cout * cin))
    spec = _shared_spectrum(g, ph, pw, INPUT_GRADIENT, FILTER_GRADIENT, leave)
    return _inverse(_products(spec, filt), ph, pw, h, wd, None)


def backprop_filter(x: torch.Tensor, g: torch.Tensor, pads, kh: int, kw: int,
                    leave: bool = True):
    """The gradient [KH, KW, C, O] of the forward pass's filter (a fresh contiguous tensor);
    `leave`: g's spectrum is left for an input gradient (one may read g)."""
    _, h, wd, cin = x.shape
    cout = g.shape[3]
    pt, pb, pl, pr = pads
    ph, pw = transform_size(h, pt, pb), transform_size(wd, pl, pr)
    xs = _shared_spectrum(x, ph, pw, FILTER_GRADIENT, FORWARD, leave=False)
    gs = _shared_spectrum(g, ph, pw, FILTER_GRADIENT, INPUT_GRADIENT, leave)
    # per frequency R = X^T conj(G): real Xr^T Gr + Xi^T Gi, imaginary Xi^T Gr - Xr^T Gi
    if conv_fft_numba.applies(cout, xs):
        parts = conv_fft_numba.filter_products(xs, gs)                   # re/im, f, c, o
    else:
        parts = xs.new_empty((2, xs.shape[1], cin, cout))
        xr, xi = xs[0].transpose(1, 2), xs[1].transpose(1, 2)            # f, c, n
        torch.bmm(xr, gs[0], out=parts[0]).baddbmm_(xi, gs[1])
        torch.bmm(xi, gs[0], out=parts[1]).baddbmm_(xr, gs[1], alpha=-1)
    # both halves' taps in one GEMM on the faster library for the shape: MKL's two
    # torch.mm took 0.61 ms for a DCGAN's 5x5x128x64 layer ([25 x 60] x [60 x 8192] each),
    # oneDNN's one 0.21 ms (Zen 5)
    taps = _tap_matrix(kh, kw, ph, pw, pt, pl, x.device)
    return _mm(taps, parts.view(-1, cin * cout)).view(kh, kw, cin, cout)
