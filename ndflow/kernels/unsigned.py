"""Kernels of the unsigned 16-, 32- and 64-bit integers, which ATen stores (torch.uint16/32/64)
but has few kernels for: no add, compare, maximum, shift or division on them.

Each op runs its own kernel, built for a stand-in signed type, with its operands converted
around it, by what the op does with the values:
- BITS: two's complement arithmetic gives the unsigned results bit for bit (add, subtract,
  multiply, sums, products, bitwise ops, equality, the random bits, every op that only moves
  values). The operands are reinterpreted as the signed type of the same width (a view), and
  so are the results.
- ORDER: comparisons and the ops that select by order (maximum, max, argmax, top_k, segment
  max). Flipping the top bit maps the unsigned order onto the signed order of the same width;
  the selected values are flipped back.
- VALUE: division, remainder and the mean, whose results depend on the values. uint16 and
  uint32 are zero-extended into int32 and int64, which hold every value, and the results
  narrowed back; uint64, which no ATen type holds, divides in NumPy.
- NATIVE: Cast and Bitcast, whose kernels ATen has for these types.
The shifts clamp the shift amount to [0, bits - 1] as unsigned numbers, as TensorFlow does,
and shift right logically.

An op that TensorFlow declares for these types but has no kernel for here (none listed)
raises TF's NotFoundError, as TensorFlow does for ops without a kernel of the type.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError, NotFoundError
from ndflow.ops.reduction import Sum

_SIGNED = {dtypes.uint16: dtypes.int16, dtypes.uint32: dtypes.int32,
           dtypes.uint64: dtypes.int64}
_WIDER = {dtypes.uint16: dtypes.int32, dtypes.uint32: dtypes.int64}
_TOP_BIT = {dtypes.uint16: -(1 << 15), dtypes.uint32: -(1 << 31), dtypes.uint64: -(1 << 63)}

BITS, ORDER, VALUE, NATIVE = "bits", "order", "value", "native"
POLICY = {
    **dict.fromkeys((
        "AddV2", "Add", "Sub", "Mul", "AddN", "Square", "Sum", "Prod", "Cumsum", "Cumprod",
        "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "PopulationCount", "Equal",
        "NotEqual", "SegmentSum", "SegmentProd", "UnsortedSegmentSum", "UnsortedSegmentProd",
        "TensorScatterAdd", "TensorScatterSub", "ResourceScatterAdd", "ResourceScatterSub",
        "StatelessRandomUniformFullInt", "StatefulUniformFullInt",
        "StatelessRandomUniformFullIntV2"), BITS),
    **dict.fromkeys((
        "Less", "LessEqual", "Greater", "GreaterEqual", "Maximum", "Minimum", "Max", "Min",
        "ArgMax", "ArgMin", "TopKV2", "SegmentMax", "SegmentMin", "UnsortedSegmentMax",
        "UnsortedSegmentMin", "TensorScatterMax", "TensorScatterMin"), ORDER),
    **dict.fromkeys(("FloorDiv", "TruncateDiv", "FloorMod", "Mean"), VALUE),
    **dict.fromkeys(("Cast", "Bitcast"), NATIVE),
}


def same_width_signed(dt):
    """The ATen type whose two's complement bits are `dt`'s sums (None: `dt` is not one of
    these unsigned types)."""
    signed = _SIGNED.get(dt)
    return None if signed is None else signed.torch_dtype


def involves_unsigned(node) -> bool:
    return any(d in _SIGNED for d in (*node.input_dtypes, *node.output_dtypes))


def _policy(node, device_type: str) -> str:
    name = node.op_def.name
    if name in POLICY:
        return POLICY[name]
    if node.op_def.is_functional or any(d in (dtypes.resource, dtypes.variant)
                                        for d in (*node.input_dtypes, *node.output_dtypes)):
        # what holds or passes values on (variables, lists, datasets, function calls) keeps
        # their type: the ops that read them convert them
        return NATIVE
    # an op whose type attrs take any type (Identity, Reshape, GatherV2, ConcatV2, ...) only
    # moves values: their bits are the values
    constrained = [a for a in node.op_def.attrs.values()
                   if a.allowed is not None and _names_unsigned(node.attrs.get(a.name))]
    if not constrained:
        return BITS
    types = ", ".join(f"{a.name}=DT_{node.attrs[a.name].name.upper()}" for a in constrained
                      if isinstance(node.attrs.get(a.name), dtypes.DType))
    raise NotFoundError(None, None, f"No registered '{name}' OpKernel for '{device_type}' "
                        f"devices compatible with node {{{{node {node.name}}}}}\n\t"
                        f".  Registered:  <no registered kernels for {types}>")


def _names_unsigned(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(v in _SIGNED for v in value)
    return value in _SIGNED


# -- the operand conversions of each policy --------------------------------------------------


def _stand_in(policy: str, dt):
    if dt not in _SIGNED:
        return dt
    if policy == VALUE and dt in _WIDER:
        return _WIDER[dt]
    return _SIGNED[dt]


def _to_stand_in(policy: str, dt):
    """fn(ATen tensor of dtype `dt`) -> its stand-in operand, or None to pass it as it is."""
    if dt not in _SIGNED:
        return None
    signed = _SIGNED[dt].torch_dtype
    if policy == ORDER:
        top = _TOP_BIT[dt]
        return lambda x: torch.bitwise_xor(x.view(signed), top)
    if policy == VALUE and dt in _WIDER:
        unsigned, wide = dt.torch_dtype, _WIDER[dt].torch_dtype
        return lambda x: x.view(unsigned).to(wide)   # zero-extended
    return lambda x: x.view(signed)


def _from_stand_in(policy: str, dt):
    """fn(stand-in result) -> the result as dtype `dt`, or None to return it as it is."""
    if dt not in _SIGNED:
        return None
    unsigned, signed = dt.torch_dtype, _SIGNED[dt].torch_dtype
    if policy == ORDER:
        top = _TOP_BIT[dt]
        return lambda y: torch.bitwise_xor(y, top).view(unsigned)
    if policy == VALUE and dt in _WIDER:
        return lambda y: y.to(signed).view(unsigned)  # the values fit: no wrap
    return lambda y: y.view(unsigned)


def _const_stand_in(policy: str, arr, dt):
    if arr is None or dt not in _SIGNED:
        return arr
    signed = _SIGNED[dt].np_dtype
    if policy == ORDER:
        return arr.view(signed) ^ signed.type(_TOP_BIT[dt])
    if policy == VALUE and dt in _WIDER:
        return arr.astype(_WIDER[dt].np_dtype)
    return arr.view(signed)


def _retyped(node, policy: str):
    """`node` as the stand-in kernel sees it: its unsigned types replaced."""
    def sub(v):
        if isinstance(v, dtypes.DType):
            return _stand_in(policy, v)
        if isinstance(v, (list, tuple)) and any(isinstance(e, dtypes.DType) for e in v):
            return type(v)(_stand_in(policy, e) for e in v)
        return v
    consts = tuple(_const_stand_in(policy, c, d)
                   for c, d in zip(node.const_inputs, node.input_dtypes))
    return dataclasses.replace(
        node, attrs={k: sub(v) for k, v in node.attrs.items()},
        input_dtypes=[sub(d) for d in node.input_dtypes],
        output_dtypes=[sub(d) for d in node.output_dtypes], const_inputs=consts)


# -- kernels ---------------------------------------------------------------------------------


def kernel(factory, node, device_type: str, lookup):
    """The kernel of `node`, one of whose types is uint16, uint32 or uint64, built from its
    op's kernel `factory`; `lookup(op_def)` finds another op's kernel factory."""
    name = node.op_def.name
    if name in _SPECIAL:
        return _SPECIAL[name](node)
    policy = _policy(node, device_type)
    if policy == NATIVE:
        return factory(node)
    if policy == VALUE and any(d is dtypes.uint64 for d in node.input_dtypes):
        return _UINT64_VALUE[name](factory, node, lookup)
    inner = factory(_retyped(node, policy))
    ins = [_to_stand_in(policy, d) for d in node.input_dtypes]
    outs = [_from_stand_in(policy, d) for d in node.output_dtypes]
    ins_at = [(i, f) for i, f in enumerate(ins) if f is not None]
    outs_at = [(i, f) for i, f in enumerate(outs) if f is not None]
    single = len(node.output_dtypes) == 1

    def run(*args):
        if ins_at:
            args = list(args)
            for i, f in ins_at:
                if i < len(args) and isinstance(args[i], torch.Tensor):
                    args[i] = f(args[i])
        result = inner(*args)
        if not outs_at or result is None:
            return result
        if single:
            return outs_at[0][1](result)
        result = list(result)
        for i, f in outs_at:
            result[i] = f(result[i])
        return tuple(result)
    return run


def _shift_amount(y: torch.Tensor, dt) -> torch.Tensor:
    """TF's clamp of a shift amount to [0, bits - 1], the amount read as unsigned."""
    bits = dt.size * 8
    signed = y.view(_SIGNED[dt].torch_dtype)
    # a negative signed view is an amount of 2^(bits-1) or more
    return torch.where(signed < 0, bits - 1, signed.clamp(0, bits - 1))


def _left_shift(node):
    dt = node.input_dtypes[0]
    signed = _SIGNED[dt].torch_dtype

    def left_shift(x, y):
        return torch.bitwise_left_shift(x.view(signed), _shift_amount(y, dt)).view(dt.torch_dtype)
    return left_shift


def _right_shift(node):
    dt = node.input_dtypes[0]
    signed = _SIGNED[dt].torch_dtype
    low_bits = (1 << (dt.size * 8 - 1)) - 1    # the signed type's maximum

    def right_shift(x, y):
        s = _shift_amount(y, dt)
        x = x.view(signed)
        # a logical shift: by one with the top bit cleared, then arithmetically by the rest
        once = torch.bitwise_and(torch.bitwise_right_shift(x, 1), low_bits)
        rest = torch.bitwise_right_shift(once, (s - 1).clamp_min(0))
        return torch.where(s == 0, x, rest).view(dt.torch_dtype)
    return right_shift


_SPECIAL = {"LeftShift": _left_shift, "RightShift": _right_shift}


# -- uint64 division, which no ATen type holds ---------------------------------------------------


def _host_uint64(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy()


def _uint64_tensor(a, shape, device) -> torch.Tensor:
    t = torch.from_numpy(np.asarray(a, np.uint64).reshape(shape).copy())
    return t if device.type == "cpu" else t.to(device)


def _uint64_divide(np_fn):
    def build(factory, node, lookup):
        def run(x, y):
            a, b = _host_uint64(x), _host_uint64(y)
            if (b == 0).any():
                raise InvalidArgumentError(None, None, "Integer division by zero")
            out = np_fn(a, b)
            return _uint64_tensor(out, np.shape(out), x.device)
        return run
    return build


def _uint64_mean(factory, node, lookup):
    sum_node = dataclasses.replace(node, op_def=Sum)
    total = kernel(lookup(sum_node.op_def), sum_node, "CPU", lookup)

    def mean(x, axes):
        s = total(x, axes)
        count = x.numel() // s.numel() if s.numel() else 0
        if count == 0:
            return s
        return _uint64_tensor(_host_uint64(s) // np.uint64(count), s.shape, s.device)
    return mean


_UINT64_VALUE = {"FloorDiv": _uint64_divide(np.floor_divide),
                 "TruncateDiv": _uint64_divide(np.floor_divide),
                 "FloorMod": _uint64_divide(np.remainder),
                 "Mean": _uint64_mean}
