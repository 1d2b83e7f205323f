"""Float32 matrix products on the faster of ATen's two CPU GEMM libraries, chosen per shape.

ATen's `torch.mm` runs MKL's sgemm, and MKL picks its code by CPU vendor: on AMD CPUs it
runs its AVX2 kernels. oneDNN, which ATen ships for convolutions, runs AVX-512 wherever the
CPU has it (`torch.ops.mkldnn._linear_pointwise`, the kernel PyTorch's own compiler uses for
linear layers). On a 2-core Zen 5 EPYC (full-width AVX-512) oneDNN multiplied the raw MLP's
256x784 by 784x512 at 430 GFLOP/s where MKL reached 200, and TensorFlow, whose MatMul is
oneDNN's, ran that model's step at half ndflow's GEMM time; on Intel CPUs MKL is the one
tuned best. So, as the convolutions choose their algorithm (autotune), each product
shape runs both libraries the first time it comes and keeps the faster for the process.

Small products have a third candidate, kernels/small_gemm_numba.py's register-blocked
kernel on the calling thread (`VECTOR`): no team to start and join, AVX-512 where the CPU has
it, the bias and a ReLU applied in the same call. A narrow model's [64 x 64] by [64 x 64]
took it ~4 us against MKL's 5-6 (8.6 in a step, its threads woken), and a 31-layer MLP's
training step went from 1.21 to 1.06 ms (2-core Zen 5). Products that small are timed call
by call where they run (autotune.run_in_turn), and the chosen kernel is made ready for the
shape (`_ready`: checks and layout done once), since their calls cost as much as their work.

While the core monitor has a thread share its work with the pool (kernels/work_pool.py), its
products of at least `MIN_FLOPS` run in blocks there instead (kernels/pool_gemm.py).

All compute in float32 with float32 accumulation (the libraries' blockings sum in other
orders: the results differ in the last bits, as TensorFlow's do from ndflow's). Other dtypes,
other devices, empty operands and products too small to time (`MIN_FLOPS`; `SMALL_MIN_FLOPS`
where the vector kernel applies) run ATen's kernel.
"""

from __future__ import annotations

import torch

from ndflow.core import determinism
from ndflow.kernels import autotune, pool_gemm, small_gemm_numba, work_pool
from ndflow.kernels.permute import permute_copy

ATEN, ONEDNN, ONEDNN_SWAPPED = "aten", "onednn", "onednn_swapped"
ALGORITHMS = (ATEN, ONEDNN)
# A product without bias or activation may also run as its transpose, w @ a.T, copied back
# transposed: the libraries block the output's rows and columns differently, and a narrow
# output ([512, 10], a last layer's weight gradient) ran at a third of the rate its
# transpose did (111 against 37 us).
PLAIN_ALGORITHMS = (ATEN, ONEDNN, ONEDNN_SWAPPED)
VECTOR = autotune.VECTOR
MIN_FLOPS = 2e6     # multiply-adds x 2 below which the call costs more than either kernel
# ... and below which the vector kernel is not timed against ATen's: a 10-class head's
# [64 x 64] by [64 x 10] product (82 KFLOP) took 30-45 us a call in a step on ATen's kernel,
# ~10 on the vector kernel; an op's Linear keeps the choice without a table lookup a call
SMALL_MIN_FLOPS = 1e4

_trials: dict = {}   # (key, algorithm) -> a small product's candidate made ready, while timed
_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn,
                                                           "_linear_pointwise")


def _flops(a: torch.Tensor, w: torch.Tensor) -> float:
    """The product's FLOPs where it is worth choosing its kernel, else -1 (ATen's runs)."""
    if not (a.is_cpu and w.is_cpu and a.dtype == torch.float32 and w.dtype == torch.float32
            and w.dim() == 2):
        return -1.0
    flops = 2.0 * a.numel() * w.shape[0]
    if not flops:   # an empty operand
        return -1.0
    if flops >= MIN_FLOPS and _ONEDNN:
        return flops
    # (the rest of small_gemm_numba.applies is checked when the shape is timed)
    return flops if flops >= SMALL_MIN_FLOPS else -1.0


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
    sharing = work_pool.width()
    if sharing > 1 and flops >= MIN_FLOPS:   # a crowded thread's work shared (module doc)
        y = pool_gemm.linear(a, w, sharing)
        if y is not None:
            return _finish(y if bias is None else y.add_(bias), post)
    key = _key(a, w, bias, post)
    ready = autotune.prepared(key)
    if ready is not None:   # the shape's product, chosen and made ready
        return ready(a, w, bias, post)
    if flops < MIN_FLOPS:
        if not autotune.may_time(torch.get_num_threads()):
            return _finish(_aten(a, w, bias), post)

        # timed where they run (a library's threads sleep between a step's ops), each made
        # ready as it will run once chosen: their calls cost as much as their work
        def run(algorithm):
            ready = _trials.get((key, algorithm))
            if ready is None:
                ready = _trials[(key, algorithm)] = _ready(algorithm, a, w, post)
            return ready(a, w, bias, post)
        y = autotune.run_in_turn(key, run, _candidates(a, w, bias, post, flops))
    else:
        y = autotune.run_tuned(key, flops, lambda algorithm: _product(algorithm, a, w, bias, post),
                               _candidates(a, w, bias, post, flops), min_flops=MIN_FLOPS)
    chosen = autotune.decided(key)
    if chosen is not None:
        autotune.prepare(key, _ready(chosen, a, w, post))
        for algorithm in PLAIN_ALGORITHMS + (VECTOR,):
            _trials.pop((key, algorithm), None)
    return y


class Linear:
    """`linear(a, w, bias, post)` for one op of a plan, whose operands come with the same
    layout call after call, `a` and `w` given transposed where `a_transposed`/`w_transposed`
    (an op's transpose attributes: no view is made on the fast path, ~0.7 us each). The
    product made ready for that layout is kept here, so a call checks the layout (~0.6 us)
    instead of looking it up again (the FLOP count, the key, the table: ~3 us, as much as a
    [64 x 64] by [64 x 64] product's arithmetic on one core)."""

    __slots__ = ("post", "a_transposed", "w_transposed", "_kept")

    def __init__(self, post: tuple | None = None, a_transposed: bool = False,
                 w_transposed: bool = False):
        self.post, self.a_transposed, self.w_transposed = post, a_transposed, w_transposed
        self._kept = None   # (layout, autotune.generation, run(a, w, bias))

    def __call__(self, a: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None):
        layout = (a.shape, a.stride(), w.shape, w.stride(), a.dtype, w.dtype, a.is_cpu,
                  bias is None, torch.get_num_threads())
        kept = self._kept
        if kept is not None and kept[0] == layout and kept[1] == autotune.generation and \
                work_pool.width() <= 1 and not determinism.enabled():
            return kept[2](a, w, bias)
        generation = autotune.generation
        x, wt = a.t() if self.a_transposed else a, w.t() if self.w_transposed else w
        y = linear(x, wt, bias, self.post)
        if x.shape[-1] != 1 and 0 <= _flops(x, wt) < MIN_FLOPS:   # (only those are prepared)
            key = _key(x, wt, bias, self.post)
            ready = autotune.prepared(key)
            self._kept = None if ready is None else (layout, generation, self._run(
                ready, autotune.decided(key) == VECTOR))
        return y

    def _run(self, ready, reads_memory_only: bool):
        post, ta, tw = self.post, self.a_transposed, self.w_transposed
        if reads_memory_only or not (ta or tw):   # (small_gemm_numba.prepared: a view's
            return lambda a, w, bias: ready(a, w, bias, post)   # memory is its base's)
        return lambda a, w, bias: ready(a.t() if ta else a, w.t() if tw else w, bias, post)


def _ready(algorithm: str, a, w, post):
    """`run(a, w, bias, post)`: the product by `algorithm` for operands shaped as these."""
    if algorithm == VECTOR:
        relu = post is not None and post[0] == "relu"
        product = small_gemm_numba.prepared(a, w, relu)
        if relu or post is None:
            return lambda a, w, bias, post: product(a, w, bias)
        return lambda a, w, bias, post: _finish(product(a, w, bias), post)
    return lambda a, w, bias, post: _product(algorithm, a, w, bias, post)


def _candidates(a, w, bias, post, flops) -> tuple:
    """The kernels timed for a product (ATen's first: the default)."""
    plain = bias is None and post is None and a.dim() == 2
    libraries = (PLAIN_ALGORITHMS if plain else ALGORITHMS) if flops >= MIN_FLOPS and _ONEDNN \
        else (ATEN,)
    return libraries + (VECTOR,) if small_gemm_numba.applies(a, w) else libraries


def library(a: torch.Tensor, w: torch.Tensor) -> str:
    """Which library (ATEN or ONEDNN) `linear(a, w)` runs (timing them now if this shape is
    new): for an op that runs the product its own way with one of them
    (`_MatMulApplyMomentum`)."""
    flops = _flops(a, w)
    if flops < 0:
        return ATEN
    chosen = autotune.choose(_key(a, w, None), flops,
                             lambda algorithm: _product(algorithm, a, w, None),
                             _candidates(a, w, None, None, flops), min_flops=MIN_FLOPS)
    return {ONEDNN_SWAPPED: ONEDNN, VECTOR: ATEN}.get(chosen, chosen)


def _key(a, w, bias, post=None) -> tuple:
    """The timing table's key: `library(a, w)` and `linear(a, w)` share theirs (torch.Size
    hashes and compares as the tuple of its sizes)."""
    return ("gemm", a.shape, a.stride(), w.shape, w.stride(), bias is not None,
            post[0] if post else None)


def _product(algorithm: str, a, w, bias, post=None):
    if algorithm == VECTOR:
        return _ready(VECTOR, a, w, post)(a, w, bias, post)
    if algorithm == ONEDNN_SWAPPED:
        return permute_copy(torch.ops.mkldnn._linear_pointwise(w, a, None, "none", [], ""),
                            (1, 0))
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

