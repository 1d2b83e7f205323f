"""The normal CDF and its log, and the Laplace log-CDF, as TF1's distributions compute them
(TF's `ops/distributions/special_math.py`: erf/erfc branches, and for log_ndtr an
asymptotic series below -20 (float64) / -10 (float32) and -ndtr(-x) above 8 / 5)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import log, maximum, minimum, where
from ndflow.ops.array_core import constant
from ndflow.ops.array_fill import ones_like, zeros_like
from ndflow.ops.comparison import greater, less
from ndflow.ops.math import abs as abs_
from ndflow.ops.math import erf, exp, log1p, square
from ndflow.ops.math_special import erfc
from ndflow.ops.math_special import ndtri as math_ndtri

_LOWER = {dtypes.float64: -20.0, dtypes.float32: -10.0}
_UPPER = {dtypes.float64: 8.0, dtypes.float32: 5.0}


def _float_argument(value, arg: str):
    """`value` as a float32 or float64 tensor named `arg` (TF's error for other dtypes)."""
    value = convert_to_tensor(value, name=arg)
    if value.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{arg}.dtype={value.dtype!r} is not handled, see docstring for "
                        "supported types.")
    return value


def ndtr(x, name="ndtr"):
    """P[X < x] for X ~ Normal(0, 1)."""
    with name_scope(name, "ndtr"):
        return _ndtr(_float_argument(x, "x"))


def _ndtr(x):
    half_sqrt_2 = constant(0.5 * np.sqrt(2.0), dtype=x.dtype, name="half_sqrt_2")
    w = x * half_sqrt_2
    z = abs_(w)
    y = where(less(z, half_sqrt_2), 1.0 + erf(w),
              where(greater(w, 0.0), 2.0 - erfc(z), erfc(z)))
    return 0.5 * y


def ndtri(p, name="ndtri"):
    """The x with P[X < x] = p for X ~ Normal(0, 1); -inf for p <= 0 and inf for p >= 1."""
    with name_scope(name, "ndtri"):
        p = _float_argument(p, "p")
        inf = float("inf")
        return where(p <= 0.0, -inf * ones_like(p), where(p >= 1.0, inf * ones_like(p),
                                                          math_ndtri(p)))


def log_ndtr(x, series_order=3, name="log_ndtr"):
    """log P[X < x] for X ~ Normal(0, 1), accurate far into both tails."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    with name_scope(name, "log_ndtr"):
        x = convert_to_tensor(x, name="x")
        if x.dtype not in _LOWER:
            raise TypeError(f"x.dtype={x.dtype!r} is not supported.")
        np_dtype = x.dtype.as_numpy_dtype
        lower, upper = np_dtype(_LOWER[x.dtype]), np_dtype(_UPPER[x.dtype])
        return where(greater(x, upper), -_ndtr(-x),
                     where(greater(x, lower), log(_ndtr(maximum(x, lower))),
                           _log_ndtr_lower(minimum(x, lower), series_order)))


def _log_ndtr_lower(x, series_order):
    log_scale = -0.5 * square(x) - log(-x) - float(0.5 * np.log(2.0 * np.pi))
    return log_scale + log(_log_ndtr_asymptotic_series(x, series_order))


def _log_ndtr_asymptotic_series(x, series_order):
    np_dtype = x.dtype.as_numpy_dtype
    if series_order <= 0:
        return np.array(1, np_dtype)
    x_2 = square(x)
    even_sum, odd_sum = zeros_like(x), zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 1, -2))) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return 1.0 + even_sum - odd_sum


def log_cdf_laplace(x, name="log_cdf_laplace"):
    """log P[X < x] for X ~ Laplace(0, 1)."""
    with name_scope(name, "log_cdf_laplace"):
        x = convert_to_tensor(x, name="x")
        lower_solution = -float(np.log(2.0)) + x
        upper_solution = log1p(-0.5 * exp(-abs_(x)))
        return where(x < 0.0, lower_solution, upper_solution)
