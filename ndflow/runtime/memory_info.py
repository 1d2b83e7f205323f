"""`tf.config.experimental.get_memory_info` / `reset_memory_stats` / `get_memory_usage`, with
TensorFlow 2.21's behaviour: a GPU reports its allocator's current and peak bytes (ATen's
caching allocator here); the CPU has no allocator stats in TensorFlow, so asking for them is
TF's ValueError. ndflow's CPU figure is per execution plan instead: the planned peak of live
intermediate bytes, `ConcreteFunction.experimental_get_memory_plan()` (runtime/memory_plan.py).
"""

from __future__ import annotations

import re

import torch

from ndflow.core import devices
from ndflow.core.api_export import tf_export

# [/job:x][/replica:n][/task:n][/device:]TYPE:INDEX, as TF's local or full device names.
_NAME = re.compile(r"^(?:/job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?(?:/device:|/)?"
                   r"([A-Za-z_]+):(\d+)$")


def _gpu_index(device: str, cpu_message: str) -> int:
    """The GPU index `device` names; TF's ValueError for a CPU, a malformed name or a device
    this process does not have."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string, got {type(device).__name__}")
    m = _NAME.match(device)
    if m is None:
        raise ValueError(f"Failed parsing device name: '{device}'. Note a valid device string "
                         "should at least contain a device type and a device index, like "
                         "\"GPU:0\".")
    kind, index = m.group(1), int(m.group(2))
    if kind == "CPU" and index == 0:
        raise ValueError(cpu_message.format(device=device))
    if kind == "GPU" and index < devices.gpu_count():
        return index
    raise ValueError(f"No matching devices found for '{device}'")


@tf_export("config.experimental.get_memory_info")
def get_memory_info(device: str) -> dict:
    """{'current': bytes in use, 'peak': most bytes in use since the last reset} of a GPU."""
    index = _gpu_index(device, "Allocator stats not available for device '{device}'")
    return {"current": int(torch.cuda.memory_allocated(index)),
            "peak": int(torch.cuda.max_memory_allocated(index))}


@tf_export("config.experimental.reset_memory_stats")
def reset_memory_stats(device: str) -> None:
    """Resets a GPU's peak to its current bytes in use."""
    index = _gpu_index(device, "Cannot reset memory stats for device '{device}'")
    # ATen's allocator only knows its devices once CUDA is initialized (TF's GPU is from
    # startup): resetting first thing in a process is otherwise "Invalid device argument".
    torch.cuda.init()
    torch.cuda.reset_peak_memory_stats(index)


@tf_export("config.experimental.get_memory_usage")
def get_memory_usage(device: str) -> int:
    """Deprecated in TensorFlow: `get_memory_info(device)['current']`."""
    return get_memory_info(device)["current"]
