"""`tf.test` build and device queries, answered for ndflow's ATen build: built with CUDA
when torch is, GPUs when torch sees one, XLA-style compilation always (ndflow's JIT)."""

from __future__ import annotations

import torch

from ndflow.core.api_export import tf_export


@tf_export("test.is_built_with_cuda")
def is_built_with_cuda() -> bool:
    """Whether this build can run CUDA kernels (the installed torch was built with CUDA).

    Returns:
      A bool; it does not say whether a GPU is present (see `tf.config.list_physical_devices`).

    Example:
      >>> isinstance(tf.test.is_built_with_cuda(), bool)
      True
    """
    return torch.version.cuda is not None


@tf_export("test.is_built_with_rocm")
def is_built_with_rocm() -> bool:
    """Whether this build can run ROCm (AMD GPU) kernels (torch built with HIP).

    Returns:
      A bool.

    Example:
      >>> isinstance(tf.test.is_built_with_rocm(), bool)
      True
    """
    return getattr(torch.version, "hip", None) is not None


@tf_export("test.is_built_with_gpu_support")
def is_built_with_gpu_support() -> bool:
    """Whether this build supports any GPU: CUDA or ROCm.

    Returns:
      A bool.

    Example:
      >>> tf.test.is_built_with_gpu_support() == (tf.test.is_built_with_cuda()
      ...                                         or tf.test.is_built_with_rocm())
      True
    """
    return is_built_with_cuda() or is_built_with_rocm()


@tf_export("test.is_built_with_xla")
def is_built_with_xla() -> bool:
    """Whether compiled execution (`tf.function(jit_compile=True)`) is available.

    Returns:
      True: ndflow's JIT compiles clusters in every build.

    Example:
      >>> tf.test.is_built_with_xla()
      True
    """
    return True   # tf.function(jit_compile=True) and auto-clustering compile (ndflow/jit)


@tf_export("test.is_cpu_target_available")
def is_cpu_target_available(target) -> bool:  # noqa: ARG001 - TF's signature
    """TF answers whether its LLVM was built with `target`; ndflow's kernels are ATen's and its
    generated ones numba's LLVM, which targets the host."""
    return True


@tf_export("test.is_gpu_available")
def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """Whether a GPU is usable (deprecated in TF for tf.config.list_physical_devices('GPU'))."""
    if not torch.cuda.is_available():
        return False
    if min_cuda_compute_capability is None:
        return True
    want = tuple(min_cuda_compute_capability)
    return any(torch.cuda.get_device_capability(i) >= want
               for i in range(torch.cuda.device_count()))


@tf_export("test.gpu_device_name")
def gpu_device_name() -> str:
    """'/device:GPU:0' when a GPU is usable, else ''."""
    return "/device:GPU:0" if torch.cuda.is_available() else ""
