"""`tf.config`: devices, eager/function switches, threading."""

from types import SimpleNamespace

import torch

from ndflow.core import context as _context
from ndflow.core import optimizer_options as _optimizer_options
from ndflow.runtime.device_config import (  # noqa: F401
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    get_logical_device_configuration,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_logical_device_configuration,
    set_visible_devices,
)
from ndflow.runtime.function import functions_run_eagerly, run_functions_eagerly  # noqa: F401

get_soft_device_placement = _context.soft_device_placement
set_soft_device_placement = _context.set_soft_device_placement


def _set_memory_growth(device, enable: bool) -> None:
    """GPU memory grows on demand with ATen's caching allocator; accepted for compatibility."""


def _get_memory_growth(device) -> bool:
    return True


experimental = SimpleNamespace(
    set_memory_growth=_set_memory_growth, get_memory_growth=_get_memory_growth,
    list_physical_devices=list_physical_devices, list_logical_devices=list_logical_devices,
    set_visible_devices=set_visible_devices, get_visible_devices=get_visible_devices,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    set_virtual_device_configuration=set_logical_device_configuration,
)

threading = SimpleNamespace(
    get_intra_op_parallelism_threads=torch.get_num_threads,
    set_intra_op_parallelism_threads=lambda n: torch.set_num_threads(n) if n else None,
    get_inter_op_parallelism_threads=torch.get_num_interop_threads,
    set_inter_op_parallelism_threads=lambda n: None,
)

optimizer = SimpleNamespace(
    set_experimental_options=_optimizer_options.set_experimental_options,
    get_experimental_options=_optimizer_options.get_experimental_options,
    set_jit=_optimizer_options.set_jit,
    get_jit=_optimizer_options.get_jit,
)
