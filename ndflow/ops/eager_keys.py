"""The eager fast path's cache keys (ops/apply.py): a hashable key per (op, input dtypes or
Python scalar types, attrs), and which Python scalars another tensor input types."""

from __future__ import annotations

import numpy as np

from ndflow.core.tensor import EagerTensor
from ndflow.ops.op_def import OpDef


def freeze_attr(v):
    """A hashable form of an attr value (lists -> tuples, arrays -> bytes), for cache keys."""
    if isinstance(v, (list, tuple)):
        return tuple(freeze_attr(x) for x in v)
    if isinstance(v, np.ndarray):
        return (v.dtype.str, v.shape, v.tobytes())
    return v


_SCALAR_TYPES = (float, int, bool)


def eager_key(op_def: OpDef, inputs, attrs):
    """The fast-path key, or None unless inputs are EagerTensors (or Python scalars)."""
    dts = []
    for t in inputs:
        tt = type(t)
        if tt is EagerTensor:
            dts.append(t.dtype)
        elif tt is float or tt is int or tt is bool:
            dts.append(tt)
        else:
            return None
    if not attrs:
        return (op_def, tuple(dts), ())
    items = []
    for k, v in attrs.items():
        if isinstance(v, (list, tuple, np.ndarray)):
            v = freeze_attr(v)
        items.append((k, v))
    return (op_def, tuple(dts), tuple(items))


def has_list_args(op_def: OpDef) -> bool:
    flag = _LIST_ARGS.get(op_def)
    if flag is None:
        flag = _LIST_ARGS[op_def] = any(a.is_list for a in op_def.inputs)
    return flag


_LIST_ARGS: dict = {}


def scalar_dtypes(op_def: OpDef, inputs, final: dict):
    """Per input: the dtype a Python scalar converts to, when another *tensor* input fixes it
    (`x + 1.0`); None for tensors. False when some scalar decides its own dtype (`1 + 2`)."""
    args = op_def.inputs
    tensor_attrs = {a.type_attr for a, t in zip(args, inputs) if type(t) is EagerTensor}
    out = []
    for a, t in zip(args, inputs):
        if type(t) is EagerTensor:
            out.append(None)
        elif a.dtype is not None:
            out.append(a.dtype)
        elif a.type_attr in tensor_attrs:
            out.append(final[a.type_attr])
        else:
            return False
    return out
