"""Device names as TensorFlow writes them, and their ATen devices.

Accepted: `/device:CPU:0`, `/CPU:0`, `/cpu:0`, `/GPU:1`, `gpu`, `/job:localhost/replica:0/task:0/device:GPU:0`,
and partial specs such as `/device:GPU` (index unset). Canonical form: `/device:CPU:0`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from ndflow.core.errors import InvalidArgumentError

_FIELD = re.compile(r"^(job|replica|task|device):(.*)$")
_DEVICE = re.compile(r"^([A-Za-z_]+)(?::(\d+|\*))?$")
KNOWN_TYPES = ("CPU", "GPU")


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
        fields = {}
        parts = [p for p in spec.strip().split("/") if p]
        for part in parts:
            m = _FIELD.match(part)
            if m:
                key, val = m.group(1), m.group(2)
                if key == "device":
                    fields.update(_parse_device(val, spec))
                elif key == "job":
                    fields["job"] = val
                else:
                    if not val.isdigit():
                        raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
                    fields[key] = int(val)
            else:
                fields.update(_parse_device(part, spec))
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


def _parse_device(text: str, spec: str) -> dict:
    m = _DEVICE.match(text)
    if not m:
        raise ValueError(f"Unknown attribute: '{text}' in '{spec}'")
    dtype = m.group(1).upper()
    idx = m.group(2)
    return {"device_type": dtype, "device_index": None if idx in (None, "*") else int(idx)}


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


def to_torch_device(spec: str | None) -> torch.device:
    """`/device:CPU:0` -> cpu, `/GPU:n` -> cuda:n. Unknown types raise InvalidArgumentError."""
    d = DeviceSpec.from_string(spec or "")
    if d.device_type in (None, "CPU"):
        return torch.device("cpu")
    if d.device_type == "GPU":
        return torch.device("cuda", d.device_index or 0)
    raise InvalidArgumentError(None, None, f"Unknown device type '{d.device_type}' in '{spec}'")
