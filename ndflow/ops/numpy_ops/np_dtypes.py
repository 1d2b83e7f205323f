"""TF-NumPy's dtypes and promotion (`tnp.float32`, `tnp.result_type`): NumPy's rules.

A Python float is float64 unless `experimental_enable_numpy_behavior(prefer_float32=True)`,
which makes Python floats and complexes strong float32/complex64 values in promotion.
"""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.indexed_slices import IndexedSlices

bool_ = np.bool_
complex128, complex64, complex_ = np.complex128, np.complex64, np.complex128
float16, float32, float64, float_ = np.float16, np.float32, np.float64, np.float64
inexact = np.inexact
int_, int8, int16, int32, int64 = np.int_, np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
object_, string_, unicode_ = np.object_, np.bytes_, np.str_
iinfo = np.iinfo
issubdtype = np.issubdtype

for _name in ("bool_", "complex128", "complex64", "complex_", "float16", "float32", "float64",
              "float_", "inexact", "int_", "int8", "int16", "int32", "int64", "uint8", "uint16",
              "uint32", "uint64", "object_", "string_", "unicode_", "iinfo", "issubdtype"):
    tf_export(f"experimental.numpy.{_name}", v1=[])(globals()[_name])

_prefer_float32 = False
_allow_float64 = True
_numpy_style_promotion = False  # TF's dtype conversion mode 'legacy' with NumPy behavior
_TO_FLOAT32 = {np.dtype("float64"): np.dtype("float32"),
               np.dtype("complex128"): np.dtype("complex64")}


def is_prefer_float32() -> bool:
    return _prefer_float32


def set_prefer_float32(value: bool) -> None:
    global _prefer_float32
    _prefer_float32 = bool(value)


def is_numpy_style_promotion() -> bool:
    """Whether the tensor operators promote as NumPy (experimental_enable_numpy_behavior)."""
    return _numpy_style_promotion


def set_numpy_style_promotion(value: bool) -> None:
    global _numpy_style_promotion
    _numpy_style_promotion = bool(value)


def is_allow_float64() -> bool:
    return _allow_float64


def set_allow_float64(value: bool) -> None:
    global _allow_float64
    _allow_float64 = bool(value)


def canonicalize_dtype(dtype):
    if not _allow_float64:
        return _TO_FLOAT32.get(np.dtype(dtype), dtype)
    return dtype


def default_float_type():
    """float64, or float32 when float32 is preferred (or float64 not allowed)."""
    return float64 if not _prefer_float32 and _allow_float64 else float32


def _to_numpy_type(dtype):
    if isinstance(dtype, dtypes.DType):
        return dtype.as_numpy_dtype
    return np.dtype(dtype)


def _numpy_operand(x):
    """What np.result_type sees for `x`: Python numbers stay weak, tensors give their dtype."""
    if isinstance(x, numbers.Real) and not isinstance(x, np.ndarray):
        return x
    if isinstance(x, (Tensor, IndexedSlices)) or hasattr(x, "_as_tensor_value"):
        return np.dtype(x.dtype.as_numpy_dtype)
    if isinstance(x, dtypes.DType):
        return np.dtype(x.as_numpy_dtype)
    if isinstance(x, (list, tuple)):
        raise ValueError("Cannot find dtype for type inference from argument `x` of a sequence "
                         f"type {type(x)}. For sequences, please call this function on each "
                         "element individually.")
    return x


def _prefer(x):
    if _prefer_float32:
        if isinstance(x, float):
            return np.float32(x)
        if isinstance(x, complex):
            return np.complex64(x)
    return x


def _flatten(items):
    for x in items:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def _result_np(*operands) -> np.dtype:
    operands = [_prefer(x) for x in operands]
    # via .str: NumPy may answer with an alias type (ulonglong for a huge Python int)
    return np.dtype(np.dtype(canonicalize_dtype(np.result_type(*operands))).str)


@tf_export("experimental.numpy.result_type", v1=[])
def result_type(*arrays_and_dtypes):
    """NumPy's `result_type` as a TF DType (lists are flattened, Python scalars are weak)."""
    operands = [_numpy_operand(x) for x in _flatten(arrays_and_dtypes)]
    if not operands:
        operands = [np.asarray([])]
    return dtypes.as_dtype(_result_np(*operands))


def result_type_binary(t1, t2):
    try:
        return dtypes.as_dtype(_result_np(_numpy_operand(t1), _numpy_operand(t2)))
    except ValueError:  # a sequence: its elements count one by one
        return result_type(t1, t2)


def result_type_unary(a, dtype):
    """The dtype of `asarray(a, dtype)`: strings stay strings, everything else `result_type`."""
    if dtype:
        return result_type(dtype)
    if isinstance(a, str):
        return dtypes.string
    if isinstance(a, bytes):
        return dtypes.string
    return result_type(a)


@tf_export("experimental.numpy.promote_types", v1=[])
def promote_types(type1, type2):
    """The smallest NumPy dtype both types convert to safely (NumPy's promote_types).

    Args:
      type1: a NumPy or TF dtype, or a type such as `int` or `float`.
      type2: another such type.

    Returns:
      A NumPy dtype; float64 becomes float32 when float64 is not allowed.

    Example:
      >>> tnp.promote_types('int8', 'uint8')
      dtype('int16')
    """
    return canonicalize_dtype(np.promote_types(_to_numpy_type(type1), _to_numpy_type(type2)))


@tf_export("experimental.numpy.finfo", v1=[])
def finfo(dtype):
    """NumPy's finfo for the NumPy equivalent of `dtype`."""
    return np.finfo(_to_numpy_type(dtype))


def is_inexact(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype.as_numpy_dtype), np.inexact)
