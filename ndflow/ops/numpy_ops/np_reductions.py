"""TF-NumPy's reductions: sum/prod/mean/amax/amin/var/std/average, the nan-reductions, ptp,
count_nonzero, all/any, argmax/argmin, trace (cumsum/cumprod and diff live in np_scans)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
from ndflow.ops.numpy_ops.np_arrays import array, asarray, astype, cast, is_inexact, static_rank
from ndflow.ops.numpy_ops.np_math_ops import isnan
from ndflow.ops.numpy_ops.np_scans import (  # noqa: F401 - re-exported
    cumprod,
    cumsum,
    diagonal_,
    diff,
)

_TO_INT, _TO_FLOAT = 0, 1


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


def _reduce(fn, a, axis=None, dtype=None, keepdims=None, promote_int=_TO_INT, bool_fn=None,
            preserve_bool=False):
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    keepdims = bool(keepdims)
    a = asarray(a, dtype=dtype)
    if bool_fn is not None and (dtype == dtypes.bool or (preserve_bool and
                                                         a.dtype == dtypes.bool)):
        return bool_fn(a, axis=axis, keepdims=keepdims)
    if dtype is None:
        np_type = np.dtype(a.dtype.as_numpy_dtype)
        if np.issubdtype(np_type, np.integer) or np_type == np.bool_:
            if promote_int == _TO_INT:
                signed = np_type == np.bool_ or np.issubdtype(np_type, np.signedinteger)
                bits = 8 if np_type == np.bool_ else np.iinfo(np_type).bits
                if bits < np.iinfo(np.int_).bits:  # NumPy sums small ints in its int
                    a = cast(a, np.int_ if signed else np.uint)
            elif promote_int == _TO_FLOAT:
                a = cast(a, np_dtypes.result_type(float))
    if isinstance(axis, Tensor) and axis.dtype not in (dtypes.int32, dtypes.int64):
        axis = cast(axis, dtypes.int64)
    return fn(a, axis=axis, keepdims=keepdims)


@_export("sum")
def sum(a, axis=None, dtype=None, keepdims=None):  # noqa: A001 - NumPy's name
    """Sum of elements over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the accumulation and result dtype; by default small integers and booleans are summed as
        int64 (NumPy's int), a boolean dtype gives the logical or.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape.

    Example:
      >>> tnp.sum([[1, 2], [3, 4]], axis=0).numpy()
      array([4, 6])
    """
    return _reduce(tfo.reduce_sum, a, axis, dtype, keepdims, bool_fn=tfo.reduce_any)


@_export("prod")
def prod(a, axis=None, dtype=None, keepdims=None):
    """Product of elements over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the accumulation and result dtype; small integers are multiplied as int64 by default, a
        boolean dtype gives the logical and.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape.

    Example:
      >>> int(tnp.prod([1, 2, 3, 4]))
      24
    """
    return _reduce(tfo.reduce_prod, a, axis, dtype, keepdims, bool_fn=tfo.reduce_all)


@_export("mean")
def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    """Arithmetic mean over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the result dtype; integers and booleans average as the default float.
      out: unsupported; must be None.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape.

    Raises:
      ValueError: if `out` is given.

    Example:
      >>> float(tnp.mean([1, 2, 3, 4]))
      2.5
    """
    if out is not None:
        raise ValueError("Setting out is not supported.")
    return _reduce(tfo.reduce_mean, a, axis, dtype, keepdims, promote_int=_TO_FLOAT)


_EXTREMUM = """{what} over the given axes ({note}).

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.{out}
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape and a's dtype.
{raises}
    Example:
      >>> {example}
    """


def _extrema(which: str, fn, bool_fn, boolean: str, example: str, alias_example: str):
    """tnp.a<which> (amax, amin; `bool_fn` for booleans) and tnp.<which>, its alias."""
    def extremum(a, axis=None, out=None, keepdims=None):
        if out is not None:
            raise ValueError("Setting out is not supported.")
        return _reduce(fn, a, axis, None, keepdims, promote_int=None, bool_fn=bool_fn,
                       preserve_bool=True)

    def alias(a, axis=None, keepdims=None):
        return extremum(a, axis=axis, keepdims=keepdims)
    what = {"max": "Maximum", "min": "Minimum"}[which]
    extremum.__name__ = extremum.__qualname__ = f"a{which}"
    alias.__name__ = alias.__qualname__ = which
    extremum.__doc__ = _EXTREMUM.format(
        what=what, note=f"the logical {boolean} for booleans", example=example,
        out="\n      out: unsupported; must be None.",
        raises="\n    Raises:\n      ValueError: if `out` is given.\n")
    alias.__doc__ = _EXTREMUM.format(what=what, note=f"the same as `tnp.a{which}`", out="",
                                     raises="", example=alias_example)
    return _export(f"a{which}")(extremum), _export(which)(alias)


amax, max = _extrema("max", tfo.reduce_max, tfo.reduce_any, "or",  # noqa: A001
                     "tnp.amax([[1, 5], [3, 2]], axis=1).numpy()\n      array([5, 3])",
                     "int(tnp.max([4, 9, 2]))\n      9")
amin, min = _extrema("min", tfo.reduce_min, tfo.reduce_all, "and",  # noqa: A001
                     "tnp.amin([[1, 5], [3, 2]], axis=1).numpy()\n      array([1, 2])",
                     "int(tnp.min([4, 9, 2]))\n      2")


@_export("var")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    """Variance, the mean squared deviation from the mean, over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the working and result dtype; integers use the default float.
      out: unsupported; must be None.
      ddof: delta degrees of freedom: the divisor is N - ddof. A nonzero `ddof` needs `dtype`
        (without it TensorFlow's TypeError is raised, as in TF-NumPy).
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape.

    Raises:
      ValueError: if `out` is given.
      TypeError: for a nonzero `ddof` without `dtype`.

    Example:
      >>> float(tnp.var([1., 2., 3., 4.]))
      1.25
    """
    if out is not None:
        raise ValueError("Setting out is not supported.")
    working = np_dtypes.result_type(a, dtype) if dtype else None
    if ddof != 0:
        def fn(t, axis, keepdims):
            centered = tfo.subtract(t, tfo.reduce_mean(t, axis=axis, keepdims=True))
            if t.dtype.is_complex:
                sq = cast(tfo.real(tfo.multiply(centered, tfo.conj(centered))), t.dtype)
            else:
                sq = tfo.square(centered)
            total = tfo.reduce_sum(sq, axis=axis, keepdims=keepdims)
            if axis is None:
                n = tfo.size(t)
            else:
                axes = np.atleast_1d(axis)
                n = tfo.reduce_prod(tfo.gather(tfo.shape(t), [int(x) % static_rank(t)
                                                               for x in axes]))
            # TF-NumPy casts to the caller's dtype here: None (no dtype) is TF's TypeError
            return tfo.cast(tfo.truediv(total, cast(tfo.subtract(n, ddof), t.dtype)), dtype)
    else:
        fn = tfo.reduce_variance
    result = _reduce(fn, a, axis, working, keepdims, promote_int=_TO_FLOAT)
    return cast(result, np_dtypes.result_type(dtype)) if dtype else result


@_export("std")
def std(a, axis=None, keepdims=None):
    """Standard deviation (the square root of `tnp.var` with ddof=0) over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A floating tensor of the reduced shape.

    Example:
      >>> float(tnp.std([1., 3.]))
      1.0
    """
    return _reduce(tfo.reduce_std, a, axis, None, keepdims, promote_int=_TO_FLOAT)


@_export("ptp")
def ptp(a, axis=None, keepdims=None):
    """Range of values (maximum minus minimum, 'peak to peak') over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape and a's dtype.

    Example:
      >>> int(tnp.ptp([4, 1, 9]))
      8
    """
    return tfo.subtract(amax(a, axis=axis, keepdims=keepdims),
                        amin(a, axis=axis, keepdims=keepdims))


def _nan_reduction(name, reduction, init):
    def f(a, axis=None, dtype=None, keepdims=False):
        a = array(a, copy=False)
        v = array(init, dtype=a.dtype, copy=False)
        return reduction(tfo.where(isnan(a), tfo.broadcast_to(v, tfo.shape(a)), a),
                         axis=axis, dtype=dtype, keepdims=keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{reduction.__name__.capitalize()} over the given axes, counting NaNs as {init}.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the accumulation and result dtype (see `tnp.{reduction.__name__}`).
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape.

    Example:
      >>> float(tnp.{name}([2., np.nan, 3.]))
      {"5.0" if init == 0 else "6.0"}
    """
    return _export(name)(f)


nansum = _nan_reduction("nansum", sum, 0)


nanprod = _nan_reduction("nanprod", prod, 1)


@_export("nanmean")
def nanmean(a, axis=None, dtype=None, keepdims=None):
    """Mean over the given axes, ignoring NaNs.

    Args:
      a: array_like input. Non-float input is averaged as by `tnp.mean`.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      dtype: the result dtype.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A tensor of the reduced shape (NaN where every element is NaN).

    Example:
      >>> float(tnp.nanmean([1., np.nan, 3.]))
      2.0
    """
    a = array(a, copy=False)
    if not is_inexact(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    not_nan = tfo.logical_not(isnan(a))
    dtype = dtype or a.dtype.as_numpy_dtype
    count = sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims)
    return tfo.truediv(nansum(a, axis=axis, dtype=dtype, keepdims=keepdims), count)


def _truth(name: str, fn, which: str, example: str):
    """tnp.<name> (all, any): `fn` over the truth values of an array_like."""
    def truth(a, axis=None, keepdims=None):
        return fn(asarray(a, dtype=bool), axis=axis, keepdims=bool(keepdims))
    truth.__name__ = truth.__qualname__ = name
    truth.__doc__ = f"""Whether {which} element is truthy over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.
      keepdims: if True, the reduced axes stay as axes of size 1.

    Returns:
      A boolean tensor of the reduced shape.

    Example:
      >>> {example}
    """
    return _export(name)(truth)


all = _truth("all", tfo.reduce_all, "every",  # noqa: A001
             "bool(tnp.all([True, False]))\n      False")
any = _truth("any", tfo.reduce_any, "some",  # noqa: A001
             "tnp.any([[0, 1], [0, 0]], axis=1).numpy()\n      array([ True, False])")


@_export("count_nonzero")
def count_nonzero(a, axis=None):
    """Counts the nonzero elements over the given axes.

    Args:
      a: array_like input.
      axis: an int or tuple of ints to reduce over; None reduces every axis.

    Returns:
      An int64 tensor of the reduced shape.

    Example:
      >>> int(tnp.count_nonzero([0, 1, 2, 0]))
      2
    """
    return tfo.count_nonzero(array(a, copy=False), axis)


def _argminmax(fn, a, axis):
    a = array(a, copy=False)
    if axis is None:
        a = tfo.reshape(a, [-1])
        return fn(a, axis=0)
    if a.shape.rank == 0:
        a = tfo.reshape(a, [1])
    return fn(a, axis=axis)


def _arg_function(name: str, fn, which: str, example: str):
    """tnp.<name> (argmax, argmin) by `fn` along an axis or over the flattened array."""
    def arg(a, axis=None):
        return _argminmax(fn, a, axis)
    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = f"""Indices of the {which} values along an axis (the first one on ties).

    Args:
      a: array_like input.
      axis: the axis to search; None searches the flattened array.

    Returns:
      An int64 tensor of a's shape without `axis`.

    Example:
      >>> {example}
    """
    return _export(name)(arg)


argmax = _arg_function("argmax", tfo.argmax, "maximum",
                       "tnp.argmax([[1, 5], [3, 2]], axis=1).numpy()\n      array([1, 0])")
argmin = _arg_function("argmin", tfo.argmin, "minimum", "int(tnp.argmin([3, 1, 2]))\n      1")


@_export("average")
def average(a, axis=None, weights=None, returned=False):
    """Weighted average over an axis.

    Args:
      a: array_like input.
      axis: an int, or None to average every element.
      weights: optional weights, shaped as `a` or rank 1 along `axis`.
      returned: if True, also return the sum of the weights.

    Returns:
      The average as a floating tensor, or `(average, sum_of_weights)` when `returned`.

    Raises:
      ValueError: if `axis` is not an int, or the weights' shape does not fit `a`.

    Example:
      >>> float(tnp.average([1., 2., 3.], weights=[3., 1., 0.]))
      1.25
    """
    if axis is not None and not isinstance(axis, int):
        raise ValueError(f"Argument `axis` must be an integer. Received axis={axis} (of type "
                         f"{type(axis)})")
    a = array(a, copy=False)
    default_float = np_dtypes.result_type(float)
    if weights is None:
        if not is_inexact(a):
            a = astype(a, np_dtypes.result_type(a.dtype, default_float))
        avg = tfo.reduce_mean(a, axis=axis)
        if returned:
            n = tfo.size(a) if axis is None else tfo.shape(a)[axis]
            weights_sum = cast(n, a.dtype)
    else:
        out = np_dtypes.result_type(a.dtype, weights) if is_inexact(a) else \
            np_dtypes.result_type(a.dtype, weights, default_float)
        a, weights = array(a, out, copy=False), array(weights, out, copy=False)
        if axis is None or a.shape.rank == weights.shape.rank:
            if a.shape != weights.shape:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            weights_sum = tfo.reduce_sum(weights, axis=axis)
            avg = tfo.truediv(tfo.reduce_sum(tfo.multiply(a, weights), axis=axis), weights_sum)
        else:
            if weights.shape.rank != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            weights_sum = tfo.reduce_sum(weights)
            avg = tfo.truediv(tfo.tensordot(a, weights, [[axis], [0]]), weights_sum)
    if returned:
        return avg, tfo.broadcast_to(weights_sum, tfo.shape(avg))
    return avg


@_export("trace")
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along a diagonal of the 2-D slices spanned by `axis1` and `axis2`.

    Args:
      a: array_like input. of rank >= 2.
      offset: diagonal offset (positive above the main diagonal).
      axis1: first axis of the 2-D slices.
      axis2: second axis.
      dtype: the accumulation and result dtype.

    Returns:
      A tensor of a's shape without the two axes.

    Example:
      >>> int(tnp.trace([[1, 2], [3, 4]]))
      5
    """
    if dtype:
        dtype = np_dtypes.result_type(dtype)
    a = asarray(a, dtype)
    rank = a.shape.rank
    if offset == 0 and rank is not None and axis1 in (-2, rank - 2) and \
            axis2 in (-1, rank - 1):
        return tfo.trace(a)  # keeps a's dtype, as TF-NumPy's fast path
    from_diag = diagonal_(a, offset, axis1, axis2)
    return sum(from_diag, -1, dtype)
