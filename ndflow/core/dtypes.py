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
                 "is_bool", "is_unsigned", "size", "is_complex")

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
        self.size = size

    @property
    def as_numpy_dtype(self):
        # tf.string's is `object` itself (NumPy's object dtype would say np.object_)
        if self is bfloat16:
            return ml_dtypes.bfloat16
        return self.np_dtype.type if self.np_dtype is not None and self is not string \
            else object

    @property
    def as_datatype_enum(self) -> int:
        return self.enum

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        """float32 for complex64, float64 for complex128, else the dtype itself."""
        return _REAL_OF_COMPLEX.get(self, self)

    @property
    def is_numeric(self) -> bool:
        return self.is_floating or self.is_integer

    @property
    def min(self):
        if self.is_floating:
            return float(torch.finfo(self.torch_dtype).min)
        if self.is_integer:
            return int(torch.iinfo(self.torch_dtype).min)
        raise TypeError(f"Cannot find minimum value of {self.name}.")

    @property
    def max(self):
        if self.is_floating:
            return float(torch.finfo(self.torch_dtype).max)
        if self.is_integer:
            return int(torch.iinfo(self.torch_dtype).max)
        raise TypeError(f"Cannot find maximum value of {self.name}.")

    def is_compatible_with(self, other) -> bool:
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


@tf_export("as_dtype", "dtypes.as_dtype")
def as_dtype(type_value) -> DType:
    """`tf.as_dtype`: a DType from a DType, a type name ("float32", "float", "double",
    "half", ...), a `DataType` enum, a NumPy dtype or scalar type, `float`/`bool`/`object`,
    anything with a NumPy `dtype`, or an ATen dtype."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, np.dtype):
        if type_value.kind in ("U", "S", "O"):
            return string
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
