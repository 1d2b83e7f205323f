"""TF-NumPy's array construction: zeros/ones/full/eye, ranges (arange, linspace, logspace,
geomspace), triangles, diagonals, Vandermonde matrices, meshgrid and ix_."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import array, asarray, cast, convert_to_tensor


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


@_export("zeros")
def zeros(shape, dtype=float):
    dtype = np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()
    return tfo.zeros(shape, dtype=dtype)


@_export("empty")
def empty(shape, dtype=float):
    return zeros(shape, dtype)


@_export("zeros_like")
def zeros_like(a, dtype=None):
    return tfo.zeros_like(asarray(a), dtypes.as_dtype(np_dtypes.result_type_unary(a, dtype)))


@_export("empty_like")
def empty_like(a, dtype=None):
    return zeros_like(a, dtype)


@_export("ones")
def ones(shape, dtype=float):
    dtype = np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()
    return tfo.ones(shape, dtype=dtype)


@_export("ones_like")
def ones_like(a, dtype=None):
    return tfo.ones_like(asarray(a), dtypes.as_dtype(np_dtypes.result_type_unary(a, dtype)))


@_export("eye")
def eye(N, M=None, k=0, dtype=float):  # noqa: N803 - NumPy's names
    dtype = np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()
    N = int(N)  # noqa: N806
    M = N if not M else int(M)  # noqa: N806
    k = int(k)
    if k >= M or -k >= N:
        return tfo.zeros([N, M], dtype=dtype)
    if k == 0:
        return tfo.eye(N, M, dtype=dtype)
    diag_len = min(N + min(k, 0), M - max(k, 0))
    return tfo.matrix_diag(tfo.ones([diag_len], dtype=dtype), num_rows=N, num_cols=M, k=k)


@_export("identity")
def identity(n, dtype=float):
    return eye(N=n, M=n, dtype=dtype)


@_export("full")
def full(shape, fill_value, dtype=None):
    if not isinstance(shape, Tensor):
        shape = convert_to_tensor(shape, dtype_hint=dtypes.int32)
    shape = tfo.reshape(shape, [-1]) if shape.shape.rank == 0 else shape
    return tfo.broadcast_to(asarray(fill_value, dtype=dtype), shape)


@_export("full_like")
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    if order != "K":
        raise ValueError("Non-standard orders are not supported.")
    if not subok:
        raise ValueError("subok being False is not supported.")
    if shape:
        raise ValueError("Overriding the shape is not supported.")
    a = asarray(a)
    dtype = dtype or np_dtypes.result_type(a)
    return tfo.broadcast_to(asarray(fill_value, dtype=dtype), tfo.shape(a))


@_export("arange")
def arange(start, stop=None, step=1, dtype=None):
    if not step:
        raise ValueError("step must be non-zero.")
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    elif stop is None:
        dtype = np_dtypes.result_type(start, step)
    else:
        dtype = np_dtypes.result_type(start, step, stop)
    if step > 0 and ((stop is not None and start > stop) or (stop is None and start < 0)):
        return array([], dtype=dtype)
    if step < 0 and ((stop is not None and start < stop) or (stop is None and start > 0)):
        return array([], dtype=dtype)
    if stop is None:
        start, stop = 0, start
    return cast(tfo.range_(start, stop, step), dtype)


@_export("linspace")
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    if dtype:
        # NumPy 2 computes in the type of start * 1.0 and stop * 1.0 (TF-NumPy follows it).
        dtype = np_dtypes.result_type([start * 1.0, stop * 1.0])
    start = array(start, dtype=dtype, copy=False)
    stop = array(stop, dtype=dtype, copy=False)
    if num < 0:
        raise ValueError("Argument `num` (number of samples) must be a non-negative integer. "
                         f"Received: num={num}")
    step = tfo.convert_to_tensor(np.nan)
    if endpoint:
        result = tfo.linspace(start, stop, num, axis=axis)
        if num > 1:
            step = tfo.truediv(tfo.subtract(stop, start), num - 1)
    else:
        if num > 0:
            step = tfo.truediv(tfo.subtract(stop, start), num)
        if num > 1:
            new_stop = tfo.subtract(cast(stop, step.dtype), step)
            result = tfo.linspace(cast(start, new_stop.dtype), new_stop, num, axis=axis)
        else:
            result = tfo.linspace(start, stop, num, axis=axis)
    if dtype:
        if dtype.is_integer:
            result = tfo.floor(result)
        result = cast(result, dtype)
    return (result, step) if retstep else result


@_export("logspace")
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    dtype = np_dtypes.result_type([start * 1.0, stop * 1.0])
    result = linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return cast(tfo.pow_(cast(tfo.convert_to_tensor(base), result.dtype), result), dtype)


@_export("geomspace")
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if dtype:
        dtype = dtypes.as_dtype(dtype)
    else:
        dtype = np_dtypes.result_type(start, stop, float(num),
                                      zeros((), np_dtypes.default_float_type()))
    compute = dtypes.as_dtype(np.promote_types(dtype.as_numpy_dtype, np.float32))
    start, stop = asarray(start, dtype=compute), asarray(stop, dtype=compute)
    one = tfo.constant(1, compute)
    start_sign = tfo.subtract(one, tfo.sign(tfo.real(start) if compute.is_complex else start))
    stop_sign = tfo.subtract(one, tfo.sign(tfo.real(stop) if compute.is_complex else stop))
    signflip = tfo.subtract(one, tfo.floordiv(tfo.multiply(start_sign, stop_sign),
                                              tfo.constant(2, compute)))
    log10 = np.log(10)
    lo = tfo.truediv(tfo.log(tfo.multiply(signflip, start)), tfo.constant(log10, compute))
    hi = tfo.truediv(tfo.log(tfo.multiply(signflip, stop)), tfo.constant(log10, compute))
    exps = tfo.linspace(lo, hi, num) if endpoint or num <= 1 else tfo.linspace(
        lo, tfo.subtract(hi, tfo.truediv(tfo.subtract(hi, lo), num)), num)
    res = tfo.multiply(signflip, tfo.pow_(tfo.constant(10.0, compute), exps))
    if axis != 0:
        rank = res.shape.rank
        axis = axis + rank if axis < 0 else axis
        res = tfo.transpose(res, list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank)))
    return cast(res, dtype)


@_export("diag")
def diag(v, k=0):
    v = asarray(v)
    rank = v.shape.rank
    if rank not in (1, 2):
        raise ValueError(f"Shape must be at most rank 2 but is rank {rank}")
    if rank == 1:
        if v.shape[0] == 0:
            return tfo.zeros([abs(k), abs(k)], dtype=v.dtype)
        return tfo.matrix_diag(v, k=k)
    rows, cols = v.shape.as_list()
    if k <= -rows or k >= cols:
        return tfo.zeros([0], dtype=v.dtype)
    return tfo.matrix_diag_part(v, k=k)


@_export("diagflat")
def diagflat(v, k=0):
    return diag(tfo.reshape(asarray(v), [-1]), k)


@_export("diag_indices")
def diag_indices(n, ndim=2):
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (tfo.range_(n),) * ndim


@_export("tri")
def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    M = M if M is not None else N  # noqa: N806
    dtype = np_dtypes.result_type(dtype if dtype is not None else float)
    if k < 0:
        lower = -k - 1
        if lower > N:
            return tfo.zeros([N, M], dtype)
        o = tfo.ones([N, M], dtype=dtypes.bool)
        return cast(tfo.logical_not(tfo.band_part(o, lower, -1)), dtype)
    o = tfo.ones([N, M], dtype)
    return o if k > M else tfo.band_part(o, -1, k)


def _triangle(m, k, name, lower):
    m = asarray(m)
    if m.shape.rank is None:
        raise ValueError(f"Argument to {name} should have known rank")
    shape = m.shape.as_list()
    if len(shape) < 2:
        raise ValueError(f"Argument to {name} must have rank at least 2")
    if shape[-1] is None or shape[-2] is None:
        raise ValueError("Currently, the last two dimensions of the input array need to be "
                         "known.")
    z = tfo.zeros_like(m)
    mask = tfo.broadcast_to(tri(*shape[-2:], k=k if lower else k - 1, dtype=bool), tfo.shape(m))
    return tfo.where(mask, m, z) if lower else tfo.where(mask, z, m)


@_export("tril")
def tril(m, k=0):
    return _triangle(m, k, "tril", True)


@_export("triu")
def triu(m, k=0):
    return _triangle(m, k, "triu", False)


@_export("vander")
def vander(x, N=None, increasing=False):  # noqa: N803
    x = asarray(x)
    if x.shape.rank != 1:
        raise ValueError("x must be a one-dimensional array")
    if N is None:
        N = x.shape[0]  # noqa: N806
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = tfo.range_(0, N, 1) if increasing else tfo.range_(N - 1, -1, -1)
    return tfo.pow_(tfo.expand_dims(x, -1), cast(powers, x.dtype))


@_export("meshgrid")
def meshgrid(*xi, **kwargs):
    sparse = kwargs.get("sparse", False)
    if sparse:
        raise ValueError("Function `meshgrid` does not support returning sparse arrays yet. "
                         f"Received: sparse={sparse}")
    copy = kwargs.get("copy", True)
    if not copy:
        raise ValueError(f"Function `meshgrid` only supports copy=True. Received: copy={copy}")
    xi = [asarray(x) for x in xi]
    if np_dtypes.is_numpy_style_promotion() and xi:
        # TF's meshgrid multiplies each input by ones of the first's dtype with `*`, which
        # promotes under NumPy behavior
        xi = [cast(x, np_dtypes.result_type(x, xi[0].dtype)) for x in xi]
    return tfo.meshgrid(*xi, indexing=kwargs.get("indexing", "xy"))


@_export("ix_")
def ix_(*args):
    n = len(args)
    output = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.shape.rank != 1:
            raise ValueError(f"Arguments must be 1-d, got arg {i} of rank {a.shape.rank}")
        new_shape = [1] * n
        new_shape[i] = -1
        if a.dtype == dtypes.bool:
            output.append(tfo.reshape(tfo.reshape(tfo.where(a), [-1]), new_shape))
        elif a.dtype.is_integer:
            output.append(tfo.reshape(a, new_shape))
        else:
            raise ValueError(f"Only integer and bool dtypes are supported, got {a.dtype}")
    return output
