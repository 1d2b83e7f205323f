"""SobolSample's kernel, bit for bit TF's (core/kernels/sobol_op.cc): row r is point
skip + r + 1 of the Gray-code Sobol sequence, the XOR of the direction numbers picked by the
bits of its Gray code, as integers over D binary digits scaled by 2^-D. TF picks D per thread
block, but an integer doubled with D is the same float doubled, so one D serves every row.

The direction numbers are Joe and Kuo's new-joe-kuo-6.21201 (S. Joe and F. Y. Kuo,
"Constructing Sobol sequences with better two-dimensional projections", SIAM J. Sci. Comput.
30, 2635-2654 (2008); https://web.maths.unsw.edu.au/~fkuo/sobol/, BSD-style licence, see
sobol_joe_kuo.LICENSE), stored in sobol_joe_kuo.npz as the primitive polynomials and initial
m_k; the rest of each row follows from their recurrence, computed once.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import torch

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import kernel
from ndflow.ops import sobol_ops

MAX_DIM = 21200  # TF's kMaxSobolDim: one fewer than the table's rows
_BITS = 31  # enough for any int32 point index
_INT32_MAX = 2**31 - 1
_TABLE = os.path.join(os.path.dirname(__file__), "sobol_joe_kuo.npz")


@functools.lru_cache(maxsize=1)
def direction_numbers() -> np.ndarray:
    """m_k for every dimension and k < 31 (int64 [21201, 31]); row 0 is all ones."""
    with np.load(_TABLE) as t:
        poly = t["poly"].astype(np.int64)
        half = np.concatenate([t["m_lo"], t["m_mid"], t["m_hi"]], axis=1).astype(np.int64)
    degree = np.array([int(p).bit_length() - 1 for p in poly])
    init_cols = half.shape[1]
    m = np.zeros((len(poly), _BITS), np.int64)
    known = np.arange(init_cols)[None, :] < degree[:, None]
    m[:, :init_cols] = np.where(known, 2 * half + 1, 0)
    m[0, :] = 1
    rows = np.arange(len(poly))
    for k in range(1, _BITS):
        todo = (k >= degree) & (degree > 0)
        if not todo.any():
            continue
        s = degree[todo]
        r = rows[todo]
        base = m[r, k - s]
        value = base ^ (base << s)  # the polynomial's x^s and 1 terms
        for ell in range(1, int(s.max())):
            use = (ell < s) & (((poly[todo] >> np.maximum(s - ell, 0)) & 1) == 1)
            value ^= np.where(use, m[r, k - ell] << ell, 0)
        m[r, k] = value
    return m


def _check(dim: int, num_results: int, skip: int) -> None:
    if dim < 1:
        raise InvalidArgumentError(None, None, "dim must be at least one")
    if dim > MAX_DIM:
        raise InvalidArgumentError(None, None, f"dim must be at most {MAX_DIM}")
    if num_results < 1:
        raise InvalidArgumentError(None, None, "num_results must be at least one")
    if skip < 0:
        raise InvalidArgumentError(None, None, "skip must be non-negative")
    if not num_results < _INT32_MAX - skip:
        raise InvalidArgumentError(None, None,
                                   f"num_results+skip must be less than {_INT32_MAX}")


def _byte_table(v: np.ndarray, first_bit: int) -> np.ndarray:
    """[256, dim]: entry b is the XOR of the direction numbers of the bits set in b, read as
    bits first_bit.. first_bit + 7 of a Gray code."""
    table = np.zeros((256, v.shape[1]), np.int32)
    for j in range(8):
        half = 1 << j
        if first_bit + j < v.shape[0]:
            np.bitwise_xor(table[:half], v[first_bit + j], out=table[half:2 * half])
        else:
            table[half:2 * half] = table[:half]
    return table


def sobol_points(dim: int, num_results: int, skip: int, dtype) -> np.ndarray:
    """The [num_results, dim] samples (`dtype` np.float32 or np.float64) as TF's kernel
    computes them."""
    _check(dim, num_results, skip)
    digits = (skip + num_results + 1).bit_length()
    shifts = digits - 1 - np.arange(digits)
    # [digits, dim] int32, as TF's integers (they stay below 2^31).
    v = np.ascontiguousarray((direction_numbers()[:dim, :digits] << shifts[None, :]).T)
    v = v.astype(np.int32)
    # Point i is the XOR of the direction numbers at the set bits of its Gray code, which TF
    # reaches by one XOR per point; here byte by byte through tables, all points at once.
    index = np.arange(skip + 1, skip + num_results + 1, dtype=np.int64)
    gray = index ^ (index >> 1)
    ints = None
    for first_bit in range(0, digits, 8):
        part = _byte_table(v, first_bit)[(gray >> first_bit) & 255]
        ints = part if ints is None else np.bitwise_xor(ints, part, out=ints)
    # TF computes 1 << digits in a 32-bit int: at 31 digits (skip + num_results >= 2^30 - 1)
    # it wraps to -2^31 and every sample comes out negated. (TF splits long runs over threads
    # with a digit count per block; this is its single-block result.)
    scale = -(2.0**-31) if digits == 31 else 1.0 / (1 << digits)
    return ints.astype(dtype) * np.asarray(scale, dtype)


@kernel(sobol_ops.SobolSample)
def _sobol_kernel(node):
    dtype = np.float64 if node.attrs["dtype"].name == "float64" else np.float32

    def run(dim, num_results, skip):
        return torch.from_numpy(sobol_points(int(dim), int(num_results), int(skip), dtype))
    return run
