"""Eager execution: run one op now, with the same OpDef rules and kernels as graphs.

Kernels are built once per (op, attrs, input dtypes and shapes, device) and cached, so the
per-op cost on a cache hit is a dict lookup, the ATen call and the result wrapping.
"""

from __future__ import annotations

import torch

from ndflow.core import context, devices
from ndflow.core.errors import InvalidArgumentError, NotFoundError, OpError
from ndflow.core.tensor import EagerTensor
from ndflow.kernels import denormals, registry
from ndflow.ops.apply import EagerOperation, infer_shapes, output_dtypes
from ndflow.ops.eager_keys import freeze_attr
from ndflow.runtime import math_modes
from ndflow.runtime.state import EAGER_CONTEXT
from ndflow.runtime.threads import follow_free_cores

_TorchTensor = torch.Tensor
_SUBNORMAL, _ONE, _flush, _unflush = (denormals.SUBNORMAL, denormals.ONE, denormals.flush,
                                      denormals.leave)
_cache: dict = {}
_device_cache: dict = {}
_MAX_CACHE = 20000


def _device(spec: str):
    d = _device_cache.get(spec)
    if d is None:
        dev = devices.eager_placement(spec, context.soft_device_placement())
        d = _device_cache[spec] = (dev, "GPU" if dev.type == "cuda" else "CPU")
    return d


def _input_key(t):
    v = t._value
    return (t.dtype, tuple(v.shape)) if isinstance(v, torch.Tensor) else (t.dtype, None)


def build_kernel(op_def, name, inputs, attrs, device_spec: str, ctx=EAGER_CONTEXT):
    """Shape-checks the op and instantiates its kernel: (fn, output dtypes)."""
    math_modes.ensure_applied()  # TF32/cuDNN switches, once per process
    out_dtypes = output_dtypes(op_def, attrs)
    shapes = infer_shapes(op_def, name, inputs, attrs, len(out_dtypes), eager=True)
    dev, dev_type = _device(device_spec)
    node = registry.NodeInfo(name or op_def.name, op_def, attrs, [t.dtype for t in inputs],
                             [t.shape for t in inputs], out_dtypes, shapes, dev, ctx)
    return registry.kernel_for(node, dev_type)(node), out_dtypes


def eager_execute(op_def, inputs, attrs, name=None, attrs_key=None) -> EagerOperation:
    """Runs one op now. `attrs_key` (from `apply_op`'s fast path) identifies (op, input
    dtypes, attrs) so the kernel cache key needs only the input shapes and the device."""
    follow_free_cores()
    spec = context.eager_device()
    vals = [t._value for t in inputs]
    try:
        if attrs_key is not None:
            key = (attrs_key, tuple([v.shape if type(v) is _TorchTensor else None
                                     for v in vals]), spec)
        else:
            key = (op_def, tuple((k, freeze_attr(v)) for k, v in attrs.items()),
                   tuple(_input_key(t) for t in inputs), spec)
        entry = _cache.get(key)
    except TypeError:  # unhashable attr
        key, entry = None, None
    if entry is None:
        try:
            fn, out_dtypes = build_kernel(op_def, name, inputs, attrs, spec)
        except OpError as e:   # a kernel TF fails to construct (Cast string to float);
            # TF's "Could not find device for node" (no kernel) names no [Op:]
            if "[Op:" in e.message or isinstance(e, NotFoundError):
                raise
            raise type(e)(None, None, f"{e.message} [Op:{op_def.name}]"
                          + (f" name: {name}" if name else "")) from None
        dev = _device(spec)[0]
        entry = (fn, out_dtypes, len(out_dtypes), None if dev.type == "cpu" else dev)
        if key is not None:
            if len(_cache) > _MAX_CACHE:
                _cache.clear()
            _cache[key] = entry
    fn, out_dtypes, n, dev = entry
    if dev is not None:
        vals = [v.to(dev) if isinstance(v, torch.Tensor) and v.device != dev else v
                for v in vals]
    flushed = _SUBNORMAL * _ONE != 0.0   # TF runs kernels with subnormals flushed (denormals)
    if flushed:
        _flush()
    try:
        res = fn(*vals)
    except OpError as e:
        raise type(e)(None, None, f"{e.message} [Op:{op_def.name}]"
                      + (f" name: {name}" if name else "")) from None
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        raise InvalidArgumentError(None, None, f"{_first_line(e)} [Op:{op_def.name}]"
                                   + (f" name: {name}" if name else "")) from None
    finally:
        if flushed:
            _unflush()
    if n == 1:
        outputs = [EagerTensor(res, out_dtypes[0])]
    elif n == 0:
        outputs = []
    else:
        outputs = [EagerTensor(r, d) for r, d in zip(res, out_dtypes)]
    return EagerOperation(op_def, name, inputs, outputs, attrs, spec)


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


context.hooks.eager_execute = eager_execute

# Debugging switches (tf.debugging.set_log_device_placement, enable_check_numerics) wrap
# `eager_execute` while they are on; with none on, ops call it directly: no cost when off.
_wrappers: dict = {}


def set_wrapper(key: str, wrap) -> None:
    """Installs `wrap(execute) -> execute` under `key` (None removes it); the hook becomes
    `eager_execute` wrapped by each installed wrapper, in the order of their keys (the
    first key outermost)."""
    if wrap is None:
        _wrappers.pop(key, None)
    else:
        _wrappers[key] = wrap
    fn = eager_execute
    for k in sorted(_wrappers, reverse=True):
        fn = _wrappers[k](fn)
    context.hooks.eager_execute = fn


def device_of(spec: str):
    """The ATen device an eager op with device scope `spec` runs on."""
    return _device(spec)[0]


def _placement_changed() -> None:
    _cache.clear()
    _device_cache.clear()


context.hooks.placement_changed = _placement_changed
