"""TF-NumPy's ranges and grids: arange, linspace, logspace, geomspace, meshgrid and ix_."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import array, asarray, cast


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


@_export("arange")
def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in the half-open interval [start, stop).

    Args:
      start: the first value; with `stop` None it is the stop and the range starts at 0.
      stop: the end (excluded).
      step: the spacing, nonzero (may be negative).
      dtype: the result dtype; None gives the NumPy result type of the arguments.

    Returns:
      A rank-1 tensor (empty when the interval is empty).

    Raises:
      ValueError: if `step` is 0.

    Example:
      >>> tnp.arange(1, 2, 0.25).numpy()
      array([1.  , 1.25, 1.5 , 1.75])
    """
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
    """`num` evenly spaced values from `start` to `stop`.

    Args:
      start: the first value (a scalar or an array).
      stop: the last value, or the end when `endpoint` is False.
      num: number of values, >= 0.
      endpoint: whether `stop` is the last value.
      retstep: if True, also return the spacing.
      dtype: if set (the default `float`), compute in the float type of start and stop, flooring for
        an integer dtype.
      axis: where the new axis goes for array bounds.

    Returns:
      A tensor of the values, or `(values, step)` when `retstep`.

    Raises:
      ValueError: if `num` is negative.

    Example:
      >>> tnp.linspace(0., 1., 5).numpy()
      array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
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
    """`num` values spaced evenly on a log scale: `base ** linspace(start, stop)`.

    Args:
      start: the first exponent.
      stop: the last exponent (see `endpoint`).
      num: number of values.
      endpoint: whether `base ** stop` is included.
      base: the base of the log scale.
      dtype: ignored; the float type of start and stop is used.
      axis: where the new axis goes for array bounds.

    Returns:
      A floating tensor of the values.

    Example:
      >>> tnp.logspace(0., 2., 3).numpy()
      array([  1.,  10., 100.])
    """
    dtype = np_dtypes.result_type([start * 1.0, stop * 1.0])
    result = linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return cast(tfo.pow_(cast(tfo.convert_to_tensor(base), result.dtype), result), dtype)


@_export("geomspace")
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values forming a geometric progression from `start` to `stop`.

    Args:
      start: the first value (nonzero).
      stop: the last value (nonzero, the same sign).
      num: number of values.
      endpoint: whether `stop` is included.
      dtype: the result dtype; None gives the default float (or the inputs' type).
      axis: where the new axis goes for array bounds.

    Returns:
      A tensor of the values.

    Example:
      >>> tnp.geomspace(1., 1000., 4).numpy()
      array([   1.,   10.,  100., 1000.])
    """
    if dtype:
        dtype = dtypes.as_dtype(dtype)
    else:
        dtype = np_dtypes.result_type(start, stop, float(num),
                                      tfo.zeros((), dtype=np_dtypes.result_type(
                                          np_dtypes.default_float_type())))
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


@_export("meshgrid")
def meshgrid(*xi, **kwargs):
    """Coordinate arrays for a grid spanned by 1-D coordinate vectors.

    Args:
      *xi: rank-1 array_likes, one per grid axis.
      **kwargs: `indexing` ('xy', Cartesian, the default; or 'ij', matrix); `sparse` must be False
        and `copy` True.

    Returns:
      A list of tensors, one per input, each of the full grid shape.

    Raises:
      ValueError: for `sparse=True` or `copy=False`.

    Example:
      >>> [t.shape for t in tnp.meshgrid([1, 2], [3, 4, 5])]
      [TensorShape([3, 2]), TensorShape([3, 2])]
    """
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
    """Open-mesh index arrays from 1-D sequences, for cross-product indexing.

    Args:
      *args: rank-1 int arrays, or boolean masks (which become the indices of their True entries).

    Returns:
      A list of tensors; the i-th has shape 1 on every axis but axis i.

    Raises:
      ValueError: if an argument is not rank 1 or not of an integer or boolean dtype.

    Example:
      >>> [t.shape for t in tnp.ix_([0, 1], [2, 3, 4])]
      [TensorShape([2, 1]), TensorShape([1, 3])]
    """
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
