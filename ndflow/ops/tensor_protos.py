"""`tf.make_tensor_proto` / `tf.make_ndarray`: values <-> TensorFlow's `TensorProto`, encoded
as TensorFlow encodes them (TF Serving requests, TensorBoard plugins and GraphDef constants
read them): numeric arrays of more than one element in `tensor_content`, scalars, bools,
strings and complex values in the typed `*_val` fields, a value broadcast to a larger
`shape` as its single element (TensorFlow repeats the last value when reading)."""

from __future__ import annotations

import math

import numpy as np
from tensorboard.compat.proto import tensor_pb2

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import shape_to_proto, tensor_proto_to_ndarray
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import infer_numpy

_CONTENT_TYPES = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                            dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64,
                            dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64,
                            *dtypes.QUANTIZED, *dtypes.FLOAT8, dtypes.float4_e2m1fn})
# TF 2.21 writes a scalar of these as one byte of float8_val (the fnuz ones it refuses)
_FLOAT8_VAL_TYPES = frozenset((dtypes.float8_e4m3fn, dtypes.float8_e5m2, dtypes.float4_e2m1fn))
_MAX_CONTENT_BYTES = 1 << 31


def _bfloat16_bits(a: np.ndarray) -> np.ndarray:
    bits = np.asarray(a, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest


# The types whose values go into their own `*_val` field unchanged.
_PLAIN_FIELDS = {dtypes.float32: "float_val", dtypes.float64: "double_val",
                 dtypes.int64: "int64_val", dtypes.uint32: "uint32_val",
                 dtypes.uint64: "uint64_val", dtypes.bool: "bool_val"}


def _append(p, dt, flat: np.ndarray) -> None:
    if dt is dtypes.string:
        p.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in flat)
    elif dt is dtypes.float16:
        p.half_val.extend(flat.astype(np.float16).view(np.uint16).tolist())
    elif dt is dtypes.bfloat16:
        p.half_val.extend(_bfloat16_bits(flat).tolist())
    elif dt in _PLAIN_FIELDS:
        getattr(p, _PLAIN_FIELDS[dt]).extend(flat.tolist())
    elif dt.is_complex:
        target = p.scomplex_val if dt is dtypes.complex64 else p.dcomplex_val
        target.extend(np.stack([flat.real, flat.imag], -1).reshape(-1).tolist())
    elif dt.is_integer or dt.is_quantized:
        p.int_val.extend(flat.astype(np.int64).tolist())
    elif dt in _FLOAT8_VAL_TYPES:
        p.float8_val = flat.astype(dt.np_dtype).view(np.uint8).tobytes()
    else:
        raise TypeError(f"Element type not supported in TensorProto: {dt.name}")


@tf_export("make_tensor_proto", v1=["make_tensor_proto"])
def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False) -> tensor_pb2.TensorProto:
    """A `TensorProto` of `values` (typed as `tf.constant` types them, or `dtype`)."""
    if isinstance(values, tensor_pb2.TensorProto):
        return values
    if hasattr(values, "numpy"):
        values = values.numpy()
    dt = dtypes.as_dtype(dtype) if dtype is not None else None
    arr, inferred = infer_numpy(values, dt)
    dt = dt or inferred
    if dt.np_dtype is not None and dt is not dtypes.string:
        arr = np.asarray(arr).astype(dt.np_dtype, copy=False)
    if shape is None:
        shape, size, same_size = list(arr.shape), arr.size, True
    else:
        shape = [int(d) for d in shape]
        size = math.prod(shape)
        same_size = size == arr.size
        if allow_broadcast:
            if arr.shape not in ((1,), ()) and arr.size != size:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got "
                                f"{arr.shape}.")
        else:
            if verify_shape and arr.shape != tuple(shape):
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got "
                                f"{arr.shape}.")
            if arr.size > size:
                raise ValueError(f"Too many elements provided. Takes at most {size}, but got "
                                 f"{arr.size}.")
    p = tensor_pb2.TensorProto(dtype=dt.enum)
    p.tensor_shape.CopyFrom(shape_to_proto(TensorShape(shape)))
    if same_size and dt in _CONTENT_TYPES and size > 1:
        if arr.size * arr.itemsize >= _MAX_CONTENT_BYTES:
            raise ValueError("Cannot create a tensor proto whose content is larger than 2GB.")
        if dt is dtypes.bfloat16:
            p.tensor_content = _bfloat16_bits(arr).astype("<u2").tobytes()
        else:
            p.tensor_content = np.ascontiguousarray(
                arr, dtype=dt.np_dtype.newbyteorder("<")).tobytes()
        return p
    _append(p, dt, np.asarray(arr).reshape(-1))
    return p


@tf_export("make_ndarray", v1=["make_ndarray"])
def make_ndarray(tensor) -> np.ndarray:
    """The NumPy array a `TensorProto` holds (bfloat16 as ml_dtypes' bfloat16, as TF's)."""
    arr, dt = tensor_proto_to_ndarray(tensor)   # (bfloat16 values come as exact float32s)
    if dt.is_quantized:   # TF's structured form: array([(1,), (-2,)], dtype=[('qint8', 'i1')])
        return arr.view(dt.as_numpy_dtype).reshape(arr.shape)
    return arr.astype(dtypes.BFLOAT16_NUMPY) if dt is dtypes.bfloat16 else arr
