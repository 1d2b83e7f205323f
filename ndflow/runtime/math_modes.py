"""The NVIDIA container's math switches, applied to ATen's backends once, at first use.

    TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32=1     float32 matmuls may use TF32 (cuBLAS; oneDNN)
    TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32=1      float32 convolutions may use TF32 (cuDNN; oneDNN)
    TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32=1  float32 cuDNN RNNs may use TF32
    TF_DISABLE_CUBLAS_TENSOR_OP_MATH=1         matmuls: no TF32 and no reduced-precision
                                               float16/bfloat16 reductions, whatever the above
    TF_DISABLE_CUDNN_TENSOR_OP_MATH=1          convolutions: no TF32, whatever the above
    TF_CUDNN_USE_AUTOTUNE=0                    cuDNN picks algorithms by heuristics (on by
                                               default: ATen's benchmark mode, as TF autotunes)
    CUDA_DEVICE_MAX_CONNECTIONS=N              validated (1-32); the CUDA driver reads it
                                               itself when ATen creates the CUDA context

TF32 keeps float32's range with a 10-bit mantissa in the multiplications (float32
accumulation); only NVIDIA GPUs from Ampere on have it. The switches start off, as in the
container (TensorFlow 2's own default is on: `tf.config.experimental.
enable_tensor_float_32_execution(True)` turns all three on, `False` all off; an explicit call
wins over the variables, the TF_DISABLE_* ones excepted). The same choice goes to oneDNN's
float32 math mode (`torch.backends.mkldnn.{matmul,conv}.fp32_precision = "tf32"`), which
CPUs without TF32 units compute in full float32 (same results).

Settings go through ATen's per-backend API (`fp32_precision`); reading them back with
ATen's legacy getters (`torch.backends.cuda.matmul.allow_tf32`,
`torch.get_float32_matmul_precision()`) then raises in torch, so ndflow never does.
`applied()` is the record of what was set; `apply()` re-reads the variables (tests).

TF_AUTOTUNE_THRESHOLD and TF_ENABLE_WINOGRAD_NONFUSED are validated only: ATen's benchmark
mode times each convolution shape once (no repeated agreement count) and has no switch to
leave the non-fused Winograd algorithms out of cuDNN's search; oneDNN's CPU convolutions
never use Winograd in ATen, so "0" holds on CPUs anyway.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

import torch

from ndflow.core import config, logging
from ndflow.core.api_export import tf_export


@dataclass(frozen=True)
class MathModes:
    """What `apply()` set: each flag as ATen now has it."""

    matmul_tf32: bool                 # cuBLAS and oneDNN float32 matmuls
    conv_tf32: bool                   # cuDNN and oneDNN float32 convolutions
    rnn_tf32: bool                    # cuDNN float32 RNNs
    reduced_precision_reduction: bool  # cuBLAS float16/bfloat16 split reductions
    cudnn_benchmark: bool             # cuDNN autotuning (benchmark mode)
    cuda_device_max_connections: int

    def as_dict(self) -> dict:
        return asdict(self)


_explicit_tf32: bool | None = None  # tf.config.experimental.enable_tensor_float_32_execution
_applied: MathModes | None = None
_lock = threading.Lock()


def resolve() -> MathModes:
    """The modes the variables (and an explicit TF32 call) ask for; ValueError if malformed."""
    cublas_off = config.get(config.TF_DISABLE_CUBLAS_TENSOR_OP_MATH)
    cudnn_off = config.get(config.TF_DISABLE_CUDNN_TENSOR_OP_MATH)
    if _explicit_tf32 is not None:
        matmul = conv = rnn = _explicit_tf32
    else:
        matmul = config.get(config.TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32)
        conv = config.get(config.TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32)
        rnn = config.get(config.TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32)
    return MathModes(
        matmul_tf32=matmul and not cublas_off,
        conv_tf32=conv and not cudnn_off,
        rnn_tf32=rnn,
        reduced_precision_reduction=not cublas_off,
        cudnn_benchmark=config.get(config.TF_CUDNN_USE_AUTOTUNE),
        cuda_device_max_connections=config.cuda_device_max_connections(),
    )


def apply() -> MathModes:
    """Sets ATen's backends from the variables now and records it."""
    global _applied
    modes = resolve()
    backends = torch.backends

    def precision(on: bool) -> str:
        return "tf32" if on else "ieee"

    with _lock:
        backends.cuda.matmul.fp32_precision = precision(modes.matmul_tf32)
        backends.mkldnn.matmul.fp32_precision = precision(modes.matmul_tf32)
        backends.cudnn.conv.fp32_precision = precision(modes.conv_tf32)
        backends.mkldnn.conv.fp32_precision = precision(modes.conv_tf32)
        backends.cudnn.rnn.fp32_precision = precision(modes.rnn_tf32)
        backends.cuda.matmul.allow_fp16_reduced_precision_reduction = (
            modes.reduced_precision_reduction)
        backends.cuda.matmul.allow_bf16_reduced_precision_reduction = (
            modes.reduced_precision_reduction)
        backends.cudnn.benchmark = modes.cudnn_benchmark
        _applied = modes
    logging.vlog("math_modes", 1, f"ATen math modes: {modes}")
    return modes


def ensure_applied() -> None:
    """`apply()` on the first call in the process (plans and eager kernels call this)."""
    if _applied is None:
        apply()


def applied() -> MathModes | None:
    """What the last `apply()` set (None before the first use)."""
    return _applied


def aten_settings() -> dict:
    """ATen's current values of the settings this module makes (per-backend API only)."""
    b = torch.backends
    return {
        "cuda.matmul": b.cuda.matmul.fp32_precision,
        "mkldnn.matmul": b.mkldnn.matmul.fp32_precision,
        "cudnn.conv": b.cudnn.conv.fp32_precision,
        "mkldnn.conv": b.mkldnn.conv.fp32_precision,
        "cudnn.rnn": b.cudnn.rnn.fp32_precision,
        "fp16_reduced_precision_reduction":
            b.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "bf16_reduced_precision_reduction":
            b.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "cudnn.benchmark": b.cudnn.benchmark,
    }


@tf_export("config.experimental.enable_tensor_float_32_execution")
def enable_tensor_float_32_execution(enabled: bool) -> None:
    """TF32 on (True) or off (False) for float32 matmuls, convolutions and RNNs, overriding
    the TF_ENABLE_*_TENSOR_OP_MATH_FP32 variables (TF_DISABLE_* still win)."""
    global _explicit_tf32
    _explicit_tf32 = bool(enabled)
    apply()


@tf_export("config.experimental.tensor_float_32_execution_enabled")
def tensor_float_32_execution_enabled() -> bool:
    """Whether float32 matmuls may use TF32 (as set by the call above or the variables)."""
    return resolve().matmul_tf32


def reset_for_test() -> None:
    """Forgets an explicit TF32 call and re-applies the variables."""
    global _explicit_tf32
    _explicit_tf32 = None
    apply()
