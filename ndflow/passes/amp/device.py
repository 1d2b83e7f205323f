"""Which devices the mixed-precision rewrite targets: GPU properties and CPU bf16/fp16 units.

- float16 on GPUs with compute capability >= 7.0 (or any GPU under
  TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE); CUDA/cuDNN versions as
  TensorFlow encodes them (CUDA 12.1 -> 12010, cuDNN 8.9.2 -> 8902).
- TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU: with no GPU, pretend one with arch 8.0,
  CUDA 11050 and cuDNN 8302 (nodes without a device are then placed on it).
- bfloat16 on CPUs with bf16 units: AVX512_BF16 or AMX-BF16 in /proc/cpuinfo's flags.
- The oneDNN FP16_CPU mode needs AMX-FP16 or AVX-NE-CONVERT.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from ndflow.core import config, devices, logging


@dataclass(frozen=True)
class GpuProperties:
    """What the rewrite needs of a GPU (TF's grappler DeviceProperties environment)."""

    architecture: tuple[int, int] = (0, 0)
    cuda: int = 0
    cudnn: int = 0
    # A GPU described by a test or TF_..._SIMULATE_GPU, not the device ATen runs on: nodes
    # without a device are taken to be on it (TF's placer, as in TF's own tests). On a real
    # GPU they are where ndflow runs them: the CPU (ndflow places unplaced ops there).
    virtual: bool = True

    @classmethod
    def parse(cls, props: dict) -> GpuProperties:
        """From {'architecture': '7.0', 'cuda': 9010, 'cudnn': 7602} (missing keys = 0)."""
        parts = str(props.get("architecture", "0")).split(".")
        try:
            arch = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
        except ValueError:
            arch = (0, 0)
        return cls(arch, int(props.get("cuda", 0) or 0), int(props.get("cudnn", 0) or 0))

    def fast_fp16(self) -> bool:
        return self.architecture >= (7, 0)


SIMULATED_GPU = GpuProperties((8, 0), 11050, 8302)


def _version(text: str | None) -> int:
    if not text:
        return 0
    parts = [int(p) for p in text.split(".")[:2] if p.isdigit()]
    major, minor = (parts + [0, 0])[:2]
    return major * 1000 + minor * 10


def detect_gpu() -> GpuProperties | None:
    """The first GPU's properties, a simulated one, or None."""
    if devices.gpu_count() > 0:
        major, minor = torch.cuda.get_device_capability(0)
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else 0
        return GpuProperties((major, minor), _version(torch.version.cuda), int(cudnn or 0),
                             virtual=False)
    if config.get(config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU):
        return SIMULATED_GPU
    return None


def suitable_gpu(gpu: GpuProperties | None) -> bool:
    return gpu is not None and (gpu.fast_fp16() or config.get(
        config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE))


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_has_bf16_units() -> bool:
    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})


# TensorFlow's Linux default for oneDNN's optimizations (util.cc's DefaultOneDnnPolicy).
_ONEDNN_DEFAULT_FLAGS = frozenset({"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile",
                                   "amx_int8", "amx_bf16"})


def onednn_enabled() -> bool:
    """TensorFlow's IsMKLEnabled(): TF_ENABLE_ONEDNN_OPTS, else whether the CPU has the neural
    network features TensorFlow turns oneDNN on for. Without it TensorFlow never registers
    the bfloat16 rewrite (auto_mixed_precision_onednn_bfloat16 is then a no-op: on an
    AVX2-only CPU bfloat16 kernels are emulated, ~17x slower for MNIST)."""
    try:
        value = config.onednn_opts()
    except ValueError as e:  # TensorFlow warns and keeps the default
        logging.warning(f"{e}; using the default setting")
        value = None
    return bool(cpu_flags() & _ONEDNN_DEFAULT_FLAGS) if value is None else value


def cpu_has_fp16_units() -> bool:
    return bool(cpu_flags() & {"amx_fp16", "avx_ne_convert"})


def node_device_type(device: str, gpu: GpuProperties | None) -> str:
    """'CPU', 'GPU', ... for a node's device; an empty device is where it runs: the CPU, but
    on a virtual GPU (a test's or a simulated one), as TensorFlow's placer would put it."""
    if not device:
        return "GPU" if gpu is not None and gpu.virtual else "CPU"
    try:
        return devices.device_type(device).upper()
    except Exception:  # noqa: BLE001 - an unparsable device is on no known type
        return ""
