"""Tensors of the quantized and narrow dtypes (`tf.qint8`, `tf.experimental.float8_e4m3fn`,
`int4`, ...): their ATen storage, their NumPy values, and which casts TensorFlow 2.21 has.

Storage (see core/dtypes.py): the quantized types are their integer type; float8_e5m2/e4m3fn/
e4m3fnuz/e5m2fnuz are ATen's own float8 types; int4/int2 are int8 values, uint4/uint2 uint8
values; float8_e4m3b11fnuz and float4_e2m1fn are their bit patterns in uint8 (ATen has no such
types). NumPy values are TF's: ml_dtypes arrays for the narrow types, the storage integers for
the quantized ones.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.graph_def import dtype_name

_ATEN_FLOAT8 = frozenset(d for d in dtypes.FLOAT8 if d not in dtypes.BYTE_STORED)
_BIT_STORED = frozenset((dtypes.float8_e4m3b11fnuz, dtypes.float4_e2m1fn))
# ml_dtypes' int4 & co hold one value per byte, so their bytes are the storage's values
_STORAGE_NP = {dtypes.int4: np.int8, dtypes.int2: np.int8, dtypes.uint4: np.uint8,
               dtypes.uint2: np.uint8}


def storage_to_numpy(t: torch.Tensor, dtype) -> np.ndarray:
    """The NumPy array (ml_dtypes for the narrow types) of a host ATen tensor of `dtype`."""
    if dtype in _ATEN_FLOAT8:
        return t.contiguous().view(torch.uint8).numpy().view(dtype.np_dtype)
    if dtype in _BIT_STORED:
        return t.contiguous().numpy().view(dtype.np_dtype)
    if dtype in _STORAGE_NP:
        return t.numpy().astype(dtype.np_dtype)
    return t.numpy()


def numpy_to_storage(arr: np.ndarray, dtype) -> torch.Tensor:
    """The ATen storage of `arr`'s values as `dtype` (converted by NumPy if needed)."""
    arr = np.ascontiguousarray(arr).reshape(arr.shape)
    if dtype in _ATEN_FLOAT8 or dtype in _BIT_STORED:
        bits = torch.from_numpy(arr.astype(dtype.np_dtype, copy=False).view(np.uint8))
        return bits if dtype in _BIT_STORED else bits.view(dtype.torch_dtype)
    if dtype in _STORAGE_NP:
        return torch.from_numpy(arr.astype(dtype.np_dtype, copy=False)
                                .astype(_STORAGE_NP[dtype]))
    return torch.from_numpy(arr.astype(dtype.np_dtype, copy=False))


def as_numpy(arr: np.ndarray, dtype, value) -> np.ndarray:
    """`value` (as the array `arr`) converted to `dtype` as TF's constant conversion does: a
    NumPy value by NumPy's cast; a Python value as a double or int64 tensor Cast to `dtype`,
    which fails where TF has no such Cast."""
    if arr.dtype.kind in "OUS":
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if not isinstance(value, (np.ndarray, np.generic)) and arr.size:
        kind = arr.dtype.kind
        if kind in "bc" or (kind == "f" and not dtype.is_floating):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        src = dtypes.float64 if kind == "f" else dtypes.int64
        if not cast_supported(src, dtype):
            raise TypeError(f"Error while casting from dtype {dtype_name(src)} to "
                            f"{dtype_name(dtype)}. Cast {dtype_name(src)} to "
                            f"{dtype_name(dtype)} is not supported")
        arr = arr.astype(src.np_dtype)
    return arr.astype(dtype.np_dtype)


# -- the casts TF 2.21's Cast kernels have ------------------------------------------------------

_BASE = frozenset(dtypes.NUMERIC + dtypes.COMPLEX + (dtypes.bool,))
_BASE_FLOATS = frozenset(dtypes.FLOATING)
_BASE_INTS = frozenset(dtypes.INTEGER)
_Q = frozenset(dtypes.QUANTIZED)
_F8 = frozenset((dtypes.float8_e4m3fn, dtypes.float8_e5m2))
_I4 = frozenset((dtypes.int4, dtypes.uint4))
_FROM = {**dict.fromkeys(_Q, _BASE | _Q | _I4), **dict.fromkeys(_F8, _BASE | _Q | _F8),
         **dict.fromkeys(_I4, _BASE_INTS | _Q | _I4)}
_TO = {**dict.fromkeys(_Q, _BASE | _Q | _F8 | _I4), **dict.fromkeys(_F8, _BASE_FLOATS | _F8),
       **dict.fromkeys(_I4, _BASE_INTS | _Q | _I4)}


def is_extra(dtype) -> bool:
    """A quantized or narrow dtype (the ones this module handles)."""
    return dtype.is_quantized or dtype in dtypes.NARROW


_UNCASTABLE = (dtypes.string, dtypes.resource, dtypes.variant)


def cast_supported(src, dst) -> bool:
    """Whether TF has a Cast kernel from `src` to `dst` (TF: UnimplementedError otherwise).
    Strings, resources and variants, the fnuz/b11 float8s, float4_e2m1fn and int2/uint2 cast
    only to themselves."""
    if src is dst:
        return True
    if src in _UNCASTABLE or dst in _UNCASTABLE:
        return False
    if not (is_extra(src) or is_extra(dst)):
        return True
    if is_extra(src) and dst not in _FROM.get(src, ()):
        return False
    return not is_extra(dst) or src in _TO.get(dst, ())


def wrap_narrow_int(x: torch.Tensor, dtype) -> torch.Tensor:
    """Integers cast to int4/uint4 (TF: the low bits, two's complement), in their storage."""
    bits = 4 if dtype in _I4 else 2
    low = x.to(torch.int64) & ((1 << bits) - 1)
    if not dtype.is_unsigned:
        low = (low ^ (1 << (bits - 1))) - (1 << (bits - 1))
    return low.to(dtype.torch_dtype)
