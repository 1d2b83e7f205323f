"""The memory plan of an execution plan: how many bytes of intermediates are live at once.

A Plan runs its kernels in a fixed order and drops each intermediate after its last use, so
the bytes live during each kernel are known from the order and the sizes alone:

    live(step) = intermediates still needed + the step's outputs (its inputs are alive
                 while it runs); peak = max over steps

Feeds and constants are not intermediates (the caller and the plan own them). Outputs that
nobody reads are counted during their step only; fetched values stay live to the end.

- Static: when every intermediate's shape is fully known after shape inference, sizes are
  `num_elements * dtype size`; outputs of ops that only forward or view their input
  (Identity, Reshape, ...) count zero, since they share its buffer.
- Measured: otherwise the plan's first run records each kernel output's buffer (ATen
  storage), and the same walk counts each buffer once while any value using it is live
  (views and forwarded values share it; feeds, constants and variables are not counted).
  Values that are not ATen tensors (strings, lists, resources) count zero. A plan whose
  shapes change between runs keeps the first run's figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Ops whose output is their input or an ATen view of it: no new buffer.
_ALIASING_OPS = frozenset({"Identity", "StopGradient", "Snapshot", "Reshape", "ExpandDims",
                           "Squeeze", "PlaceholderWithDefault", "EnsureShape"})


@dataclass(frozen=True)
class Step:
    """One kernel of a plan: its op, the outputs it makes (with whether anyone reads them)
    and the values whose last use it is."""

    op: object
    outputs: tuple   # (symbolic tensor, kept: bool)
    frees: tuple     # symbolic tensors that die after this step
    inplace_of: object = None  # the input whose buffer output 0 overwrites (runtime/inplace.py)


@dataclass(frozen=True)
class MemoryPlan:
    """`peak_bytes`: the most intermediate bytes live at once (None until known);
    `measured`: sizes came from a run rather than static shapes."""

    peak_bytes: int | None
    measured: bool
    num_steps: int

    def as_dict(self) -> dict:
        return {"peak": self.peak_bytes, "measured": self.measured, "steps": self.num_steps}


def reads_state(op) -> bool:
    """Whether `op` hands out a variable's own buffer (ReadVariableOp returns the value)."""
    return op.type == "ReadVariableOp"


def static_size(t) -> int | None:
    """Bytes of a symbolic tensor's buffer from its static shape (None when unknown)."""
    if t.op.type in _ALIASING_OPS or reads_state(t.op):
        return 0
    dt = t.dtype
    if dt.torch_dtype is None:  # strings, resources, variants: host objects, not buffers
        return 0
    if not t.shape.is_fully_defined():
        return None
    return t.shape.num_elements() * dt.size


def static_plan(steps: list) -> MemoryPlan:
    """The plan from static shapes, or one with peak None when a size is unknown. A value
    of an aliasing op holds its input's buffer (keyed by the tensor that made it)."""
    produced = {t for s in steps for t, _ in s.outputs}
    buffers: dict = {}
    for s in steps:
        if s.inplace_of is not None:
            buffers[s.outputs[0][0]] = buffers.get(s.inplace_of)
            continue
        for t, _ in s.outputs:
            if t.op.type in _ALIASING_OPS and t.op.inputs:
                buffers[t] = buffers.get(t.op.inputs[0]) if t.op.inputs[0] in produced \
                    else None
                continue
            size = static_size(t)
            if size is None:
                return MemoryPlan(None, False, len(steps))
            buffers[t] = (t, size) if size else None
    return MemoryPlan(_walk(steps, buffers.get), False, len(steps))


def measured_plan(steps: list, buffers: dict) -> MemoryPlan:
    """The plan from a run: `buffers` maps each symbolic output to (buffer key, bytes) of
    the ATen value it had, or None for non-tensor values and foreign buffers."""
    return MemoryPlan(_walk(steps, lambda t: buffers.get(t)), True, len(steps))


def _walk(steps: list, buffer_of) -> int:
    """Peak live bytes; `buffer_of(t)` -> (key, bytes) or None. A buffer counts once while
    any value holding it is live."""
    holders: dict = {}  # buffer key -> number of live values using it
    size_of: dict = {}
    live = peak = 0

    def hold(t):
        nonlocal live
        b = buffer_of(t)
        if b is None:
            return
        key, n = b
        if holders.get(key, 0) == 0:
            live += n
            size_of[key] = n
        holders[key] = holders.get(key, 0) + 1

    def release(t):
        nonlocal live
        b = buffer_of(t)
        if b is None:
            return
        key = b[0]
        holders[key] -= 1
        if holders[key] == 0:
            live -= size_of[key]

    for s in steps:
        for t, _ in s.outputs:
            hold(t)
        peak = max(peak, live)
        for t, kept in s.outputs:
            if not kept:
                release(t)
        for t in s.frees:
            release(t)
    return peak


def buffer_key(value, foreign: set):
    """(storage key, bytes) of an ATen value that is not one of the `foreign` storages
    (feeds, constants, variables), else None."""
    if not isinstance(value, torch.Tensor) or value.device.type == "meta":
        return None
    storage = value.untyped_storage()
    key = (storage.device.type, storage.data_ptr())
    if key in foreign or storage.nbytes() == 0:
        return None
    return key, storage.nbytes()


def storage_key(value):
    """The storage key of an ATen value (None for anything else)."""
    if not isinstance(value, torch.Tensor):
        return None
    storage = value.untyped_storage()
    return (storage.device.type, storage.data_ptr())
