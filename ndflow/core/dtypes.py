"""TensorFlow's dtypes (`tf.float32` ...), with their NumPy and ATen counterparts.

`DataType` enum values are TensorFlow's `types.proto` numbers, so a GraphDef written by
ndflow carries the same `type: DT_FLOAT` a TensorFlow GraphDef does.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np
import torch

from ndflow.core.api_export import tf_export


@tf_export("DType", "dtypes.DType")
class DType:
    """A tensor element type. Instances are singletons (`is` compares them); `==` also takes
    what `as_dtype` takes, as TF's."""

    __slots__ = ("name", "enum", "torch_dtype", "np_dtype", "is_floating", "is_integer",
                 "is_bool", "is_unsigned", "size", "is_complex", "is_quantized")

    def __init__(self, name, enum, torch_dtype, np_dtype, kind, size):
        self.name = name
        self.enum = enum
        self.torch_dtype = torch_dtype
        self.np_dtype = np_dtype
        self.is_floating = kind == "f"
        self.is_integer = kind in ("i", "u")
        self.is_unsigned = kind == "u"
        self.is_bool = kind == "b"
        self.is_complex = kind == "c"
        # qint8 & co: `torch_dtype`/`np_dtype` are their integer storage, not numbers
        # (is_integer stays False, as TF's)
        self.is_quantized = kind == "q"
        self.size = size

    @property
    def as_numpy_dtype(self):
        """The NumPy type of this dtype's values (`np.float32`; ml_dtypes' bfloat16; `object`
        for tf.string)."""
        # tf.string's is `object` itself (NumPy's object dtype would say np.object_)
        if self is bfloat16:
            return ml_dtypes.bfloat16
        if self.is_quantized:   # TF's structured dtypes: np.dtype([("qint8", np.int8)])
            return np.dtype([(self.name, self.np_dtype)])
        return self.np_dtype.type if self.np_dtype is not None and self is not string \
            else object

    @property
    def as_datatype_enum(self) -> int:
        """TensorFlow's `DataType` enum value (types.proto: DT_FLOAT is 1)."""
        return self.enum

    @property
    def base_dtype(self) -> DType:
        """The dtype itself (TF1's reference dtypes had a separate base; ndflow has none)."""
        return self

    @property
    def real_dtype(self) -> DType:
        """float32 for complex64, float64 for complex128, else the dtype itself."""
        return _REAL_OF_COMPLEX.get(self, self)

    @property
    def is_numeric(self) -> bool:
        """Whether values of this dtype are numbers TF computes with (not bool, string,
        resource, variant, nor the float8/int4 storage types)."""
        # TF: the quantized types are numeric, the float8/int4 families are not
        return (self.is_floating or self.is_integer or self.is_quantized) and \
            self not in NARROW

    @property
    def min(self):
        """The smallest value of this dtype (the most negative finite float).

        Raises:
          TypeError: the dtype has no order (bool, string, complex, ...).
        """
        self._check_ordered("minimum")
        if self in NARROW:   # TF: ml_dtypes' limits (float8's as ml_dtypes scalars)
            return _narrow_info(self).min
        if self.is_floating:
            return float(torch.finfo(self.torch_dtype).min)
        if self.is_integer:
            return int(torch.iinfo(self.torch_dtype).min)
        raise TypeError(f"Cannot find minimum value of {self.name}.")

    @property
    def max(self):
        """The largest value of this dtype (the largest finite float).

        Raises:
          TypeError: the dtype has no order (bool, string, complex, ...).
        """
        self._check_ordered("maximum")
        if self in NARROW:
            return _narrow_info(self).max
        if self.is_floating:
            return float(torch.finfo(self.torch_dtype).max)
        if self.is_integer:
            return int(torch.iinfo(self.torch_dtype).max)
        raise TypeError(f"Cannot find maximum value of {self.name}.")

    def _check_ordered(self, what: str) -> None:
        if self.is_quantized:
            raise TypeError(f"Cannot find {what} value of {self} with quantized type {self}.")

    def is_compatible_with(self, other) -> bool:
        """Whether a value of dtype `other` (a DType, its name or a NumPy dtype) can be used
        where this dtype is expected: the same dtype."""
        return self is as_dtype(other)

    def __repr__(self):
        return f"tf.{self.name}"

    def __eq__(self, other):
        """TF's: anything `as_dtype` turns into this dtype is equal to it (tf.float32 ==
        "float32", == np.float32; tf.int32 == 3, its enum)."""
        if other is self:
            return True
        if other is None or isinstance(other, DType):
            return False
        try:
            return as_dtype(other) is self
        except (TypeError, ValueError, KeyError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType("float16", 19, torch.float16, np.dtype(np.float16), "f", 2)
half = float16
bfloat16 = DType("bfloat16", 14, torch.bfloat16, None, "f", 2)
float32 = DType("float32", 1, torch.float32, np.dtype(np.float32), "f", 4)
float64 = DType("float64", 2, torch.float64, np.dtype(np.float64), "f", 8)
double = float64
int8 = DType("int8", 6, torch.int8, np.dtype(np.int8), "i", 1)
int16 = DType("int16", 5, torch.int16, np.dtype(np.int16), "i", 2)
int32 = DType("int32", 3, torch.int32, np.dtype(np.int32), "i", 4)
int64 = DType("int64", 9, torch.int64, np.dtype(np.int64), "i", 8)
uint8 = DType("uint8", 4, torch.uint8, np.dtype(np.uint8), "u", 1)
# ATen stores the wider unsigned types but has few kernels for them: kernels/unsigned.py runs
# their ops on stand-in signed types.
uint16 = DType("uint16", 17, torch.uint16, np.dtype(np.uint16), "u", 2)
uint32 = DType("uint32", 22, torch.uint32, np.dtype(np.uint32), "u", 4)
uint64 = DType("uint64", 23, torch.uint64, np.dtype(np.uint64), "u", 8)
bool = DType("bool", 10, torch.bool, np.dtype(np.bool_), "b", 1)  # noqa: A001 - TF's name
string = DType("string", 7, None, np.dtype(object), "s", 0)
resource = DType("resource", 20, None, None, "r", 0)
variant = DType("variant", 21, None, None, "v", 0)
complex64 = DType("complex64", 8, torch.complex64, np.dtype(np.complex64), "c", 8)
complex128 = DType("complex128", 18, torch.complex128, np.dtype(np.complex128), "c", 16)

# The quantized types: integers that stand for reals by a (min, max) range that travels beside
# them (tf.quantization). Stored as their integer type; ATen's own quantized tensors are not used.
qint8 = DType("qint8", 11, torch.int8, np.dtype(np.int8), "q", 1)
quint8 = DType("quint8", 12, torch.uint8, np.dtype(np.uint8), "q", 1)
qint16 = DType("qint16", 15, torch.int16, np.dtype(np.int16), "q", 2)
quint16 = DType("quint16", 16, torch.uint16, np.dtype(np.uint16), "q", 2)
qint32 = DType("qint32", 13, torch.int32, np.dtype(np.int32), "q", 4)
# The narrow types of tf.experimental, NumPy'd by ml_dtypes as TF's. ATen holds the float8s it
# has (e4m3fn, e5m2 and the fnuz pair) as themselves; the others as one byte per element:
# int4/int2 values in int8, uint4/uint2 in uint8, e4m3b11fnuz and e2m1fn bit patterns in uint8.
float8_e5m2 = DType("float8_e5m2", 24, torch.float8_e5m2,
                    np.dtype(ml_dtypes.float8_e5m2), "f", 1)
float8_e4m3fn = DType("float8_e4m3fn", 25, torch.float8_e4m3fn,
                      np.dtype(ml_dtypes.float8_e4m3fn), "f", 1)
float8_e4m3fnuz = DType("float8_e4m3fnuz", 26, torch.float8_e4m3fnuz,
                        np.dtype(ml_dtypes.float8_e4m3fnuz), "f", 1)
float8_e4m3b11fnuz = DType("float8_e4m3b11fnuz", 27, torch.uint8,
                           np.dtype(ml_dtypes.float8_e4m3b11fnuz), "f", 1)
float8_e5m2fnuz = DType("float8_e5m2fnuz", 28, torch.float8_e5m2fnuz,
                        np.dtype(ml_dtypes.float8_e5m2fnuz), "f", 1)
int4 = DType("int4", 29, torch.int8, np.dtype(ml_dtypes.int4), "i", 1)
uint4 = DType("uint4", 30, torch.uint8, np.dtype(ml_dtypes.uint4), "u", 1)
int2 = DType("int2", 31, torch.int8, np.dtype(ml_dtypes.int2), "i", 1)
uint2 = DType("uint2", 32, torch.uint8, np.dtype(ml_dtypes.uint2), "u", 1)
float4_e2m1fn = DType("float4_e2m1fn", 33, torch.uint8, np.dtype(ml_dtypes.float4_e2m1fn), "f", 1)

QUANTIZED = (qint8, quint8, qint32, qint16, quint16)   # TF's order (its enums')
FLOAT8 = (float8_e5m2, float8_e4m3fn, float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2fnuz)
NARROW_INT = (int4, uint4, int2, uint2)
NARROW = frozenset(FLOAT8 + NARROW_INT + (float4_e2m1fn,))
# Narrow types whose ATen storage is a byte of another type (see above).
BYTE_STORED = frozenset((float8_e4m3b11fnuz, float4_e2m1fn) + NARROW_INT)


def _narrow_info(d: DType):
    return ml_dtypes.finfo(d.np_dtype) if d.is_floating else ml_dtypes.iinfo(d.np_dtype)


ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
       uint64, bool, string, resource, variant, complex64, complex128)
COMPLEX = (complex64, complex128)
_REAL_OF_COMPLEX = {complex64: float32, complex128: float64}
FLOATING = (float16, bfloat16, float32, float64)
INTEGER = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
WIDE_UNSIGNED = (uint16, uint32, uint64)
NUMERIC = FLOATING + INTEGER

_BY_TORCH = {d.torch_dtype: d for d in ALL if d.torch_dtype is not None}
_BY_NUMPY_TYPE = {d.np_dtype.type: d for d in ALL if d.np_dtype is not None and d is not string}
_BY_NUMPY_TYPE.update({np.str_: string, np.bytes_: string, np.object_: string})
# ml_dtypes' bfloat16 (what TF's .numpy() gives): bfloat16's `np_dtype` stays None, since
# ndflow's kernels and conversions handle it through float32 or its 16-bit pattern
_BY_NUMPY_TYPE[ml_dtypes.bfloat16] = bfloat16
BFLOAT16_NUMPY = np.dtype(ml_dtypes.bfloat16)
# What TensorFlow's as_dtype looks up by value: names (with TF's aliases "float", "half",
# "double"), DataType enums, the Python types float/bool/object and NumPy scalar types.
# A Python `int` or `str` is not a dtype in TensorFlow (TypeError), nor is "int".
_BY_VALUE: dict = {d.name: d for d in ALL}
_BY_VALUE.update(float=float32, half=float16, double=float64)
_BY_VALUE.update({d.enum: d for d in ALL})
_BY_VALUE.update({float: float32, builtins.bool: bool, object: string})
_BY_VALUE.update(_BY_NUMPY_TYPE)
# The quantized and narrow types by name and enum; the narrow ones also by ml_dtypes' types.
# (Not by ATen dtype: their storage types are the ordinary types'.)
_BY_VALUE.update({d.name: d for d in QUANTIZED + tuple(NARROW)})
_BY_VALUE.update({d.enum: d for d in QUANTIZED + tuple(NARROW)})
_BY_NUMPY_TYPE.update({d.np_dtype.type: d for d in NARROW})
_BY_VALUE.update({d.np_dtype.type: d for d in NARROW})
_QUANTIZED_BY_FIELD = {(d.name, d.np_dtype): d for d in QUANTIZED}


@tf_export("as_dtype", "dtypes.as_dtype")
def as_dtype(type_value) -> DType:
    """Converts a dtype-like value to a `tf.DType`.

    Args:
      type_value: a `tf.DType`, a type name ("float32", "float", "double", "half", ...), a
        `DataType` enum value, a NumPy dtype or scalar type, `float`/`int`/`bool`/`object`,
        anything with a NumPy `dtype`, or an ATen dtype.

    Returns:
      A `tf.DType`.

    Raises:
      TypeError: if the value does not name a dtype.

    Example:
      >>> tf.as_dtype("float32")
      tf.float32
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, np.dtype):
        if type_value.kind in ("U", "S", "O"):
            return string
        if type_value.names is not None and len(type_value.names) == 1:  # qint8's NumPy form
            name = type_value.names[0]
            d = _QUANTIZED_BY_FIELD.get((name, type_value.fields[name][0]))
            if d is not None:
                return d
        d = _BY_NUMPY_TYPE.get(type_value.type)
        if d is not None:
            return d
    if isinstance(type_value, torch.dtype):
        d = _BY_TORCH.get(type_value)
        if d is not None:
            return d
    try:
        return _BY_VALUE[type_value]
    except (KeyError, TypeError):  # TypeError: not hashable
        pass
    if hasattr(type_value, "dtype") and not isinstance(type_value, type):
        try:
            return as_dtype(np.dtype(type_value.dtype))
        except TypeError:
            pass
    raise TypeError(f"Cannot convert the argument `type_value`: {type_value!r} to a "
                    "TensorFlow DType.")

tf_export("bfloat16", "dtypes.bfloat16")(bfloat16)
tf_export("bool", "dtypes.bool")(bool)
tf_export("double", "dtypes.double", "dtypes.float64", "float64")(float64)
tf_export("dtypes.float16", "dtypes.half", "float16", "half")(float16)
tf_export("dtypes.float32", "float32")(float32)
tf_export("dtypes.int16", "int16")(int16)
tf_export("dtypes.int32", "int32")(int32)
tf_export("dtypes.int64", "int64")(int64)
tf_export("dtypes.int8", "int8")(int8)
tf_export("dtypes.resource", "resource")(resource)
tf_export("dtypes.string", "string")(string)
tf_export("dtypes.uint8", "uint8")(uint8)
tf_export("dtypes.uint16", "uint16")(uint16)
tf_export("dtypes.uint32", "uint32")(uint32)
tf_export("dtypes.uint64", "uint64")(uint64)
tf_export("dtypes.variant", "variant")(variant)
tf_export("complex64", "dtypes.complex64")(complex64)
tf_export("complex128", "dtypes.complex128")(complex128)

tf_export("dtypes.qint8", "qint8")(qint8)
tf_export("dtypes.quint8", "quint8")(quint8)
tf_export("dtypes.qint16", "qint16")(qint16)
tf_export("dtypes.quint16", "quint16")(quint16)
tf_export("dtypes.qint32", "qint32")(qint32)
# TF's set also holds the *_ref types, which ndflow does not have.
QUANTIZED_DTYPES = frozenset(QUANTIZED)
tf_export("dtypes.QUANTIZED_DTYPES",
          v1=["dtypes.QUANTIZED_DTYPES", "QUANTIZED_DTYPES"])(QUANTIZED_DTYPES)
for _d in sorted(NARROW, key=lambda d: d.enum):
    # (TF also sets tf.dtypes.experimental.*, a module its API listing does not have)
    tf_export(f"experimental.{_d.name}")(_d)
del _d
