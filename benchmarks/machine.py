"""The line every benchmark prints first: the CPU model, its cores and the vector / bf16
features that decide kernel speed (our machines differ: AVX-512 with bf16 units, or AVX2
only), and the torch build."""

from __future__ import annotations

import os
import time

import torch

from ndflow.core.build_info import CPU_FEATURES as FEATURES
from ndflow.core.build_info import cpu_model_and_flags


def cpu_line() -> str:
    model, flags = cpu_model_and_flags()
    have = [f for f in FEATURES if f in flags] or ["none of " + "/".join(FEATURES)]
    lacks = [f for f in FEATURES if f not in flags and flags]
    lacking = f"; no {', '.join(lacks)}" if lacks else ""
    return (f"CPU: {model}, {os.cpu_count()} cores, {', '.join(have)}{lacking} "
            f"(torch {torch.__version__}, {torch.get_num_threads()} threads)")


def gemm_peak_gflops(dtype=torch.float32, n: int = 1024) -> float:
    """This CPU's practical matrix-multiply rate (GFLOP/s) on an n x n x n product, the best of
    ATen's two libraries (MKL's `torch.mm`; oneDNN's linear kernel, which on AMD CPUs with
    full-width AVX-512 runs twice MKL's rate): the ceiling of any CNN/MLP step made of
    convolutions and matmuls, so a speed bar that needs more than this in the GEMMs alone
    cannot be met by scheduling or fusion."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    products = [lambda: a @ b]
    if hasattr(torch.ops.mkldnn, "_linear_pointwise") and torch.backends.mkldnn.is_available():
        products.append(lambda: torch.ops.mkldnn._linear_pointwise(a, b, None, "none", [], ""))
    best = float("inf")
    for product in products:
        for _ in range(3):
            product()
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(4):
                product()
            best = min(best, (time.perf_counter() - t) / 4)
    return 2 * n ** 3 / best / 1e9


def floor_line(flops: float, what: str = "step") -> str:
    """'floor: N GFLOP at this CPU's float32 GEMM peak = X ms (bfloat16 peak: Y ms)'."""
    f32, bf16 = gemm_peak_gflops(torch.float32), gemm_peak_gflops(torch.bfloat16)
    return (f"  floor: {flops / 1e9:.2f} GFLOP per {what} at this CPU's measured GEMM peak "
            f"({f32:.0f} GFLOP/s float32, {bf16:.0f} bfloat16) = {flops / f32 / 1e6:.2f} ms in "
            f"float32, {flops / bf16 / 1e6:.2f} ms in bfloat16")


def fetch(out) -> None:
    """Waits for a result: each tensor of it (or of a tuple or list of them) to NumPy."""
    for t in (out if isinstance(out, (tuple, list)) else (out,)):
        t.numpy()


def best_ms_after_pause(fn, args, calls: int) -> float:
    """The fastest of `calls` calls of `fn(*args)` after a warm-up call, in ms; 0.3 s first,
    so the other side's spinning pool threads go idle (2-core machines)."""
    time.sleep(0.3)
    fetch(fn(*args))
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        fetch(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best * 1e3
