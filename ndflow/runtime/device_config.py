"""Physical and logical devices (`tf.config.list_physical_devices`, logical CPU splits).

A CPU can be split into several logical devices (`/device:CPU:0`, `/device:CPU:1`, ...) as
TensorFlow allows for testing multi-device code on one machine; all of them run on ATen's
CPU device. GPUs are the CUDA devices ATen sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.core import devices
from ndflow.core.api_export import tf_export


@tf_export("config.PhysicalDevice")
@dataclass(frozen=True)
class PhysicalDevice:
    name: str
    device_type: str


@tf_export("config.LogicalDevice")
@dataclass(frozen=True)
class LogicalDevice:
    name: str
    device_type: str


@tf_export("config.LogicalDeviceConfiguration", "config.experimental.VirtualDeviceConfiguration")
@dataclass(frozen=True)
class LogicalDeviceConfiguration:
    memory_limit: int | None = None
    experimental_priority: int | None = None


_logical: dict = {}     # PhysicalDevice -> list of LogicalDeviceConfiguration
_visible: dict = {}     # device_type -> list of PhysicalDevice (None = all)
_initialized = False
_memory_growth: dict = {}   # GPU PhysicalDevice -> bool, as set_memory_growth left it


@tf_export("config.experimental.list_physical_devices", "config.list_physical_devices")
def list_physical_devices(device_type: str | None = None) -> list:
    """The physical devices this process can use: the CPU and each CUDA GPU ATen sees.

    Args:
      device_type: optional 'CPU' or 'GPU' (any case); None lists every type.

    Returns:
      A list of `tf.config.PhysicalDevice`.

    Example:
      >>> tf.config.list_physical_devices("CPU")
      [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    found = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    found += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
              for i in range(devices.gpu_count())]
    return [d for d in found if device_type is None or d.device_type == device_type.upper()]


@tf_export("config.experimental.get_visible_devices", "config.get_visible_devices")
def get_visible_devices(device_type: str | None = None) -> list:
    """The physical devices the runtime may use (all of them unless restricted).

    Args:
      device_type: optional 'CPU' or 'GPU' (any case); None lists every type.

    Returns:
      A list of `tf.config.PhysicalDevice`, as `set_visible_devices` left it.

    Example:
      >>> tf.config.get_visible_devices("CPU")
      [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    out = []
    for d in list_physical_devices(device_type):
        visible = _visible.get(d.device_type)
        if visible is None or d in visible:
            out.append(d)
    return out


@tf_export("config.experimental.set_visible_devices", "config.set_visible_devices")
def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Restricts the physical devices the runtime may use.

    Must be called before the devices are initialized (before the first
    `list_logical_devices` or any op placement).

    Args:
      devices: a `tf.config.PhysicalDevice` or a list of them.
      device_type: optional 'CPU' or 'GPU': only devices of this type are restricted.

    Raises:
      RuntimeError: if the devices are already initialized.
      ValueError: if the list would hide the CPU.
    """
    if _initialized:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    devs = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for t in ({device_type.upper()} if device_type else {"CPU", "GPU"}):
        if t == "CPU" and not any(d.device_type == "CPU" for d in devs):
            raise ValueError("CPU devices cannot be hidden")
        _visible[t] = [d for d in devs if d.device_type == t]


@tf_export("config.experimental.set_virtual_device_configuration",
          "config.set_logical_device_configuration")
def set_logical_device_configuration(device: PhysicalDevice, logical_devices) -> None:
    """Splits a physical device into logical devices.

    A CPU split into N logical devices gives `/device:CPU:0` ... `/device:CPU:N-1`, all running
    on the one host CPU (useful for testing multi-device code). Must be called before the
    devices are initialized.

    Args:
      device: the `tf.config.PhysicalDevice` to split.
      logical_devices: a list of `tf.config.LogicalDeviceConfiguration`, one per logical
        device; None removes the split.

    Raises:
      RuntimeError: if the devices are already initialized.
    """
    if _initialized:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    if logical_devices is None:
        _logical.pop(device, None)
    else:
        _logical[device] = list(logical_devices)


@tf_export("config.experimental.get_virtual_device_configuration",
           "config.get_logical_device_configuration")
def get_logical_device_configuration(device: PhysicalDevice):
    """The logical-device split set for a physical device.

    Args:
      device: a `tf.config.PhysicalDevice`.

    Returns:
      The list of `tf.config.LogicalDeviceConfiguration` given to
      `set_logical_device_configuration`, or None when the device is not split.

    Example:
      >>> cpu = tf.config.list_physical_devices("CPU")[0]
      >>> print(tf.config.get_logical_device_configuration(cpu))
      None
    """
    return _logical.get(device)


@tf_export("config.experimental.list_logical_devices", "config.list_logical_devices")
def list_logical_devices(device_type: str | None = None) -> list:
    """The logical devices the runtime uses; calling this initializes the devices.

    Afterwards the visible devices and their splits can no longer change.

    Args:
      device_type: optional 'CPU' or 'GPU' (any case); None lists every type.

    Returns:
      A list of `tf.config.LogicalDevice` named `/device:CPU:0`, `/device:GPU:0`, ...

    Example:
      >>> tf.config.list_logical_devices("CPU")[0].name
      '/device:CPU:0'
    """
    global _initialized
    _initialized = True
    out = []
    for d in get_visible_devices(device_type):
        n = len(_logical.get(d, [])) or 1
        start = len([x for x in out if x.device_type == d.device_type])
        # TF names local logical devices without the job/replica/task prefix
        out += [LogicalDevice(f"/device:{d.device_type}:{start + i}", d.device_type)
                for i in range(n)]
    return out


def _known(device) -> None:
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")


@tf_export("config.experimental.set_memory_growth")
def set_memory_growth(device, enable: bool) -> None:
    """Sets whether GPU memory grows on demand for a GPU, as TF records it (ATen's caching
    allocator grows on demand either way).

    Args:
      device: a GPU `tf.config.PhysicalDevice`.
      enable: whether memory growth is enabled.

    Raises:
      ValueError: for a device that is not a physical device of this process, one split into
        logical devices, or one that is not a GPU (the CPU).
      RuntimeError: to change the setting once the devices are initialized.
    """
    _known(device)
    if device in _logical:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    if _memory_growth.get(device) == enable:
        return
    if _initialized:
        raise RuntimeError("Physical devices cannot be modified after being initialized")
    _memory_growth[device] = enable


@tf_export("config.experimental.get_memory_growth")
def get_memory_growth(device) -> bool | None:
    """Whether memory growth was enabled for a GPU by `set_memory_growth`.

    Args:
      device: a GPU `tf.config.PhysicalDevice`.

    Returns:
      The value last set, or None when it was never set (as TF's).

    Raises:
      ValueError: for a device that is not a physical device of this process.
      KeyError: for a device that is not a GPU (the CPU), as TF's.
    """
    _known(device)
    if device.device_type != "GPU":
        raise KeyError(device)
    return _memory_growth.get(device)
