"""The line every benchmark prints first: the CPU model, its cores and the vector / bf16
features that decide kernel speed (our machines differ: AVX-512 with bf16 units, or AVX2
only), and the torch build."""

from __future__ import annotations

import os
import platform

import torch

FEATURES = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile")


def cpu_line() -> str:
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    have = [f for f in FEATURES if f in flags] or ["none of " + "/".join(FEATURES)]
    lacks = [f for f in FEATURES if f not in flags and flags]
    lacking = f"; no {', '.join(lacks)}" if lacks else ""
    return (f"CPU: {model}, {os.cpu_count()} cores, {', '.join(have)}{lacking} "
            f"(torch {torch.__version__}, {torch.get_num_threads()} threads)")
