"""Values crossing the Session boundary: fed Python/NumPy values in, fetched NumPy values out.

Feeds are converted to the fed tensor's dtype and checked against its static shape with
TensorFlow's messages; the ATen tensor handed to the plan never shares memory with the
caller's array (a kernel may keep it, e.g. as a variable's value). Fetched values come back
as fresh NumPy arrays (0-d results as NumPy scalars, as TensorFlow returns them); bfloat16
comes back as `ml_dtypes.bfloat16` when that package is installed, else as float32.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import devices, dtypes, narrow_dtypes
from ndflow.core.strings import as_bytes_array
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.apply import numpy_to_torch

try:  # optional: NumPy's bfloat16
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None

_UNFEEDABLE = (dtypes.resource, dtypes.variant)


def _numpy_dtype(dtype):
    if dtype is dtypes.string:
        return np.dtype(object)
    if dtype is dtypes.bfloat16:
        return np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else np.dtype(np.float32)
    return dtype.np_dtype


def _scalar_type_name(dtype) -> str:
    np_type = dtype.as_numpy_dtype if dtype.np_dtype is not None else object
    return str(np_type)


def _overflow(value, dtype) -> TypeError:
    return TypeError(
        f"Type of feed value {value} with type {type(value)} is not compatible with Tensor "
        f"type {_scalar_type_name(dtype)}. Try explicitly setting the type of the feed tensor "
        "to a larger type (e.g. int64).")


def feed_array(tensor, value, key) -> np.ndarray:
    """`value` fed to `tensor` as a NumPy array of the tensor's dtype (TF's checks)."""
    if isinstance(value, Tensor) and not isinstance(value, EagerTensor):
        raise TypeError(
            "The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
            "Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, "
            f"the tensor object was {value} which was passed to the argument `feed_dict` with "
            f"key {key}.")
    if isinstance(value, EagerTensor):
        value = value.numpy()
    dtype = tensor.dtype
    if dtype in _UNFEEDABLE:
        raise ValueError(f"Tensor {tensor.name} may not be fed.")
    if isinstance(value, int) and not isinstance(value, bool) and dtype.is_integer and not (
            dtype.min <= value <= dtype.max):
        raise _overflow(value, dtype)
    try:
        arr = np.asarray(value, dtype=_numpy_dtype(dtype))
    except OverflowError:
        raise _overflow(value, dtype) from None
    if dtype is dtypes.string and not all(isinstance(v, (str, bytes))
                                          for v in arr.reshape(-1)):
        raise _overflow(value, dtype)  # TF's message for a non-string fed to a string
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor {tensor.name}, "
                         f"which has shape {tensor.shape}")
    return arr


def feed_to_aten(arr: np.ndarray, dtype, device: torch.device):
    """The plan input for a fed array: an ATen tensor owning its memory (strings stay NumPy)."""
    if dtype is dtypes.string:
        return as_bytes_array(arr)  # fed str values become UTF-8 bytes, as TF stores them
    if arr.dtype.name == "bfloat16":
        bits = torch.from_numpy(np.array(arr.view(np.int16), copy=True))
        t = bits.view(torch.bfloat16)
        return t if device.type == "cpu" else devices.copy_to(t, device)
    t = numpy_to_torch(np.array(arr, copy=True), dtype, device)
    return t


def _as_bytes(x):
    return x.encode("utf-8") if isinstance(x, str) else x


def fetch_value(value, dtype=None):
    """A fetched plan output as a fresh NumPy array, or a NumPy scalar for 0-d results
    (`dtype`, the tensor's DType: float8, int4 & co come back as ml_dtypes arrays)."""
    if isinstance(value, torch.Tensor):
        v = value.detach()
        if v.device.type != "cpu":
            v = v.cpu()
        if dtype is not None and dtype in dtypes.NARROW:
            arr = narrow_dtypes.storage_to_numpy(v, dtype).copy()
        elif v.dtype == torch.bfloat16:
            arr = (v.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
                   if ml_dtypes is not None else v.float().numpy())
        else:
            arr = v.numpy()
    else:
        arr = np.asarray(value)
        if arr.dtype.kind in "UO":  # string tensors come back as bytes, as in TensorFlow
            arr = np.array([_as_bytes(x) for x in arr.reshape(-1)] or [], dtype=object
                           ).reshape(arr.shape)
    if arr.ndim == 0:
        return arr[()]
    return np.array(arr, copy=True)
