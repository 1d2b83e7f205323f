"""Kernels of EagerPyFunc / PyFunc / PyFuncStateless: call the registered Python function
eagerly (eager tensors or NumPy arrays in, per the op), convert what it returns to `Tout`,
and turn its exceptions into TensorFlow's errors as TensorFlow's py_func kernel does
(ValueError/TypeError -> InvalidArgument, StopIteration/IndexError -> OutOfRange, ...)."""

from __future__ import annotations

import traceback

import numpy as np
import torch

from ndflow.core import context, dtypes
from ndflow.core import errors as tf_errors
from ndflow.core.strings import as_bytes_array
from ndflow.core.tensor import EagerTensor
from ndflow.kernels.registry import kernel
from ndflow.ops import script_ops
from ndflow.ops.apply import numpy_to_torch

_ERRORS = ((ValueError, tf_errors.InvalidArgumentError),
           (TypeError, tf_errors.InvalidArgumentError),
           (StopIteration, tf_errors.OutOfRangeError),
           (IndexError, tf_errors.OutOfRangeError),
           (MemoryError, tf_errors.ResourceExhaustedError),
           (NotImplementedError, tf_errors.UnimplementedError))


def _tf_error(e: Exception):
    tf_cls = next((cls for py, cls in _ERRORS if isinstance(e, py)), tf_errors.UnknownError)
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return tf_cls(None, None, f"{type(e).__name__}: {e}\n{text}")


def _to_host(x: torch.Tensor, dtype):
    if not isinstance(x, torch.Tensor):  # strings: NumPy object arrays already
        return np.asarray(x)
    return np.asarray(EagerTensor(x, dtype).numpy())   # PyFunc hands arrays, 0-d too


def _output(value, dtype, device, index: int, token: str) -> torch.Tensor:
    if isinstance(value, EagerTensor):
        if value.dtype is not dtype:
            raise tf_errors.InvalidArgumentError(
                None, None, f"{token}: the {index}-th value returned has dtype "
                f"{value.dtype.name}, but Tout expects {dtype.name}")
        out = value.value
        if not isinstance(out, torch.Tensor):  # a string tensor's host array
            return out
    else:
        if dtype is dtypes.string:
            return as_bytes_array(value)
        if dtype.torch_dtype is None:
            return np.asarray(value, dtype=object)
        arr = np.asarray(value)
        if arr.dtype == object:
            raise tf_errors.InvalidArgumentError(
                None, None, f"{token}: the {index}-th value returned is not numeric: {value!r}")
        np_type = dtypes.BFLOAT16_NUMPY if dtype is dtypes.bfloat16 else dtype.np_dtype
        out = numpy_to_torch(np.array(arr, dtype=np_type, order="C"), dtype)  # keeps 0-d
    return out.to(device) if out.device != device else out


def _py_func_kernel(node):
    token, touts, device = node.attrs["token"], list(node.attrs["Tout"]), node.device
    in_dtypes = list(node.input_dtypes)

    def run(*inputs):
        func, eager = script_ops.FUNCTIONS[token]
        with context.eager_scope():
            args = [EagerTensor(x, dt) if eager and (isinstance(x, torch.Tensor) or
                                                     dt is dtypes.string) else
                    _to_host(x, dt) for x, dt in zip(inputs, in_dtypes)]
            try:
                result = func(*args)
            except tf_errors.OpError:
                raise
            except Exception as e:  # noqa: BLE001 - any user error becomes TF's error type
                raise _tf_error(e) from e
        if not touts:
            return None
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(values) != len(touts):
            raise tf_errors.InvalidArgumentError(
                None, None, f"{token} returns {len(values)} values, but expects to see "
                f"{len(touts)} values.")
        outs = tuple(_output(v, dt, device, i, token) for i, (v, dt) in
                     enumerate(zip(values, touts)))
        return outs[0] if len(outs) == 1 else outs  # the plan's convention for one output
    return run


kernel(script_ops.EagerPyFunc)(_py_func_kernel)
kernel(script_ops.PyFunc)(_py_func_kernel)
kernel(script_ops.PyFuncStateless)(_py_func_kernel)
