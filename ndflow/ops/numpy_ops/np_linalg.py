"""TF-NumPy's products: dot, matmul, vdot, inner, outer, tensordot, kron, cross, einsum,
polyval (NumPy's promotion on the operands)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_arrays import asarray, promote_dtype, static_rank
from ndflow.ops.numpy_ops.np_math_ops import bin_op


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


@_export("dot")
def dot(a, b):
    """NumPy's dot product of `a` and `b`.

    A scalar operand multiplies; otherwise the sum runs over the last axis of `a` and the
    second-to-last axis of `b` (its only axis when `b` is rank 1).

    Args:
      a: array_like of known rank.
      b: array_like of known rank.

    Returns:
      A tensor in the NumPy result type of both operands.

    Example:
      >>> int(tnp.dot([1, 2], [3, 4]))
      11
    """
    def f(a, b):
        if static_rank(a) == 0 or static_rank(b) == 0:
            return tfo.multiply(a, b)
        if static_rank(b) == 1:
            return tfo.tensordot(a, b, [[-1], [-1]])
        return tfo.tensordot(a, b, [[-1], [-2]])
    return bin_op(f, a, b)


@_export("matmul")
def matmul(x1, x2):
    """Matrix product of `x1` and `x2`.

    A rank-1 operand acts as a row (x1) or column (x2) vector; higher ranks are stacks of
    matrices whose leading dimensions broadcast.

    Args:
      x1: array_like of rank >= 1.
      x2: array_like of rank >= 1.

    Returns:
      A tensor in the NumPy result type of both operands.

    Raises:
      ValueError: if the inner dimensions do not match.

    Example:
      >>> tnp.matmul([[1, 2]], [[3], [4]]).numpy()
      array([[11]])
    """
    def f(a, b):
        try:
            if static_rank(b) == 1:
                return tfo.tensordot(a, b, 1)
            if static_rank(a) == 1:
                return tfo.tensordot(a, b, [[0], [-2]])
            return tfo.matmul(a, b)
        except InvalidArgumentError as err:  # TF-NumPy reports shape mismatches as ValueError
            raise ValueError(str(err)) from None
    return bin_op(f, x1, x2)


@_export("tensordot")
def tensordot(a, b, axes=2):
    """Sums products over the given axes of `a` and `b`.

    Args:
      a: array_like input.
      b: array_like input.
      axes: an int N (the last N axes of `a` with the first N of `b`) or a pair of axis lists.

    Returns:
      A tensor in the NumPy result type of both operands: a's free axes followed by b's.

    Example:
      >>> tnp.tensordot(tnp.ones((2, 3)), tnp.ones((3, 4)), axes=1).shape
      TensorShape([2, 4])
    """
    return bin_op(lambda a, b: tfo.tensordot(a, b, axes), a, b)


@_export("inner")
def inner(a, b):
    """Inner product over the last axes of `a` and `b` (multiply for scalars).

    Args:
      a: array_like input.
      b: array_like whose last dimension matches a's.

    Returns:
      A tensor in the NumPy result type of both operands of shape a.shape[:-1] + b.shape[:-1].

    Example:
      >>> int(tnp.inner([1, 2], [3, 4]))
      11
    """
    def f(a, b):
        if static_rank(a) == 0 or static_rank(b) == 0:
            return tfo.multiply(a, b)
        return tfo.tensordot(a, b, [[-1], [-1]])
    return bin_op(f, a, b)


@_export("outer")
def outer(a, b):
    """Outer product of two vectors (the inputs are flattened first).

    Args:
      a: array_like of M elements.
      b: array_like of N elements.

    Returns:
      A tensor of shape [M, N] in the NumPy result type of both operands.

    Example:
      >>> tnp.outer([1, 2], [3, 4]).numpy()
      array([[3, 4],
             [6, 8]])
    """
    return bin_op(lambda a, b: tfo.multiply(tfo.reshape(a, [-1, 1]), tfo.reshape(b, [-1])),
                  a, b)


@_export("vdot")
def vdot(a, b):
    """Dot product of two flattened arrays, conjugating `a` when it is complex.

    Args:
      a: array_like input.
      b: array_like with as many elements as `a`.

    Returns:
      A scalar tensor in the NumPy result type of both operands.

    Example:
      >>> complex(tnp.vdot([1j, 2], [1j, 3]))
      (7+0j)
    """
    a, b = promote_dtype(a, b)
    a, b = tfo.reshape(a, [-1]), tfo.reshape(b, [-1])
    if a.dtype.is_complex:
        a = tfo.conj(a)
    return dot(a, b)


@_export("kron")
def kron(a, b):
    """Kronecker product: blocks of `b` scaled by each element of `a`.

    Args:
      a: array_like of known shape.
      b: array_like of known shape.

    Returns:
      A tensor in the NumPy result type of both operands whose shape is the elementwise product of
      the (left-padded) shapes.

    Example:
      >>> tnp.kron([1, 2], [1, 10]).numpy()
      array([ 1, 10,  2, 20])
    """
    a, b = promote_dtype(a, b)
    ra, rb = static_rank(a), static_rank(b)
    n = max(ra, rb)
    a = tfo.reshape(a, [1] * (n - ra) + a.shape.as_list()) if ra < n else a
    b = tfo.reshape(b, [1] * (n - rb) + b.shape.as_list()) if rb < n else b
    sa, sb = a.shape.as_list(), b.shape.as_list()
    a_inter = [d for s in sa for d in (s, 1)]
    b_inter = [d for s in sb for d in (1, s)]
    out = tfo.multiply(tfo.reshape(a, a_inter), tfo.reshape(b, b_inter))
    return tfo.reshape(out, [x * y for x, y in zip(sa, sb)])


@_export("cross")
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-element vectors along the given axes.

    Args:
      a: array_like; axis `axisa` has 2 or 3 elements.
      b: array_like; axis `axisb` has 2 or 3 elements.
      axisa: the vector axis of `a`.
      axisb: the vector axis of `b`.
      axisc: the vector axis of the result.
      axis: if given, overrides all three axes.

    Returns:
      A tensor in the NumPy result type of both operands; for two 2-element vectors only the z
      component (no vector axis).

    Raises:
      ValueError: if a vector axis does not have 2 or 3 elements.

    Example:
      >>> tnp.cross([1, 0, 0], [0, 1, 0]).numpy()
      array([0, 0, 1])
    """
    def f(a, b):
        ax_a, ax_b, ax_c = (axis, axis, axis) if axis is not None else (axisa, axisb, axisc)
        a = _move_to_last(a, ax_a)
        b = _move_to_last(b, ax_b)
        a_dim, b_dim = a.shape[-1], b.shape[-1]
        if a_dim not in (2, 3) or b_dim not in (2, 3):
            raise ValueError("incompatible dimensions for cross product (dimension must be 2 "
                             f"or 3), got {a_dim} and {b_dim}")
        a, b = _pad_to_3(a), _pad_to_3(b)
        shape = tfo.broadcast_dynamic_shape(tfo.shape(a), tfo.shape(b))
        c = tfo.cross(tfo.broadcast_to(a, shape), tfo.broadcast_to(b, shape))
        if a_dim == 2 and b_dim == 2:
            return c[..., 2]
        rank = static_rank(c)
        ax = ax_c + rank if ax_c < 0 else ax_c
        if ax == rank - 1:
            return c
        return tfo.transpose(c, list(range(ax)) + [rank - 1] + list(range(ax, rank - 1)))
    return bin_op(f, a, b)


def _move_to_last(a, axis):
    rank = static_rank(a)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return a
    return tfo.transpose(a, [i for i in range(rank) if i != axis] + [axis])


def _pad_to_3(a):
    if a.shape[-1] != 2:
        return a
    return tfo.pad(a, [[0, 0]] * (static_rank(a) - 1) + [[0, 1]])


@_export("einsum")
def einsum(subscripts, *operands, **kwargs):
    """Einstein summation over the operands as described by `subscripts`.

    Args:
      subscripts: the equation, e.g. 'ij,jk->ik'.
      *operands: the array_likes.
      **kwargs: `casting` ('safe' promotes the operands to a common dtype, 'no' leaves them) and
        `optimize` (False, True, 'greedy' or 'optimal': the contraction order).

    Returns:
      The result tensor.

    Raises:
      ValueError: for another `casting` or `optimize` value.

    Example:
      >>> tnp.einsum('ij,j->i', [[1, 2], [3, 4]], [1, 1]).numpy()
      array([3, 7])
    """
    casting = kwargs.get("casting", "safe")
    optimize = kwargs.get("optimize", False)
    if casting == "safe":
        operands = promote_dtype(*operands)
    elif casting == "no":
        operands = [asarray(x) for x in operands]
    else:
        raise ValueError('Invalid value for argument `casting`. Expected casting="safe" or '
                         f'casting="no". Received: casting={casting}')
    if optimize not in (False, True, "greedy", "optimal"):
        raise ValueError('Invalid value for argument `optimize`. Expected one of {True, '
                         f'"greedy", "optimal"}}. Received: optimize={optimize}')
    tf_optimize = "optimal" if optimize == "optimal" else "greedy"
    return tfo.einsum(subscripts, *operands, optimize=tf_optimize)


@_export("polyval")
def polyval(p, x):
    """Evaluates a polynomial at `x`: p[0] * x**(n-1) + ... + p[n-1].

    Args:
      p: rank-1 array_like of coefficients, highest power first (a scalar is a constant).
      x: array_like of points.

    Returns:
      A tensor of x's shape in the NumPy result type of both operands.

    Example:
      >>> int(tnp.polyval([1, 0, -1], 3))
      8
    """
    def f(p, x):
        if static_rank(p) == 0:
            p = tfo.reshape(p, [1])
        coeffs = tfo.unstack(p)
        y = tfo.polyval(coeffs, x)
        if len(coeffs) == 1:
            y = tfo.broadcast_to(y, tfo.shape(x))
        return y
    return bin_op(f, p, x)



