"""TF-NumPy's selection and ordering: take/take_along_axis, nonzero/where/select/compress,
sort/argsort, diagonal."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_array_shape import (
    _export,
    atleast_1d,
    ravel,
    swapaxes,
)
from ndflow.ops.numpy_ops.np_arrays import array, asarray, cast, promote_dtype, static_rank
from ndflow.ops.numpy_ops.np_math_ops import where_
from ndflow.ops.numpy_ops.np_reductions import diagonal_


@_export("take")
def take(a, indices, axis=None, out=None, mode="clip"):
    """Takes elements of `a` at the given indices along an axis.

    Args:
      a: array_like input.
      indices: an int array of positions.
      axis: the axis to take from; None takes from the flattened array.
      out: unsupported; must be None.
      mode: 'clip' clamps indices into range, 'wrap' wraps them around.

    Returns:
      A tensor of a's dtype; its shape is a's with `axis` replaced by the indices' shape.

    Raises:
      ValueError: if `out` is given or `mode` is 'raise' or unknown.

    Example:
      >>> tnp.take([10, 20, 30], [0, 5]).numpy()
      array([10, 30])
    """
    if out is not None:
        raise ValueError("out argument is not supported in take.")
    if mode not in {"raise", "clip", "wrap"}:
        raise ValueError(f"Invalid mode '{mode}' for take")
    a, indices = asarray(a), asarray(indices)
    if axis is None:
        a, axis = tfo.reshape(a, [-1]), 0
    size = cast(tfo.shape(a)[axis], indices.dtype)
    if mode == "clip":
        indices = tfo.clip_by_value(indices, tfo.constant(0, indices.dtype),
                                    tfo.subtract(size, 1))
    elif mode == "wrap":
        indices = tfo.floormod(indices, size)
    else:
        raise ValueError("The 'raise' mode to take is not supported.")
    return tfo.gather(a, indices, axis=axis)


@_export("take_along_axis")
def take_along_axis(arr, indices, axis):
    """Picks values from `arr` by matching index positions along one axis.

    Args:
      arr: array_like input of known rank.
      indices: int array of the same rank as `arr` (negative indices count from the end); the other
        axes broadcast against arr's.
      axis: the axis to index; None uses the flattened array (a NumPy-behavior method).

    Returns:
      A tensor of arr's dtype with the broadcast shape of the indices.

    Example:
      >>> tnp.take_along_axis(tnp.array([[3, 1], [2, 4]]), tnp.array([[1], [0]]), 1).numpy()
      array([[1],
             [2]])
    """
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        return take_along_axis(arr.ravel(), indices, 0)  # a NumPy-behavior method, as in TF
    rank = static_rank(arr)
    axis = axis + rank if axis < 0 else axis
    arr_shape, idx_shape = arr.shape.as_list(), indices.shape.as_list()
    common = np.broadcast_shapes(tuple(arr_shape[:axis] + [1] + arr_shape[axis + 1:]),
                                 tuple(idx_shape[:axis] + [1] + idx_shape[axis + 1:]))
    arr = tfo.broadcast_to(arr, common[:axis] + (arr_shape[axis],) + common[axis + 1:])
    indices = tfo.broadcast_to(indices, common[:axis] + (idx_shape[axis],) + common[axis + 1:])
    size = tfo.constant(arr_shape[axis], indices.dtype)
    indices = tfo.where(tfo.less(indices, tfo.zeros_like(indices)),
                        tfo.add(indices, size), indices)
    if axis != rank - 1:
        arr, indices = swapaxes(arr, axis, -1), swapaxes(indices, axis, -1)
    out_shape = tfo.shape(indices)
    flat_arr = tfo.reshape(arr, [-1, arr.shape[-1]])
    flat_idx = tfo.reshape(indices, [-1, indices.shape[-1]])
    result = tfo.reshape(tfo.gather(flat_arr, flat_idx, batch_dims=1), out_shape)
    return swapaxes(result, axis, -1) if axis != rank - 1 else result


@_export("nonzero")
def nonzero(a):
    """The indices of the nonzero elements of `a`.

    Args:
      a: array_like input. Scalars count as shape (1,).

    Returns:
      A list with one int64 tensor per axis of `a`; together they index the nonzero elements.

    Example:
      >>> [t.numpy() for t in tnp.nonzero([0, 3, 0, 4])]
      [array([1, 3])]
    """
    a = atleast_1d(a)
    rank = static_rank(a)
    return tfo.unstack(tfo.where(cast(a, dtypes.bool)), rank, axis=1)


@_export("where")
def where(condition, x=None, y=None):
    """Chooses from `x` or `y` by `condition`, or gives the indices where it holds.

    Args:
      condition: array_like of booleans.
      x: values where `condition` is True.
      y: values where it is False (give both `x` and `y`, or neither).

    Returns:
      With `x` and `y`: a tensor of the broadcast shape in their promoted dtype. Without them:
      `tnp.nonzero(condition)`.

    Raises:
      ValueError: if only one of `x` and `y` is given.

    Example:
      >>> tnp.where([True, False], [1, 2], [3, 4]).numpy()
      array([1, 4])
    """
    if x is None and y is None:
        return nonzero(asarray(condition, dtype=np.bool_))
    if x is not None and y is not None:
        return where_(condition, x, y)
    raise ValueError("Both x and y must be ndarrays, or both must be None.")


@_export("select")
def select(condlist, choicelist, default=0):
    """Picks from several choices by the first condition that holds.

    Args:
      condlist: a non-empty list of boolean arrays.
      choicelist: a list of arrays, one per condition.
      default: the value where no condition holds.

    Returns:
      A tensor of the broadcast shape in the promoted dtype of the choices and `default`.

    Raises:
      ValueError: if the lists are empty or differ in length.

    Example:
      >>> tnp.select([tnp.array([True, False])], [tnp.array([1, 2])], 9).numpy()
      array([1, 9])
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    choices = promote_dtype(default, *choicelist)
    output = choices[0]
    for cond, choice in zip(condlist[::-1], choices[1:][::-1]):
        output = where_(cond, choice, output)
    return output


@_export("compress")
def compress(condition, a, axis=None):
    """Keeps the slices of `a` along an axis where `condition` is True.

    Args:
      condition: a rank-1 boolean array; a shorter one counts as False past its end.
      a: array_like input.
      axis: the axis to select along; None works on the flattened array.

    Returns:
      A tensor of a's dtype.

    Raises:
      ValueError: if `condition` is not rank 1 or `axis` is out of range.

    Example:
      >>> tnp.compress([True, False, True], [1, 2, 3]).numpy()
      array([1, 3])
    """
    condition, a = asarray(condition, dtype=bool), asarray(a)
    if condition.shape.rank != 1:
        raise ValueError("condition must be a 1-d array.")
    if a.shape.rank == 0 or axis is None:
        a, axis = ravel(a), 0
    if axis < 0:
        axis += a.shape.rank
    if not 0 <= axis < a.shape.rank:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {a.shape.rank}")
    if condition.shape[0] < a.shape[axis]:
        padding = tfo.fill([a.shape[axis] - condition.shape[0]], False)
        condition = tfo.concat([condition, padding], axis=0)
    return tfo.boolean_mask(a, condition, axis=axis)


@_export("sort")
def sort(a, axis=-1, kind="quicksort", order=None):
    """Sorts an array in ascending order along an axis.

    Args:
      a: array_like input.
      axis: the axis to sort along; None sorts the flattened array.
      kind: only 'quicksort' is accepted.
      order: unsupported; must be None.

    Returns:
      A sorted tensor of a's dtype.

    Raises:
      ValueError: for another `kind` or an `order`.

    Example:
      >>> tnp.sort([3, 1, 2]).numpy()
      array([1, 2, 3])
    """
    if kind != "quicksort":
        raise ValueError('Invalid value for argument `kind`. Only kind="quicksort" is '
                         f"supported. Received: kind={kind}")
    if order is not None:
        raise ValueError("The `order` argument is not supported. Pass order=None")
    a = array(a, copy=False)
    if axis is None:
        return tfo.sort(tfo.reshape(a, [-1]), 0)
    return tfo.sort(a, axis)


@_export("argsort")
def argsort(a, axis=-1, kind="quicksort", order=None):
    """The indices that would sort an array along an axis.

    Args:
      a: array_like input.
      axis: the axis to sort along; None sorts the flattened array.
      kind: 'quicksort' or 'stable' (keeps equal elements in their order).
      order: unsupported; must be None.

    Returns:
      An int64 tensor of indices (shape (1,) for a scalar).

    Raises:
      ValueError: for another `kind` or an `order`.
      TypeError: for complex input.

    Example:
      >>> tnp.argsort([3, 1, 2]).numpy()
      array([1, 2, 0])
    """
    if kind not in ("quicksort", "stable"):
        raise ValueError('Invalid value for argument `kind`. Only kind="quicksort" and '
                         f'kind="stable" are supported. Received: kind={kind}')
    if order is not None:
        raise ValueError("The `order` argument is not supported. Pass order=None")
    a = array(a, copy=False)
    if a.dtype.is_complex:
        raise TypeError("argsort does not support complex64/complex128 dtypes. Received "
                        f"dtype: {a.dtype}")
    if a.shape.rank == 0:
        result = tfo.constant([0])
    else:
        if axis is None:
            a, axis = tfo.reshape(a, [-1]), 0
        result = tfo.argsort(a, axis, stable=kind == "stable")
    return cast(result, np.intp)


@_export("diagonal")
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the 2-D slices of `a` spanned by `axis1` and `axis2`.

    Args:
      a: array_like input. of rank >= 2.
      offset: diagonal offset (positive above the main diagonal).
      axis1: first axis of the 2-D slices.
      axis2: second axis.

    Returns:
      A tensor of a's dtype whose last axis runs along the diagonal.

    Example:
      >>> tnp.diagonal([[1, 2], [3, 4]]).numpy()
      array([1, 4])
    """
    return diagonal_(a, offset, axis1, axis2)
