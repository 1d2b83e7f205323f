"""Batched float32 matrix products (BatchMatMulV2, einsums with batch labels) on ATen's
`matmul` or kernels/bmm_numba.py's register-blocked kernel, chosen per shape by timing
(kernels/autotune.py), as kernels/gemm.py chooses the GEMM library.

Attention written by hand (`tf.matmul(q, k, transpose_b=True)`) and Keras' MultiHeadAttention
where the fused attention does not apply (attention dropout) multiply many small matrices:
[32 x 4] batches of [64 x 32] x [32 x 64] took ATen 241 us, the kernel 98 (the key operand
copied to unit column stride included), on a 2-core Zen 5. The kernel takes columns in
16-lane vectors: other column counts are padded with zeros (a copy of the right operand), and
the tuner weighs that. Operands of different batch shapes (broadcasting), other dtypes and
devices run ATen's product. Both accumulate in float32, in different orders.
"""

from __future__ import annotations

import torch

from ndflow.kernels import autotune, bmm_numba

ATEN = "aten"
ALGORITHMS = (ATEN, autotune.VECTOR)
MIN_FLOPS = 4e6     # multiply-adds x 2 below which timing costs more than a choice saves


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`torch.matmul(a, b)`: for [..., M, K] and [..., K, N] of one batch shape the faster
    of ATen and the vector kernel for that shape."""
    if not _candidate(a, b):
        return torch.matmul(a, b)
    flops = 2.0 * a.numel() * b.shape[-1]   # batch x M x K multiply-adds for each of N columns
    if flops < MIN_FLOPS:
        return torch.matmul(a, b)
    key = ("bmm", tuple(a.shape), a.stride(), tuple(b.shape), b.stride())
    return autotune.run_tuned(key, flops, lambda algorithm: _product(algorithm, a, b),
                              ALGORITHMS, min_flops=MIN_FLOPS)


def _candidate(a, b) -> bool:
    return (a.dtype == torch.float32 and b.dtype == torch.float32 and a.dim() >= 3
            and a.dim() == b.dim() and a.device.type == "cpu" and b.device.type == "cpu"
            and a.shape[:-2] == b.shape[:-2] and a.shape[-1] == b.shape[-2])


def _four_d(t: torch.Tensor) -> torch.Tensor:
    """`t` as [B1, B2, rows, cols]: the batch dimensions merged into two (a view where the
    strides allow, else a copy)."""
    if t.dim() == 3:
        return t.unsqueeze(0)
    if t.dim() == 4:
        return t
    shape = (-1, *t.shape[-3:])
    try:
        return t.view(shape)
    except RuntimeError:
        return t.reshape(shape)


def _product(algorithm: str, a, b):
    if algorithm == ATEN:
        return torch.matmul(a, b)
    a4, b4 = _four_d(a), _four_d(b)
    n = b4.shape[3]
    if n % 16:   # the kernel's columns come in 16-lane vectors: zeros pad the last one
        padded = b4.new_zeros((*b4.shape[:3], -(-n // 16) * 16))
        padded[..., :n] = b4
        b4 = padded
    elif b4.stride(3) != 1:
        b4 = b4.contiguous()
    if not bmm_numba.applies(a4, b4):
        return torch.matmul(a, b)
    out = bmm_numba.matmul(a4, b4)
    return (out[..., :n].contiguous() if n % 16 else out).view(*a.shape[:-1], n)
