"""Kernel registry: ATen kernels per (OpDef, device type).

A kernel is registered as a *factory*: given a `NodeInfo` (attrs, input/output dtypes and
static shapes, torch device, runtime context) it returns `fn(*inputs) -> output` — one
ATen tensor for single-output ops, a tuple for multi-output ops, None for no outputs. The
factory runs once per plan step (or once per eager cache entry), so attribute parsing,
padding arithmetic and layout decisions happen there, not on every call.

    @kernel(math.AddV2)
    def _add(node):
        return torch.add
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ndflow.core import devices as devices_module
from ndflow.core import lazy_api
from ndflow.core.errors import InvalidArgumentError, NotFoundError, OpError
from ndflow.kernels import unsigned

_KERNELS: dict = {}
DEVICE_TYPES = ("CPU", "GPU")


@dataclass
class NodeInfo:
    """What a kernel factory knows about the node it is built for."""

    name: str
    op_def: object
    attrs: dict
    input_dtypes: list
    input_shapes: list          # TensorShapes, possibly partial
    output_dtypes: list
    output_shapes: list         # TensorShapes, possibly partial (unknown in eager mode)
    device: torch.device
    ctx: object = None          # runtime context: resources, RNG state (runtime layer)
    # The PassConfig of the compile building this kernel (passes layer): If/Case/While
    # compile their branch and body functions with it.
    pass_config: object = None
    # Per input, its value (a NumPy array) where a plan binds it to a constant (not fed), else
    # None; empty where nothing is known (eager). Kernels resolve such inputs once (the axes
    # of a reduction) instead of on every call.
    const_inputs: tuple = ()
    # Per input, the types of the graph's ops reading the same tensor (this one included);
    # empty where nothing is known (eager). A kernel can leave work for another reader (an
    # FFT convolution's spectrum for the filter gradient) only when there is one.
    input_readers: tuple = ()

    @classmethod
    def for_op(cls, op, device: torch.device, ctx=None, pass_config=None,
               const_inputs: tuple = ()) -> NodeInfo:
        """The NodeInfo of graph op `op` (an Operation), its kernel running on `device`."""
        readers = tuple(frozenset(c.type for c in t.consumers()) for t in op.inputs)
        return cls(op.name, op.op_def, op.attrs, [t.dtype for t in op.inputs],
                   [t.shape for t in op.inputs], [t.dtype for t in op.outputs],
                   [t.shape for t in op.outputs], device, ctx, pass_config, const_inputs,
                   readers)

    def read_by(self, i: int, op_type: str) -> bool:
        """Whether input `i` may be read by an op of type `op_type` too (True when unknown)."""
        return i >= len(self.input_readers) or op_type in self.input_readers[i]

    def const_input(self, i: int):
        """Input `i`'s constant value (a NumPy array), or None when it is not known."""
        return self.const_inputs[i] if i < len(self.const_inputs) else None

    @property
    def type(self) -> str:
        return self.op_def.name

    def attr(self, name):
        return self.attrs[name]


def kernel(op_def, devices=DEVICE_TYPES):
    """Decorator registering a kernel factory for `op_def` on the given device types."""
    def register(factory):
        for d in devices:
            key = (op_def, d)
            if key in _KERNELS:
                raise ValueError(f"Kernel for {op_def.name} on {d} already registered")
            _KERNELS[key] = factory
        return factory
    return register


_HOST_KERNELS: dict = {}


def host_kernel(op_def):
    """Decorator registering the kernel of `op_def` for string tensors (NumPy object arrays
    of bytes, kept on the host on any device)."""
    def register(factory):
        if op_def in _HOST_KERNELS:
            raise ValueError(f"Host kernel for {op_def.name} already registered")
        _HOST_KERNELS[op_def] = factory
        return factory
    return register


def kernel_for(node: NodeInfo, device_type: str = "CPU"):
    """The kernel factory for `node`: its string (host) kernel when a string tensor flows in
    or out and the op has one, else its ATen kernel for the device type (run on stand-in
    types for uint16/32/64, which ATen has few kernels for: kernels/unsigned.py)."""
    strings = any(getattr(d, "name", None) == "string"
                  for d in list(node.input_dtypes) + list(node.output_dtypes))
    if strings:
        host = host_kernel_of(node.op_def)
        return host if host is not None else _string_guarded(lookup(node.op_def, device_type),
                                                             node.op_def.name, device_type)
    factory = lookup(node.op_def, device_type)
    if unsigned.involves_unsigned(node):
        return lambda n: unsigned.kernel(factory, n, device_type,
                                         lambda op: lookup(op, device_type))
    return factory


def _string_guarded(factory, name: str, device_type: str):
    """An ATen kernel given strings (which only some, as StringFormat's, take): a failure
    inside it becomes TF's NotFoundError for a missing kernel instead of a torch error."""
    def fail(e):
        return NotFoundError(None, None, f"No registered '{name}' OpKernel for "
                             f"'{device_type}' devices compatible with node {{{{node {name}}}}}"
                             f" (T=string): {type(e).__name__}")

    def guarded_factory(node):
        try:
            fn = factory(node)
        except (AttributeError, TypeError, RuntimeError) as e:
            raise fail(e) from None

        def run(*args):
            try:
                return fn(*args)
            except (AttributeError, TypeError, RuntimeError) as e:
                raise fail(e) from None
        return run
    return guarded_factory


def _load(op_def) -> None:
    """Imports the kernel modules registering `op_def`'s kernels, which `import ndflow` leaves
    for an op's first run (ndflow/core/api_index.json's "kernels"; once per op)."""
    if op_def.name not in _LOADED:
        _LOADED.add(op_def.name)
        lazy_api.load_kernels(op_def.name)


_LOADED: set = set()


def lookup(op_def, device_type: str = "CPU"):
    factory = _KERNELS.get((op_def, device_type))
    if factory is None:
        _load(op_def)
        factory = _KERNELS.get((op_def, device_type))
    if factory is None:
        raise NotFoundError(None, None, f"No registered '{op_def.name}' OpKernel for "
                            f"'{device_type}' devices compatible with node "
                            f"{{{{node {op_def.name}}}}}")
    return factory


def has_kernel(op_def, device_type: str = "CPU") -> bool:
    """Whether `op_def` can run on the device type (string-only ops run on the host)."""
    if (op_def, device_type) not in _KERNELS and op_def not in _HOST_KERNELS:
        _load(op_def)
    return (op_def, device_type) in _KERNELS or op_def in _HOST_KERNELS


def host_kernel_of(op_def):
    """`op_def`'s kernel for string tensors, or None."""
    if op_def not in _HOST_KERNELS:
        _load(op_def)
    return _HOST_KERNELS.get(op_def)


def registered_ops(device_type: str = "CPU") -> list:
    lazy_api.load_all_kernels()
    return sorted(od.name for (od, d) in _KERNELS if d == device_type)


def kernels_so_far() -> tuple:
    """({(OpDef, device type): factory}, {OpDef: host factory}) as registered so far, nothing
    loaded (the index generator diffs them around each kernel module's import)."""
    return _KERNELS, _HOST_KERNELS


def no_kernel_error(node, name: str, attrs: str, registered: str) -> OpError:
    """TF's error for attrs op `name` accepts but has no kernel for: the graph executor's
    InvalidArgumentError (a graph's NodeInfo knows its inputs' readers), or the eager
    lookup's NotFoundError; `registered` lists the kernels there are."""
    if node.input_readers:
        devices = "CPU, GPU" if devices_module.gpu_count() else "CPU"
        return InvalidArgumentError(None, None, (
            f"No OpKernel was registered to support Op '{name}' used by {{{{node "
            f"{node.name}}}}} with these attrs: [{attrs}]\nRegistered devices: [{devices}]\n"
            f"Registered kernels:\n{registered}"))
    return NotFoundError(None, None, (
        f"Could not find device for node: {{{{node {name}}}}} = {name}[{attrs}]\n"
        f"All kernels registered for op {name}:\n{registered}"))
