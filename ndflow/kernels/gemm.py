"""Float32 matrix products on the faster of ATen's two CPU GEMM libraries, chosen per shape.

ATen's `torch.mm` runs MKL's sgemm, and MKL picks its code by CPU vendor: on AMD CPUs it
runs its AVX2 kernels. oneDNN, which ATen ships for convolutions, runs AVX-512 wherever the
CPU has it (`torch.ops.mkldnn._linear_pointwise`, the kernel PyTorch's own compiler uses for
linear layers). On a 2-core Zen 5 EPYC (full-width AVX-512) oneDNN multiplied the raw MLP's
256x784 by 784x512 at 430 GFLOP/s where MKL reached 200, and TensorFlow, whose MatMul is
oneDNN's, ran that model's step at half ndflow's GEMM time; on Intel CPUs MKL is the one
tuned best. So, as the convolutions choose their algorithm (autotune), each product
shape runs both libraries the first time it comes and keeps the faster for the process.

Both compute in float32 with float32 accumulation (oneDNN's blocking sums in another order:
the results differ in the last bits, as TensorFlow's do from ndflow's). Other dtypes, other
devices, empty operands and products too small to time (`MIN_FLOPS`) run ATen's kernel.
"""

from __future__ import annotations

import torch

from ndflow.kernels import autotune

ATEN, ONEDNN, ONEDNN_SWAPPED = "aten", "onednn", "onednn_swapped"
ALGORITHMS = (ATEN, ONEDNN)
# A product without bias or activation may also run as its transpose, w @ a.T, copied back
# transposed: the libraries block the output's rows and columns differently, and a narrow
# output ([512, 10], a last layer's weight gradient) ran at a third of the rate its
# transpose did (111 against 37 us).
PLAIN_ALGORITHMS = (ATEN, ONEDNN, ONEDNN_SWAPPED)
MIN_FLOPS = 2e6     # multiply-adds x 2 below which the call costs more than either kernel

_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn,
                                                           "_linear_pointwise")


def _flops(a: torch.Tensor, w: torch.Tensor) -> float:
    """The product's FLOPs where both libraries can run it and it is worth timing, else -1
    (ATen's kernel runs)."""
    if not (_ONEDNN and a.dtype == torch.float32 and w.dtype == torch.float32
            and a.device.type == "cpu" and w.device.type == "cpu" and w.dim() == 2
            and a.numel() and w.numel()):
        return -1.0
    flops = 2.0 * a.numel() * w.shape[0]
    return flops if flops >= MIN_FLOPS else -1.0


def linear(a: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None,
           post: tuple | None = None):
    """`a @ w.T (+ bias)` for `a` (..., K) and `w` (N, K), any strides; bias (N,) or None;
    `post`: an activation applied to the result, (oneDNN post-op attr, its scalars, the same
    activation as an in-place ATen function), where oneDNN applies it as it writes the result
    (attr "none": the ATen function runs after). A new contiguous (..., N) tensor."""
    if a.shape[-1] == 1 and a.dim() >= 2 and w.dim() == 2:
        return _finish(_outer(a, w, bias), post)
    flops = _flops(a, w)
    if flops < 0:
        return _finish(_aten(a, w, bias), post)

    def run(algorithm):
        return _product(algorithm, a, w, bias, post)
    plain = bias is None and post is None and a.dim() == 2
    return autotune.run_tuned(_key(a, w, bias, post), flops, run,
                              PLAIN_ALGORITHMS if plain else ALGORITHMS, min_flops=MIN_FLOPS)


def library(a: torch.Tensor, w: torch.Tensor) -> str:
    """Which library (ATEN or ONEDNN) `linear(a, w)` runs (timing them now if this shape is
    new): for an op that runs the product its own way with one of them
    (`_MatMulApplyMomentum`)."""
    flops = _flops(a, w)
    if flops < 0:
        return ATEN
    chosen = autotune.choose(_key(a, w, None), flops,
                             lambda algorithm: _product(algorithm, a, w, None),
                             PLAIN_ALGORITHMS if a.dim() == 2 else ALGORITHMS,
                             min_flops=MIN_FLOPS)
    return ONEDNN if chosen == ONEDNN_SWAPPED else chosen


def _key(a, w, bias, post=None) -> tuple:
    """The timing table's key: `library(a, w)` and `linear(a, w)` share theirs."""
    return ("gemm", tuple(a.shape), a.stride(), tuple(w.shape), w.stride(), bias is not None,
            post[0] if post else None)


def _product(algorithm: str, a, w, bias, post=None):
    if algorithm == ONEDNN_SWAPPED:
        return torch.ops.mkldnn._linear_pointwise(w, a, None, "none", [], "").t().contiguous()
    if algorithm == ONEDNN and post is not None and post[0] != "none":
        return torch.ops.mkldnn._linear_pointwise(a, w, bias, post[0], post[1], "")
    if algorithm == ONEDNN:
        return _finish(torch.ops.mkldnn._linear_pointwise(a, w, bias, "none", [], ""), post)
    return _finish(_aten(a, w, bias), post)


def _finish(y, post):
    if post is not None:
        post[2](y)
    return y


def _outer(a, w, bias):
    """A product over one term (K = 1, a Dense(1) head's input gradient): each output is one
    multiplication, which the GEMM libraries ran at half a broadcast multiply's rate or less
    ([64 x 1] x [1 x 6272]: 22 against 10 us)."""
    y = torch.mul(a, w.reshape(-1), out=a.new_empty(a.shape[:-1] + w.shape[:1]))
    return y if bias is None else y.add_(bias)


def _aten(a, w, bias):
    if a.dim() == 2:
        return torch.mm(a, w.t()) if bias is None else torch.addmm(bias, a, w.t())
    y = torch.matmul(a, w.t())
    return y if bias is None else y.add_(bias)

