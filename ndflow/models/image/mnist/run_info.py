"""The line the MNIST examples print at start: the device, the CPU's vector/bf16 features and
the precision the run really trains in — for mixed precision, whether the graph rewrite is
active on this machine and, if not, why (it needs a GPU of compute capability 7.0+ for
float16, or a CPU with bf16 units for bfloat16)."""

from __future__ import annotations

import os

import torch

from ndflow.core import devices
from ndflow.core.build_info import cpu_model_and_flags
from ndflow.passes.amp import device as amp_device
from ndflow.passes.pass_config import resolve_pass_config

_FEATURES = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16")


def device_description() -> str:
    """The CPU, where the examples' ops run: ndflow places ops without a device on the CPU,
    also when a GPU is present (it runs what `tf.device("/GPU:0")` places there)."""
    flags = amp_device.cpu_flags()
    have = [f for f in _FEATURES if f in flags]
    units = "bf16 units" if amp_device.cpu_has_bf16_units() else "no bf16 units"
    text = (f"CPU: {cpu_model_and_flags()[0]} ({os.cpu_count()} cores; "
            f"{', '.join(have) or 'no AVX2'}; {units})")
    if devices.gpu_count() > 0:
        major, minor = torch.cuda.get_device_capability(0)
        text += (f"; {torch.cuda.get_device_name(0)} (compute capability {major}.{minor}) "
                 "present, used by ops placed with tf.device('/GPU:0')")
    return text


def precision_description(dtype_name: str, mixed_precision_requested: bool | None = None) -> str:
    """What the run trains in. `mixed_precision_requested`: None reads the graph rewrite's
    configuration (TF_ENABLE_AUTO_MIXED_PRECISION*, set_experimental_options)."""
    onednn_bf16 = False
    if mixed_precision_requested is None:
        config = resolve_pass_config()
        onednn_bf16 = config.auto_mixed_precision_onednn_bfloat16
        mixed_precision_requested = config.auto_mixed_precision or onednn_bf16
    if not mixed_precision_requested:
        return f"{dtype_name}; mixed precision off"
    gpu = amp_device.detect_gpu()
    if amp_device.suitable_gpu(gpu) and gpu.virtual:
        return "mixed precision: the graph rewrite runs the allowed ops in float16 on the GPU"
    if amp_device.cpu_has_bf16_units() or (onednn_bf16 and amp_device.onednn_enabled()):
        return "mixed precision: the graph rewrite runs the allowed ops in bfloat16 on the CPU"
    if amp_device.suitable_gpu(gpu):   # a real GPU: the examples' ops run on the CPU
        return (f"{dtype_name}: mixed precision was asked for, but the rewrite is inactive here "
                "(it converts the ops on the GPU, these run on the CPU, and this CPU has no "
                "bf16 units: AVX512_BF16 or AMX-BF16)")
    why = ("the GPU's compute capability is below 7.0" if gpu is not None else "there is no GPU")
    return (f"{dtype_name}: mixed precision was asked for, but the rewrite is inactive here "
            f"({why}, and this CPU has no bf16 units: AVX512_BF16 or AMX-BF16)")


def run_line(dtype_name: str, mixed_precision_requested: bool | None = None) -> str:
    return (f"Training on {device_description()} in "
            f"{precision_description(dtype_name, mixed_precision_requested)}.")
