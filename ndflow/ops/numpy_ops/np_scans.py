"""TF-NumPy's functions along one axis that keep it: cumsum/cumprod and diff, and the
diagonal extraction that trace and tnp.diagonal share."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_arrays import asarray, cast, static_rank


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


def _scan(fn, a, axis, dtype):
    a = asarray(a, dtype=dtype)
    if dtype is None and a.dtype.is_integer:
        promoted = np.promote_types(a.dtype.as_numpy_dtype, int)
        if promoted != a.dtype.as_numpy_dtype:
            a = cast(a, promoted)
    if axis is None:
        a, axis = tfo.reshape(a, [-1]), 0
    elif axis < 0:
        axis += static_rank(a)
    return fn(a, axis)


_SCAN_DOC = """Cumulative {what} along an axis.

    Args:
      a: array_like input.
      axis: the axis to accumulate along; None uses the flattened array.
      dtype: the result dtype; small integers accumulate as int64 by default.

    Returns:
      A tensor of a's shape (rank 1 when `axis` is None).

    Example:
      >>> tnp.{name}({example}).numpy()
      {out}
    """


def _scan_function(fn, what: str, example: str, out: str):
    """tnp.<fn's name> (cumsum, cumprod): `fn` along an axis of an array_like."""
    def scan(a, axis=None, dtype=None):
        return _scan(fn, a, axis, dtype)
    scan.__name__ = scan.__qualname__ = fn.__name__
    scan.__doc__ = _SCAN_DOC.format(what=what, name=fn.__name__, example=example, out=out)
    return _export(fn.__name__)(scan)


cumsum = _scan_function(tfo.cumsum, "sum", "[1, 2, 3]", "array([1, 3, 6])")
cumprod = _scan_function(tfo.cumprod, "product", "[1, 2, 3, 4]", "array([ 1,  2,  6, 24])")


@_export("diff")
def diff(a, n=1, axis=-1):
    """The n-th discrete difference `a[i+1] - a[i]` along an axis.

    Args:
      a: array_like input. Its rank must be known.
      n: how many times to take differences.
      axis: the axis to difference along.

    Returns:
      A tensor whose `axis` is n shorter (booleans give `!=`).

    Raises:
      ValueError: if the rank is unknown, `axis` is out of range or n < 0.

    Example:
      >>> tnp.diff([1, 4, 9, 16]).numpy()
      array([3, 5, 7])
    """
    a = asarray(a)
    nd = a.shape.rank
    if nd is None:
        raise ValueError("Function `diff` currently requires a known rank for input `a`. "
                         f"Received: a={a} (unknown rank)")
    if (axis + nd if axis < 0 else axis) >= nd:
        raise ValueError(f"Argument `axis` (received axis={axis}) is out of bounds for input "
                         f"{a} of rank {nd}.")
    if n < 0:
        raise ValueError(f"Argument `order` must be a non-negative integer. Received: axis={n}")
    hi, lo = [slice(None)] * nd, [slice(None)] * nd
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    op = tfo.not_equal if a.dtype == dtypes.bool else tfo.subtract
    for _ in range(n):
        a = op(a[tuple(hi)], a[tuple(lo)])
    return a


def diagonal_(a, offset=0, axis1=0, axis2=1):
    """The diagonals of `a` between `axis1` and `axis2`, last (NumPy's diagonal)."""
    a = asarray(a)
    rank = static_rank(a)
    ax1, ax2 = axis1 % rank, axis2 % rank
    perm = [i for i in range(rank) if i not in (ax1, ax2)] + [ax1, ax2]
    a = tfo.transpose(a, perm)
    rows, cols = a.shape.as_list()[-2:]
    if rows is not None and cols is not None and (offset <= -rows or offset >= cols):
        return tfo.zeros(a.shape.as_list()[:-2] + [0], dtype=a.dtype)
    return tfo.matrix_diag_part(a, k=offset)
