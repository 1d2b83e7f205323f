"""Physical and logical devices (`tf.config.list_physical_devices`, logical CPU splits).

A CPU can be split into several logical devices (`/device:CPU:0`, `/device:CPU:1`, ...) as
TensorFlow allows for testing multi-device code on one machine; all of them run on ATen's
CPU device. GPUs are the CUDA devices ATen sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.core import devices


@dataclass(frozen=True)
class PhysicalDevice:
    name: str
    device_type: str


@dataclass(frozen=True)
class LogicalDevice:
    name: str
    device_type: str


@dataclass(frozen=True)
class LogicalDeviceConfiguration:
    memory_limit: int | None = None
    experimental_priority: int | None = None


_logical: dict = {}     # PhysicalDevice -> list of LogicalDeviceConfiguration
_visible: dict = {}     # device_type -> list of PhysicalDevice (None = all)
_initialized = False


def list_physical_devices(device_type: str | None = None) -> list:
    found = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    found += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
              for i in range(devices.gpu_count())]
    return [d for d in found if device_type is None or d.device_type == device_type.upper()]


def get_visible_devices(device_type: str | None = None) -> list:
    out = []
    for d in list_physical_devices(device_type):
        visible = _visible.get(d.device_type)
        if visible is None or d in visible:
            out.append(d)
    return out


def set_visible_devices(devs, device_type: str | None = None) -> None:
    if _initialized:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    devs = [devs] if isinstance(devs, PhysicalDevice) else list(devs)
    for t in ({device_type.upper()} if device_type else {"CPU", "GPU"}):
        if t == "CPU" and not any(d.device_type == "CPU" for d in devs):
            raise ValueError("CPU devices cannot be hidden")
        _visible[t] = [d for d in devs if d.device_type == t]


def set_logical_device_configuration(device: PhysicalDevice, logical_devices) -> None:
    if _initialized:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    if logical_devices is None:
        _logical.pop(device, None)
    else:
        _logical[device] = list(logical_devices)


def get_logical_device_configuration(device: PhysicalDevice):
    return _logical.get(device)


def list_logical_devices(device_type: str | None = None) -> list:
    global _initialized
    _initialized = True
    out = []
    for d in get_visible_devices(device_type):
        n = len(_logical.get(d, [])) or 1
        start = len([x for x in out if x.device_type == d.device_type])
        out += [LogicalDevice(f"/job:localhost/replica:0/task:0/device:{d.device_type}:{start + i}",
                              d.device_type) for i in range(n)]
    return out
