"""The line every benchmark prints first: the CPU model, its cores and the vector / bf16
features that decide kernel speed (our machines differ: AVX-512 with bf16 units, or AVX2
only), and the torch build."""

from __future__ import annotations

import os

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
