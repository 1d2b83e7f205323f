"""Device names as TensorFlow writes them, and their ATen devices.

Parsed by TensorFlow's rules (`DeviceSpec.from_string`): `/device:CPU:0`, `/CPU:0`, `/cpu:0`,
`/GPU:1`, `gpu`, `/job:localhost/replica:0/task:0/device:GPU:0`; any type is allowed after
`device:` (`/device:FOO:0` parses, placement then decides), a bare `TYPE[:N]` only for the
short types below. Anything else is TF's ValueError. Canonical form: `/device:CPU:0`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError

KNOWN_TYPES = ("CPU", "GPU")  # the types ndflow can place ops on
SHORT_TYPES = ("CPU", "GPU", "TPU", "CUSTOM", "EPU")  # TF's types usable without `device:`


@tf_export("DeviceSpec", v1=["DeviceSpec"])
@dataclass(frozen=True)
class DeviceSpec:
    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str) -> DeviceSpec:
        if spec is None or spec == "":
            return cls()
        if not isinstance(spec, str):
            raise ValueError(f"Device specification must be a string, got {spec!r}")
        fields: dict = {}
        for y in (part.split(":") for part in spec.split("/")):
            ly = len(y)
            if ly == 2 and y[0] == "job":
                fields["job"] = y[1]
            elif ly == 2 and y[0] in ("replica", "task"):
                fields[y[0]] = int(y[1])  # TF: "invalid literal for int() with base 10: 'x'"
            elif ly in (1, 2) and y[0].upper() in SHORT_TYPES or ly == 3 and y[0] == "device":
                if "device_type" in fields:
                    raise ValueError("Multiple device types are not allowed while parsing "
                                     f"the device spec: {spec}.")
                dtype, idx = (y[0], y[1:]) if ly < 3 else (y[1], y[2:])
                fields["device_type"] = dtype.upper()
                fields["device_index"] = None if not idx or idx[0] == "*" else int(idx[0])
            elif y[0] != "":
                raise ValueError(f"Unknown attribute '{y[0]}' is encountered while parsing "
                                 f"the device spec: '{spec}'.")
        return cls(**fields)

    def make_merged_spec(self, other: DeviceSpec) -> DeviceSpec:
        """Fields set in `other` override ours (as nested `tf.device` scopes do)."""
        return DeviceSpec(
            other.job if other.job is not None else self.job,
            other.replica if other.replica is not None else self.replica,
            other.task if other.task is not None else self.task,
            other.device_type if other.device_type is not None else self.device_type,
            other.device_index if other.device_index is not None
            else (self.device_index if other.device_type in (None, self.device_type) else None),
        )

    def to_string(self) -> str:
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            idx = "*" if self.device_index is None else str(self.device_index)
            out += f"/device:{self.device_type}:{idx}"
        return out

    def __str__(self):
        return self.to_string()


def canonical(spec: str | None) -> str:
    """Canonical short device string: '' for unset, else `/device:TYPE:N`."""
    d = DeviceSpec.from_string(spec or "")
    if d.device_type is None:
        return ""
    return f"/device:{d.device_type}:{0 if d.device_index is None else d.device_index}"


def device_type(spec: str | None) -> str:
    d = DeviceSpec.from_string(spec or "")
    return d.device_type or "CPU"


def gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def is_available(spec: str | None) -> bool:
    """Whether ops can be placed on `spec` here: any CPU (logical CPUs share ATen's CPU), a GPU
    index ATen sees. An unknown type (`/device:FOO:0`) or a missing GPU is not."""
    d = DeviceSpec.from_string(spec or "")
    if d.device_type in (None, "CPU"):
        return True
    return d.device_type == "GPU" and (d.device_index or 0) < gpu_count()


@functools.lru_cache(maxsize=256)   # every eager op and value asks: parsing spec took ~2 us
def eager_placement(spec: str | None, soft: bool) -> torch.device:
    """The ATen device an eager op or value asking for `spec` goes to: TF 2 eager placement
    (an unavailable device means the CPU under soft placement, else InvalidArgumentError)."""
    if is_available(spec):
        return to_torch_device(spec)
    if soft:
        return torch.device("cpu")
    raise InvalidArgumentError(
        None, None, "Could not satisfy device specification '/job:localhost/replica:0/task:0"
        f"{canonical(spec)}'. enable_soft_placement=0. Supported device types [CPU]. All "
        "available devices [/job:localhost/replica:0/task:0/device:CPU:0].")


def to_torch_device(spec: str | None) -> torch.device:
    """`/device:CPU:0` -> cpu, `/GPU:n` -> cuda:n. Unknown types raise InvalidArgumentError."""
    d = DeviceSpec.from_string(spec or "")
    if d.device_type in (None, "CPU"):
        return torch.device("cpu")
    if d.device_type == "GPU":
        return torch.device("cuda", d.device_index or 0)
    raise InvalidArgumentError(None, None, f"Unknown device type '{d.device_type}' in '{spec}'")


def copy_to(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """`t` on `dev`. A host tensor goes to a GPU through pinned memory, without the host
    waiting for the device, as TensorFlow's host-to-device copies are staged: ATen's plain copy
    from pageable memory synchronizes, emptying the queue of kernels the host had issued. (The
    pinned buffer is a copy, so a later in-place write to `t` cannot reach the transfer.)"""
    if t.device.type == "cpu" and dev.type == "cuda":
        return t.pin_memory().to(dev, non_blocking=True)
    return t.to(dev)
