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
    """(the CPU's model name, its /proc/cpuinfo flags). A name that does not say which
    generation it is (a cloud VM's bare "AMD EPYC") gets its family and model numbers, and
    for AMD the Zen generation: Zen 4 and Zen 5 report the same flags, but only Zen 5 runs
    AVX-512 at full width (twice the float32 GEMM rate of oneDNN's kernels)."""
    model, flags, fields = platform.processor() or "unknown CPU", frozenset(), {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name":
                    model = value.strip()
                elif key in ("vendor_id", "cpu family", "model"):
                    fields[key] = value.strip()
                elif key == "flags":
                    flags = frozenset(value.split())
                    break
    except OSError:
        pass
    family, number = fields.get("cpu family"), fields.get("model")
    if family and number and not any(ch.isdigit() for ch in model):
        zen = _ZEN.get(family) if fields.get("vendor_id") == "AuthenticAMD" else None
        if family == "25" and "avx512f" in flags:
            zen = "Zen 4"
        model += f" (family {family}, model {number}{': ' + zen if zen else ''})"
    return model, flags


_ZEN = {"23": "Zen/Zen 2", "25": "Zen 3", "26": "Zen 5"}


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
