"""ATen kernels for MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 and MatrixBandPart.

The diagonal ops are gathers: an index table (built once per shape, in NumPy) maps every
output element to its source element, or to the padding value.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import linalg_diag as ld


def _bad(msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, msg)


def _range(k: torch.Tensor) -> tuple:
    try:
        return ld.diag_range(k.tolist(), True)
    except ValueError as e:
        raise _bad(str(e)) from None


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _offset(d: int, length: int, longest: int, align: str) -> int:
    """Padding before diagonal `d` (of `length`) when stacked to `longest`."""
    sup, sub = align.split("_")
    side = sup if d >= 0 else sub
    return longest - length if side == "RIGHT" else 0


def _diag_len(d: int, rows: int, cols: int) -> int:
    return min(rows + min(0, d), cols - max(0, d))


@functools.lru_cache(maxsize=256)
def _part_index(rows: int, cols: int, lo: int, hi: int, align: str) -> np.ndarray:
    """Flat matrix index (or rows*cols for padding) of each [diag, position] of the band."""
    longest = ld.max_diag_len(rows, cols, lo, hi)
    idx = np.full((hi - lo + 1, max(longest, 0)), rows * cols, np.int64)
    for row, d in enumerate(range(hi, lo - 1, -1)):
        length = _diag_len(d, rows, cols)
        off = _offset(d, length, longest, align)
        for i in range(length):
            idx[row, i + off] = (i + max(0, -d)) * cols + i + max(0, d)
    return idx


@functools.lru_cache(maxsize=256)
def _matrix_index(rows: int, cols: int, lo: int, hi: int, longest: int, align: str):
    """Flat index into the stacked diagonals [num_diags * longest] of each matrix element,
    or num_diags * longest where the element is outside the band."""
    n = hi - lo + 1
    idx = np.full((rows, cols), n * longest, np.int64)
    for d in range(lo, hi + 1):
        length = _diag_len(d, rows, cols)
        off = _offset(d, length, longest, align)
        for i in range(max(length, 0)):
            idx[i + max(0, -d), i + max(0, d)] = (hi - d) * longest + i + off
    return idx


def _check_bounds(lo: int, hi: int, rows: int, cols: int) -> None:
    try:
        ld.check_diag_bounds(lo, hi, rows, cols, True)
    except ValueError as e:
        raise _bad(str(e)) from None


def _diag_part_fn(align: str):
    def run(x, k, pad):
        lo, hi = _range(k)
        rows, cols = x.shape[-2], x.shape[-1]
        _check_bounds(lo, hi, rows, cols)
        idx = torch.from_numpy(_part_index(rows, cols, lo, hi, align)).to(x.device)
        batch = x.shape[:-2]
        flat = torch.cat([x.reshape(*batch, rows * cols),
                          pad.to(x.dtype).expand(*batch, 1)], -1)
        out = flat[..., idx.reshape(-1)].reshape(*batch, *idx.shape)
        return out[..., 0, :] if lo == hi else out
    return run


def _diag_fn(align: str):
    def run(diag, k, num_rows, num_cols, pad):
        lo, hi = _range(k)
        if lo != hi and (diag.dim() < 2 or diag.shape[-2] != hi - lo + 1):
            raise _bad(ld.NUM_DIAGS_EAGER)
        longest = diag.shape[-1]
        try:
            rows, cols = ld.diag_output_dims(longest, lo, hi, int(num_rows), int(num_cols), True)
        except ValueError as e:
            raise _bad(str(e)) from None
        stacked = diag if lo != hi else diag.unsqueeze(-2)
        batch = stacked.shape[:-2]
        flat = torch.cat([stacked.reshape(*batch, -1), pad.to(diag.dtype).expand(*batch, 1)],
                         -1)
        idx = torch.from_numpy(_matrix_index(rows, cols, lo, hi, longest, align))
        return flat[..., idx.reshape(-1).to(diag.device)].reshape(*batch, rows, cols)
    return run


def _set_diag_fn(align: str):
    def run(x, diag, k):
        lo, hi = _range(k)
        rows, cols = x.shape[-2], x.shape[-1]
        _check_bounds(lo, hi, rows, cols)
        longest = ld.max_diag_len(rows, cols, lo, hi)
        want = (*x.shape[:-2], *(() if lo == hi else (hi - lo + 1,)), longest)
        if tuple(diag.shape) != want:
            raise _bad(
                "Either first dimensions of diagonal don't match input.shape[:-2], or "
                "diagonal.shape[:-1] is not equal to the longests diagonal in range "
                f"[lower_diag_index:upper_diag_index].\nInput shape: {_fmt(x.shape)}\n"
                f"Diagonal shape: {_fmt(diag.shape)}\nExpected diagonal shape: {_fmt(want)}")
        stacked = diag if lo != hi else diag.unsqueeze(-2)
        batch = x.shape[:-2]
        idx = torch.from_numpy(_matrix_index(rows, cols, lo, hi, longest, align)).to(x.device)
        flat = torch.cat([stacked.reshape(*batch, -1), x.new_zeros(*batch, 1)], -1)
        picked = flat[..., idx.reshape(-1)].reshape(x.shape)
        return torch.where(idx < (hi - lo + 1) * longest, picked, x)
    return run


_MAIN = torch.zeros((), dtype=torch.int32)
for _op, _fn, _align in ((ld.MatrixDiagPartV3, _diag_part_fn, None),
                         (ld.MatrixDiagPartV2, _diag_part_fn, "LEFT_LEFT"),
                         (ld.MatrixDiagV3, _diag_fn, None),
                         (ld.MatrixDiagV2, _diag_fn, "LEFT_LEFT"),
                         (ld.MatrixSetDiagV3, _set_diag_fn, None),
                         (ld.MatrixSetDiagV2, _set_diag_fn, "LEFT_LEFT")):
    kernel(_op)(lambda node, fn=_fn, align=_align: fn(align or node.attrs["align"]))


@kernel(ld.MatrixDiagPart)
def _diag_part_v1(node):
    run = _diag_part_fn("RIGHT_LEFT")
    return lambda x: run(x, _MAIN, torch.zeros((), dtype=x.dtype))


@kernel(ld.MatrixDiag)
def _diag_v1(node):
    run = _diag_fn("RIGHT_LEFT")
    return lambda d: run(d, _MAIN, -1, -1, torch.zeros((), dtype=d.dtype))


@kernel(ld.MatrixSetDiag)
def _set_diag_v1(node):
    run = _set_diag_fn("RIGHT_LEFT")
    return lambda x, d: run(x, d, _MAIN)


@kernel(ld.MatrixBandPart)
def _band_part(node):
    def run(x, num_lower, num_upper):
        rows, cols = x.shape[-2], x.shape[-1]
        lower, upper = int(num_lower), int(num_upper)
        if lower > rows:
            raise _bad(f"num_lower must be negative or less or equal to number of rows "
                       f"({rows}) got: {lower}")
        if upper > cols:
            raise _bad(f"num_upper must be negative or less or equal to number of columns "
                       f"({cols}) got: {upper}")
        r = torch.arange(rows, device=x.device).unsqueeze(1)
        c = torch.arange(cols, device=x.device).unsqueeze(0)
        keep = torch.ones(rows, cols, dtype=torch.bool, device=x.device)
        if lower >= 0:
            keep &= (r - c) <= lower
        if upper >= 0:
            keep &= (c - r) <= upper
        return torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device))
    return run


def bands_to_dense(bands: torch.Tensor, lo: int, hi: int, align: str) -> torch.Tensor:
    """The [..., M, M] matrix whose diagonals lo..hi are the rows of `bands` [..., K, M]."""
    m = bands.shape[-1]
    batch = bands.shape[:-2]
    idx = torch.from_numpy(_matrix_index(m, m, lo, hi, m, align)).to(bands.device)
    flat = torch.cat([bands.reshape(*batch, -1), bands.new_zeros(*batch, 1)], -1)
    return flat[..., idx.reshape(-1)].reshape(*batch, m, m)
