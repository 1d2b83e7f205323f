"""TF-NumPy's array construction: zeros/ones/full/eye, triangles, diagonals and Vandermonde
matrices (the ranges and grids, arange ... ix_, live in np_ranges and are re-exported here)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops import np_dtypes
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


@_export("zeros")
def zeros(shape, dtype=float):
    """An array of the given shape filled with zeros.

    Args:
      shape: an int or a sequence of ints (or an int tensor) for the result's shape.
      dtype: the result dtype; None or the default `float` gives the default float type.

    Returns:
      A tensor of `shape` and `dtype`.

    Example:
      >>> tnp.zeros((2,)).numpy()
      array([0., 0.])
    """
    dtype = np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()
    return tfo.zeros(shape, dtype=dtype)


@_export("empty")
def empty(shape, dtype=float):
    """An array of the given shape; unlike NumPy its elements are zeros, never garbage.

    Args:
      shape: an int or a sequence of ints (or an int tensor) for the result's shape.
      dtype: the result dtype; None or the default `float` gives the default float type.

    Returns:
      A tensor of `shape` and `dtype` (the same as `tnp.zeros`).

    Example:
      >>> tnp.empty((1,)).numpy()
      array([0.])
    """
    return zeros(shape, dtype)


@_export("zeros_like")
def zeros_like(a, dtype=None):
    """An array of zeros with the shape (and by default the dtype) of `a`.

    Args:
      a: array_like whose shape is used.
      dtype: the result dtype; None keeps a's NumPy dtype.

    Returns:
      A tensor of a's shape.

    Example:
      >>> tnp.zeros_like([1, 2]).numpy()
      array([0, 0])
    """
    return tfo.zeros_like(asarray(a), dtypes.as_dtype(np_dtypes.result_type_unary(a, dtype)))


@_export("empty_like")
def empty_like(a, dtype=None):
    """An array with the shape of `a`; filled with zeros (as `tnp.zeros_like`).

    Args:
      a: array_like whose shape is used.
      dtype: the result dtype; None keeps a's NumPy dtype.

    Returns:
      A tensor of a's shape.

    Example:
      >>> tnp.empty_like([1]).numpy()
      array([0])
    """
    return zeros_like(a, dtype)


@_export("ones")
def ones(shape, dtype=float):
    """An array of the given shape filled with ones.

    Args:
      shape: an int or a sequence of ints (or an int tensor) for the result's shape.
      dtype: the result dtype; None or the default `float` gives the default float type.

    Returns:
      A tensor of `shape` and `dtype`.

    Example:
      >>> tnp.ones(2, dtype=tnp.int32).numpy()
      array([1, 1], dtype=int32)
    """
    dtype = np_dtypes.result_type(dtype) if dtype else np_dtypes.default_float_type()
    return tfo.ones(shape, dtype=dtype)


@_export("ones_like")
def ones_like(a, dtype=None):
    """An array of ones with the shape (and by default the dtype) of `a`.

    Args:
      a: array_like whose shape is used.
      dtype: the result dtype; None keeps a's NumPy dtype.

    Returns:
      A tensor of a's shape.

    Example:
      >>> tnp.ones_like([1.]).numpy()
      array([1.])
    """
    return tfo.ones_like(asarray(a), dtypes.as_dtype(np_dtypes.result_type_unary(a, dtype)))


@_export("eye")
def eye(N, M=None, k=0, dtype=float):  # noqa: N803 - NumPy's names
    """A 2-D array with ones on one diagonal and zeros elsewhere.

    Args:
      N: number of rows.
      M: number of columns; None (or 0) means N.
      k: the diagonal: 0 the main one, positive above it, negative below.
      dtype: the result dtype; None or the default `float` gives the default float type.

    Returns:
      A tensor of shape [N, M].

    Example:
      >>> tnp.eye(2, 3, k=1).numpy()
      array([[0., 1., 0.],
             [0., 0., 1.]])
    """
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
    """The n x n identity matrix.

    Args:
      n: number of rows and columns.
      dtype: the result dtype; None or the default `float` gives the default float type.

    Returns:
      A tensor of shape [n, n].

    Example:
      >>> tnp.identity(2).numpy()
      array([[1., 0.],
             [0., 1.]])
    """
    return eye(N=n, M=n, dtype=dtype)


@_export("full")
def full(shape, fill_value, dtype=None):
    """An array of the given shape filled with `fill_value`.

    Args:
      shape: an int or a sequence of ints (or an int tensor) for the result's shape.
      fill_value: a scalar, or an array broadcastable to `shape`.
      dtype: the result dtype; None infers it from `fill_value`.

    Returns:
      A tensor of `shape`.

    Example:
      >>> tnp.full((2,), 7).numpy()
      array([7, 7])
    """
    if not isinstance(shape, Tensor):
        shape = convert_to_tensor(shape, dtype_hint=dtypes.int32)
    shape = tfo.reshape(shape, [-1]) if shape.shape.rank == 0 else shape
    return tfo.broadcast_to(asarray(fill_value, dtype=dtype), shape)


@_export("full_like")
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """An array with the shape of `a` filled with `fill_value`.

    Args:
      a: array_like whose shape (and by default dtype) is used.
      fill_value: a scalar or an array broadcastable to a's shape.
      dtype: the result dtype; None keeps a's.
      order: only 'K' is accepted.
      subok: only True is accepted.
      shape: unsupported; must be None.

    Returns:
      A tensor of a's shape.

    Raises:
      ValueError: for another `order`, `subok=False` or a `shape`.

    Example:
      >>> tnp.full_like([1., 2.], 3).numpy()
      array([3., 3.])
    """
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
    """Extracts a diagonal of a 2-D array, or builds a 2-D array from a 1-D diagonal.

    Args:
      v: a rank-1 array (the diagonal to place) or a rank-2 array (to read from).
      k: the diagonal: 0 the main one, positive above it, negative below.

    Returns:
      A rank-2 tensor for rank-1 `v`; a rank-1 tensor for rank-2 `v`.

    Raises:
      ValueError: if `v` has another rank.

    Example:
      >>> tnp.diag([[1, 2], [3, 4]]).numpy()
      array([1, 4])
    """
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
    """A 2-D array with the flattened input on diagonal `k`.

    Args:
      v: array_like; flattened first.
      k: the diagonal (positive above the main one).

    Returns:
      A square rank-2 tensor of v's dtype.

    Example:
      >>> tnp.diagflat([[1, 2]]).numpy()
      array([[1, 0],
             [0, 2]])
    """
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
    """A 2-D array with ones on and below diagonal `k` and zeros above it.

    Args:
      N: number of rows.
      M: number of columns; None means N.
      k: the diagonal up to which ones are filled (positive above the main one).
      dtype: the result dtype; None gives the default float.

    Returns:
      A tensor of shape [N, M].

    Example:
      >>> tnp.tri(3, dtype=int).numpy()
      array([[1, 0, 0],
             [1, 1, 0],
             [1, 1, 1]])
    """
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
    """The lower triangle of (each matrix in) `m`: elements above diagonal `k` zeroed.

    Args:
      m: array_like of rank >= 2 whose last two dimensions are known.
      k: the diagonal above which to zero (positive above the main one).

    Returns:
      A tensor of m's shape and dtype.

    Raises:
      ValueError: if the rank is unknown or < 2, or the last two dimensions are unknown.

    Example:
      >>> tnp.tril([[1, 2], [3, 4]]).numpy()
      array([[1, 0],
             [3, 4]])
    """
    return _triangle(m, k, "tril", True)


@_export("triu")
def triu(m, k=0):
    """The upper triangle of (each matrix in) `m`: elements below diagonal `k` zeroed.

    Args:
      m: array_like of rank >= 2 whose last two dimensions are known.
      k: the diagonal below which to zero (positive above the main one).

    Returns:
      A tensor of m's shape and dtype.

    Raises:
      ValueError: if the rank is unknown or < 2, or the last two dimensions are unknown.

    Example:
      >>> tnp.triu([[1, 2], [3, 4]]).numpy()
      array([[1, 2],
             [0, 4]])
    """
    return _triangle(m, k, "triu", False)


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
