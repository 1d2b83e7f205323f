"""`tf.sysconfig.get_build_info()` and what `python -m ndflow.info` reports: the build (the
torch ndflow runs on: a CUDA or ROCm build, its versions), this machine's CPU and GPUs, and
the container's environment variables that are set."""

from __future__ import annotations

import collections
import platform

import torch

from ndflow.core import config
from ndflow.core.api_export import tf_export

CPU_FEATURES = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile")


@tf_export("sysconfig.get_build_info")
def get_build_info() -> collections.OrderedDict:
    """TensorFlow's keys (`is_cuda_build`, `is_rocm_build`, `is_tensorrt_build`, and on a
    CUDA build `cuda_version`, `cudnn_version`, `cuda_compute_capabilities`) for the torch
    build ndflow's kernels come from."""
    info = collections.OrderedDict(is_cuda_build=torch.version.cuda is not None,
                                   is_rocm_build=getattr(torch.version, "hip", None) is not None,
                                   is_tensorrt_build=False)
    if torch.version.cuda is not None:
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        info["cuda_version"] = torch.version.cuda
        info["cudnn_version"] = str(cudnn) if cudnn else None
        info["cuda_compute_capabilities"] = [a.replace("sm_", "compute_")
                                             for a in torch.cuda.get_arch_list()]
    return info


def cpu_model_and_flags() -> tuple[str, frozenset]:
    model, flags = platform.processor() or "unknown CPU", frozenset()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = frozenset(value.split())
                    break
    except OSError:
        pass
    return model, flags


def gpus() -> list[str]:
    """One line per CUDA device ATen sees: name, compute capability, memory."""
    if not torch.cuda.is_available():
        return []
    out = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append(f"GPU {i}: {p.name}, compute capability {p.major}.{p.minor}, "
                   f"{p.total_memory / 2**30:.1f} GiB")
    return out


def environment() -> list[tuple[str, str, str]]:
    """(name, raw value, status) for each declared variable that is set; status is "in
    effect", "parsed only" (accepted, nothing acts on it yet) or the parse error."""
    rows = []
    for name in config.VARIABLES:
        raw = config.raw(name)
        if raw is None:
            continue
        try:
            config.snapshot_one(name)
            status = "parsed only" if name in config.PARSED_ONLY else "in effect"
        except ValueError as e:
            status = f"malformed: {e}"
        rows.append((name, raw, status))
    return rows
