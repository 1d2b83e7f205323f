"""Kernels of FractionalMaxPool / FractionalAvgPool and their gradient ops (NHWC).

Pooling sequences: TF's GeneratePoolingSequence (core/kernels/fractional_pool_common.cc) on a
fresh GuardedPhiloxRandom at (seed, seed2) per execution (kernels/philox.py), rows first,
then columns, so the same seeds give TensorFlow's sequences:

- random: the increments (`n % m` of them k + 1, the others k = n // m) shuffled by TF's
  RandomShuffle, which reserves ceil(m / 4) Philox calls and swaps increment i with
  i + sample_i % (m - i);
- pseudo-random: one Philox call, its first two words a double u in [0, 1) (TF's
  Uint64ToDouble), and a_i = ceil(alpha * (i + u * u_max)) with TF's bound u_max on u.

Region i of a sequence a spans [a_i, a_{i+1} - 1] ([a_i, a_{i+1}] when overlapping), clipped
to the input. On a CPU the pools and their gradients are TF's own loops compiled by numba
(kernels/fractional_pool_numba.py); elsewhere (GPUs, or without numba) ATen gathers, per
offset (dh, dw) of a region in TF's scan order (rows, then columns), one element of every
region (index_select on H and W) and folds it in. Both give TF's values bit for bit: max
keeps the first strictly greater value (TF's `cwiseMax` on an output that starts at the
dtype's lowest value, so NaNs are skipped), the average adds in TF's order in T (integers
wrap and divide truncating) and divides by the region's size; the max pool's gradient takes
each region's first maximum in scan order (checked against orig_output, TF's
"tensor_out_dup" check) and adds out_backprop there in output order (atomically on a
GPU); the average pool's gradient adds each element's shares, float64, in TF's order, then
casts to T.
"""

from __future__ import annotations

import math
import secrets

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError, UnimplementedError
from ndflow.kernels import fractional_pool_numba, philox
from ndflow.kernels.registry import kernel
from ndflow.kernels.tensor_text import print_one_dim
from ndflow.ops import nn_fractional_pool as ops
from ndflow.ops.nn_fractional_pool import pooled_size, tf_float

_MASK32 = 0xFFFFFFFF


# -- pooling sequences ----------------------------------------------------------------------

def _random_increments(n_in: int, n_out: int, state: philox.GuardedPhilox) -> list:
    k, spots = divmod(n_in, n_out)
    diff = [k + 1] * spots + [k] * (n_out - spots)
    calls = (n_out + 3) // 4          # ReserveSamples32(n_out)
    samples = philox.random_bits(calls, state.key, state.reserve(calls)).reshape(-1)
    for i in range(n_out - 1):
        j = i + int(samples[i]) % ((n_out - i) & _MASK32)
        diff[i], diff[j] = diff[j], diff[i]
    return diff


def _pseudo_random_increments(n_in: int, n_out: int, state: philox.GuardedPhilox) -> list:
    words = philox.random_bits(1, state.key, state.reserve(1))[0]   # ReserveSamples32(2)
    u01 = float(philox.uniform_double_from_words(words[:1], words[1:2])[0])
    alpha = n_in / n_out
    k = n_in // n_out
    u_max = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
    u = u01 * u_max
    cum = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, n_out)] + [n_in + 1]
    return [cum[i + 1] - cum[i] for i in range(n_out)]


def pooling_sequence(n_in: int, n_out: int, state: philox.GuardedPhilox,
                     pseudo_random: bool) -> np.ndarray:
    """int64 [n_out + 1]: TF's cumulative pooling sequence of n_in elements into n_out regions
    drawn from `state` (always drawn, as TF's, even where n_out divides n_in)."""
    draw = _pseudo_random_increments if pseudo_random else _random_increments
    diff = draw(n_in, n_out, state)
    return np.concatenate([[0], np.cumsum(diff, dtype=np.int64)]).astype(np.int64)


# -- regions ----------------------------------------------------------------------------------

def _regions(seq: np.ndarray, n: int, overlapping: bool) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the regions of `seq`, ends inclusive and clipped to n - 1."""
    starts = seq[:-1]
    ends = seq[1:] if overlapping else seq[1:] - 1
    return starts, np.minimum(ends, n - 1)


def _offset_indices(starts, ends, pad):
    """Per offset d of a region, the element index of every region: start + d, or `pad` past
    a region's end (the last element for pad=None, a padded zero for pad=n)."""
    span = int((ends - starts).max()) + 1
    out = []
    for d in range(span):
        idx = starts + d
        over = idx > ends
        if over.any():
            idx = np.where(over, ends if pad is None else pad, idx)
        out.append(idx)
    return out


def _as_index(arrays, device) -> list:
    return [torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(device)
            for a in arrays]


def _lowest(dtype: torch.dtype):
    return torch.finfo(dtype).min if dtype.is_floating_point else torch.iinfo(dtype).min


# -- forward ----------------------------------------------------------------------------------

def _check_ratio(node, what: str) -> list:
    """TF's kernel-construction checks of FractionalMaxPool / FractionalAvgPool."""
    a = node.attrs
    ratio = [np.float32(r) for r in a["pooling_ratio"]]
    if len(ratio) != 4:
        raise InvalidArgumentError(None, None, "pooling_ratio field must specify 4 dimensions")
    for r in ratio:
        if not r >= 1:
            raise InvalidArgumentError(None, None, f"pooling_ratio cannot be smaller than 1, "
                                       f"got: {tf_float(r)}")
    if ratio[0] != 1 or ratio[3] != 1:
        raise UnimplementedError(None, None, f"Fractional {what} pooling is not yet supported "
                                 "on the batch nor channel dimension.")
    if not a["deterministic"] and (a["seed"] != 0 or a["seed2"] != 0):
        raise InvalidArgumentError(None, None, "Both seed and seed2 should be 0 if "
                                   "deterministic is false.")
    return ratio


def _forward(node, what: str, pool):
    a = node.attrs
    pseudo, overlapping = bool(a["pseudo_random"]), bool(a["overlapping"])
    seeds = [int(a["seed"]), int(a["seed2"])]
    if a["deterministic"] and seeds == [0, 0]:   # TF: random seeds, fixed for the kernel
        seeds = [secrets.randbits(64), secrets.randbits(64)]

    def run(x):
        ratio = _check_ratio(node, what)
        if x.dim() != 4:
            raise InvalidArgumentError(None, None, "tensor_in must be 4-dimensional")
        dims = list(x.shape)
        for i in range(4):
            if not dims[i] >= ratio[i]:
                raise InvalidArgumentError(
                    None, None, f"Pooling ratio is higher than input dimension size for "
                    f"dimension {i}. Input dim size: {dims[i]} pooling ratio: "
                    f"{tf_float(ratio[i])}")
        out_h, out_w = pooled_size(dims[1], ratio[1]), pooled_size(dims[2], ratio[2])
        state = philox.GuardedPhilox(*seeds)
        rows = pooling_sequence(dims[1], out_h, state, pseudo)
        cols = pooling_sequence(dims[2], out_w, state, pseudo)
        out = pool(x, rows, cols, overlapping)
        return out, torch.from_numpy(rows).to(x.device), torch.from_numpy(cols).to(x.device)
    return run


def max_pool(x: torch.Tensor, rows, cols, overlapping: bool) -> torch.Tensor:
    """NHWC max over the regions of `rows` x `cols` (TF's: the first strictly greater value
    of each region, from the lowest value of the dtype)."""
    if x.device.type == "cpu" and fractional_pool_numba.available():
        return fractional_pool_numba.pool("max", x, rows, cols, overlapping)
    _, h, w, _ = x.shape
    rs, re = _regions(rows, h, overlapping)
    cs, ce = _regions(cols, w, overlapping)
    row_idx = _as_index(_offset_indices(rs, re, None), x.device)
    col_idx = _as_index(_offset_indices(cs, ce, None), x.device)
    out = None
    for ri in row_idx:
        xr = x.index_select(1, ri)
        for ci in col_idx:
            v = xr.index_select(2, ci)
            if out is None:
                out = torch.full_like(v, _lowest(x.dtype))
            out = torch.where(v > out, v, out)
    return out


def avg_pool(x: torch.Tensor, rows, cols, overlapping: bool) -> torch.Tensor:
    """NHWC mean over the regions of `rows` x `cols`: TF's sum in T, in scan order, divided
    by the region's size (truncating for the integer types)."""
    if x.device.type == "cpu" and fractional_pool_numba.available():
        return fractional_pool_numba.pool("avg", x, rows, cols, overlapping)
    n, h, w, c = x.shape
    rs, re = _regions(rows, h, overlapping)
    cs, ce = _regions(cols, w, overlapping)
    row_off, col_off = _offset_indices(rs, re, h), _offset_indices(cs, ce, w)
    padded = any((i == h).any() for i in row_off) or any((i == w).any() for i in col_off)
    xp = torch.nn.functional.pad(x, (0, 0, 0, 1, 0, 1)) if padded else x   # a zero row, col
    row_idx, col_idx = _as_index(row_off, x.device), _as_index(col_off, x.device)
    acc = torch.zeros((n, len(rs), len(cs), c), dtype=x.dtype, device=x.device)
    for ri in row_idx:
        xr = xp.index_select(1, ri)
        for ci in col_idx:
            acc += xr.index_select(2, ci)
    count = np.outer(re - rs + 1, ce - cs + 1)
    count_t = torch.from_numpy(count).to(device=x.device, dtype=x.dtype).view(
        1, len(rs), len(cs), 1)
    if x.dtype.is_floating_point:
        return acc / count_t
    return torch.div(acc, count_t, rounding_mode="trunc")


@kernel(ops.FractionalMaxPool)
def _fractional_max_pool(node):
    return _forward(node, "max", max_pool)


@kernel(ops.FractionalAvgPool)
def _fractional_avg_pool(node):
    return _forward(node, "average", avg_pool)


# -- gradients --------------------------------------------------------------------------------

def _seq(t: torch.Tensor) -> np.ndarray:
    return t.detach().reshape(-1).cpu().numpy().astype(np.int64)


_TYPE_NAMES = {torch.float32: "float", torch.float64: "double", torch.int32: "int32",
               torch.int64: "int64"}


def _describe(t: torch.Tensor) -> str:
    """TF's Tensor::DebugString: type, shape and the first three values (SummarizeValue)."""
    limit, shape = 3, list(t.shape)
    flat = t.detach().reshape(-1)[:limit].cpu().tolist()
    text = [f"{v:.9g}" if isinstance(v, float) else str(v) for v in flat]
    values = print_one_dim(shape, text, limit) + ("..." if t.numel() > limit else "")
    dims = ",".join(str(d) for d in shape)
    return f"Tensor<type: {_TYPE_NAMES.get(t.dtype, 'float')} shape: [{dims}] values: " \
           f"{values}>"


def _eigen_vector(values) -> str:
    """A 1-D int64 tensor as Eigen prints it in TF's messages: right-aligned columns."""
    text = [str(int(v)) for v in values]
    width = max((len(s) for s in text), default=0)
    return " ".join(s.rjust(width) for s in text)


_DUP_MISMATCH = "tensor_out_dup is not the same as tensor_out"


def max_pool_argmax(x: torch.Tensor, rows, cols, overlapping: bool):
    """(max, flat NHWC input index of it) per region: TF's FractionalMaxPoolGrad scan, the
    first element of a region, then each strictly greater one."""
    n, h, w, c = x.shape
    rs, re = _regions(rows, h, overlapping)
    cs, ce = _regions(cols, w, overlapping)
    row_off, col_off = _offset_indices(rs, re, None), _offset_indices(cs, ce, None)
    row_idx, col_idx = _as_index(row_off, x.device), _as_index(col_off, x.device)
    best = arg = None
    for ro, ri in zip(row_off, row_idx):
        xr = x.index_select(1, ri)
        for co, ci in zip(col_off, col_idx):
            v = xr.index_select(2, ci)
            hw = torch.from_numpy(np.add.outer(ro * w, co)).to(x.device).view(
                1, len(rs), len(cs), 1)
            if best is None:
                best, arg = v, hw.expand(v.shape)
            else:
                greater = best < v
                best = torch.where(greater, v, best)
                arg = torch.where(greater, hw, arg)
    batch = torch.arange(n, device=x.device, dtype=torch.int64).view(n, 1, 1, 1) * (h * w)
    chan = torch.arange(c, device=x.device, dtype=torch.int64).view(1, 1, 1, c)
    return best, (batch + arg) * c + chan


@kernel(ops.FractionalMaxPoolGrad)
def _fractional_max_pool_grad(node):
    overlapping = bool(node.attrs["overlapping"])

    def run(x, y, dy, row_seq, col_seq):
        if x.dim() != 4:
            raise InvalidArgumentError(None, None, f"orig_input should be a tensor of rank 4, "
                                       f"got {_describe(x)}")
        if x.numel() == 0:
            raise InvalidArgumentError(None, None, f"orig_input must not be empty, got "
                                       f"{_describe(x)}")
        if y.dim() != 4:
            raise InvalidArgumentError(None, None, f"orig_output should be a tensor of rank 4, "
                                       f"got {_describe(y)}")
        if y.numel() == 0:
            raise InvalidArgumentError(None, None, f"orig_output must not be empty, got "
                                       f"{_describe(y)}")
        if row_seq.numel() * col_seq.numel() > x.numel():
            raise InvalidArgumentError(
                None, None, "Pooling region has more elements than the input tensor. "
                f"row_pooling_sequence: {_describe(row_seq)}col_pooling_sequence: "
                f"{_describe(col_seq)}orig_input: {_describe(x)}")
        rows, cols = _seq(row_seq), _seq(col_seq)
        if (len(rows) - 1, len(cols) - 1) != (y.shape[1], y.shape[2]) or \
                (y.shape[0], y.shape[3]) != (x.shape[0], x.shape[3]):
            raise InvalidArgumentError(None, None, _DUP_MISMATCH)
        for seq, n in ((rows, x.shape[1]), (cols, x.shape[2])):
            s, e = _regions(seq, n, overlapping)
            if (s < 0).any() or (s > e).any():   # TF: regions left unvisited (or UB)
                raise InvalidArgumentError(None, None, _DUP_MISMATCH)
        if x.device.type == "cpu" and fractional_pool_numba.available() and \
                dy.shape == y.shape:
            dx, ok = fractional_pool_numba.max_pool_grad(x, y, dy, rows, cols, overlapping)
            if not ok:
                raise InvalidArgumentError(None, None, _DUP_MISMATCH)
            return dx
        best, flat = max_pool_argmax(x, rows, cols, overlapping)
        if not bool((best == y).all()):
            raise InvalidArgumentError(None, None, _DUP_MISMATCH)
        n_out = dy.numel()
        if n_out > flat.numel():
            raise InvalidArgumentError(None, None, f"out_backprop has {n_out} values, more "
                                       f"than orig_output's {flat.numel()}")
        out = torch.zeros(x.numel(), dtype=dy.dtype, device=dy.device)
        out.index_add_(0, flat.reshape(-1)[:n_out], dy.reshape(-1))   # in output order
        return out.view(x.shape)
    return run


def _members(starts, ends, n: int, pad: int) -> list:
    """Per rank m, int64 [n]: the m-th region (in order) holding each element, else `pad`."""
    lists = [[] for _ in range(n)]
    for r, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        for i in range(max(s, 0), min(e, n - 1) + 1):
            lists[i].append(r)
    depth = max((len(v) for v in lists), default=0)
    return [np.array([v[m] if m < len(v) else pad for v in lists], np.int64)
            for m in range(depth)]


@kernel(ops.FractionalAvgPoolGrad)
def _fractional_avg_pool_grad(node):
    overlapping = bool(node.attrs["overlapping"])

    def run(shape, dy, row_seq, col_seq):
        if shape.dim() != 1 or shape.numel() != 4:
            raise InvalidArgumentError(None, None, "original input tensor shape must be"
                                       "1-dimensional and 4 elements")
        if dy.dim() != 4:
            raise InvalidArgumentError(None, None, "out_backprop must be 4-dimensional")
        ob, oh, ow, od = dy.shape
        dims = "[" + ",".join(str(d) for d in dy.shape) + "]"
        for seq, n, what in ((row_seq, oh, "row"), (col_seq, ow, "col")):
            if seq.numel() <= n:
                raise InvalidArgumentError(
                    None, None, f"Given out_backprop shape {dims}, {what}_seq_tensor must have "
                    f"at least {n + 1} elements, but got {seq.numel()}")
        ib, ih, iw, idp = (int(v) for v in shape.tolist())
        for v, what in ((ib, "Batch"), (ih, "Rows"), (iw, "Columns"), (idp, "Depth")):
            if v == 0:
                raise InvalidArgumentError(None, None, f"{what} dimension of input must not "
                                           "be 0")
        if min(ib, ih, iw, idp) < 0:
            raise InvalidArgumentError(None, None, f"Dimension {min(ib, ih, iw, idp)} must "
                                       "be >= 0")
        if ob > ib or od != idp:
            raise InvalidArgumentError(None, None, f"out_backprop {dims} does not match the "
                                       f"input shape [{ib},{ih},{iw},{idp}]")
        rows, cols = _seq(row_seq)[:oh + 1], _seq(col_seq)[:ow + 1]
        rs, re = _regions(rows, ih, overlapping)
        cs, ce = _regions(cols, iw, overlapping)
        for s, e, what in ((rs, re, "Row"), (cs, ce, "Column")):
            bad = (s < 0) | (e < 0)
            if bad.any():
                seq = _seq(row_seq if what == "Row" else col_seq)
                raise InvalidArgumentError(None, None, f"{what} sequence tensor values must "
                                           f"not be negative, got {_eigen_vector(seq)}")
        if dy.device.type == "cpu" and fractional_pool_numba.available():
            acc = fractional_pool_numba.avg_pool_grad(dy, rows, cols, overlapping, ih, iw)
        else:
            acc = _avg_pool_grad(dy, rs, re, cs, ce, ih, iw)
        if ob < ib:
            acc = torch.cat([acc, acc.new_zeros((ib - ob, ih, iw, idp))])
        return acc.to(dy.dtype)
    return run


def _avg_pool_grad(dy, rs, re, cs, ce, ih, iw):
    """The float64 gradient of an average pool (ATen): each element's shares gathered from
    the regions holding it and added in TF's order (by region row, then column)."""
    ob, oh, ow, od = dy.shape
    count = np.outer(re - rs + 1, ce - cs + 1).astype(np.float64)
    count[count <= 0] = 1.0   # empty regions: nothing to share
    share = dy.double() / torch.from_numpy(count).to(dy.device).view(1, oh, ow, 1)
    share = torch.nn.functional.pad(share, (0, 0, 0, 1, 0, 1))   # a zero share at oh, ow
    row_m = _as_index(_members(rs, re, ih, oh), dy.device)
    col_m = _as_index(_members(cs, ce, iw, ow), dy.device)
    acc = torch.zeros((ob, ih, iw, od), dtype=torch.float64, device=dy.device)
    for ri in row_m:          # each element's shares in TF's order: by row, then column
        sr = share.index_select(1, ri)
        for ci in col_m:
            acc += sr.index_select(2, ci)
    return acc
