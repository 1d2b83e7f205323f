"""TF-NumPy's array construction: zeros/ones/full/eye, triangles, diagonals and Vandermonde
matrices (the ranges and grids, arange ... ix_, live in np_ranges and are re-exported here)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_creation_docs, np_dtypes
from ndflow.ops.numpy_ops.np_arrays import asarray, cast, convert_to_tensor
from ndflow.ops.numpy_ops.np_ranges import (  # noqa: F401 - re-exported
    arange,
    geomspace,
    ix_,
    linspace,
    logspace,
    meshgrid,
)


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


def _filled_dtype(dtype):
    """The dtype of tnp.zeros/ones: NumPy's result type of `dtype`, or the default float."""
    return np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()


def _like_dtype(a, dtype):
    """The dtype of tnp.zeros_like/ones_like: `dtype`, or a's NumPy dtype."""
    return dtypes.as_dtype(np_dtypes.result_type_unary(a, dtype))


@_export("zeros")
def zeros(shape, dtype=float):
    return tfo.zeros(shape, dtype=_filled_dtype(dtype))


@_export("empty")
def empty(shape, dtype=float):
    return zeros(shape, dtype)


@_export("zeros_like")
def zeros_like(a, dtype=None):
    return tfo.zeros_like(asarray(a), _like_dtype(a, dtype))


@_export("empty_like")
def empty_like(a, dtype=None):
    return zeros_like(a, dtype)


@_export("ones")
def ones(shape, dtype=float):
    return tfo.ones(shape, dtype=_filled_dtype(dtype))


@_export("ones_like")
def ones_like(a, dtype=None):
    return tfo.ones_like(asarray(a), _like_dtype(a, dtype))


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
    """Indices that address the main diagonal of an n x n x ... array.

    Args:
      n: size of each axis.
      ndim: number of axes.

    Returns:
      A tuple of `ndim` identical int32 tensors `range(n)`.

    Raises:
      ValueError: if `n` or `ndim` is negative.

    Example:
      >>> [t.numpy() for t in tnp.diag_indices(2)]
      [array([0, 1], dtype=int32), array([0, 1], dtype=int32)]
    """
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


def _triangle_function(name: str, lower: bool, out: str):
    """tnp.tril (`lower`) or tnp.triu: one triangle of each matrix, the other zeroed."""
    def triangle(m, k=0):
        return _triangle(m, k, name, lower)
    side, zeroed = ("lower", "above") if lower else ("upper", "below")
    triangle.__name__ = triangle.__qualname__ = name
    triangle.__doc__ = f"""The {side} triangle of (each matrix in) `m`: elements {zeroed}
    diagonal `k` zeroed.

    Args:
      m: array_like of rank >= 2 whose last two dimensions are known.
      k: the diagonal {zeroed} which to zero (positive above the main one).

    Returns:
      A tensor of m's shape and dtype.

    Raises:
      ValueError: if the rank is unknown or < 2, or the last two dimensions are unknown.

    Example:
      >>> tnp.{name}([[1, 2], [3, 4]]).numpy()
      array({out})
    """
    return _export(name)(triangle)


tril = _triangle_function("tril", True, "[[1, 0],\n             [3, 4]]")
triu = _triangle_function("triu", False, "[[1, 2],\n             [0, 4]]")


@_export("vander")
def vander(x, N=None, increasing=False):  # noqa: N803
    """The Vandermonde matrix of `x`: its columns are powers of `x`.

    Args:
      x: a rank-1 array.
      N: number of columns; None means len(x).
      increasing: if True the powers go 0, 1, ..., N-1 left to right; else they decrease.

    Returns:
      A tensor of shape [len(x), N] and x's dtype.

    Raises:
      ValueError: if `x` is not rank 1 or N is negative.

    Example:
      >>> tnp.vander([1, 2, 3]).numpy()
      array([[1, 1, 1],
             [4, 2, 1],
             [9, 3, 1]])
    """
    x = asarray(x)
    if x.shape.rank != 1:
        raise ValueError("x must be a one-dimensional array")
    if N is None:
        N = x.shape[0]  # noqa: N806
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = tfo.range_(0, N, 1) if increasing else tfo.range_(N - 1, -1, -1)
    return tfo.pow_(tfo.expand_dims(x, -1), cast(powers, x.dtype))


attach(globals(), np_creation_docs.DOCS)
