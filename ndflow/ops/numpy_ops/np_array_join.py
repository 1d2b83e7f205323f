"""TF-NumPy's joining and splitting (concatenate, stack, hstack, split ...), flips and rolls,
repeat/tile/pad."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_array_shape import (
    _export,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    ravel,
    swapaxes,
)
from ndflow.ops.numpy_ops.np_arrays import array, asarray, promote_dtype, static_rank


@_export("concatenate")
def concatenate(arys, axis=0):
    """Joins a sequence of arrays along an existing axis.

    Args:
      arys: a list or tuple of array_likes with equal shapes except along `axis`.
      axis: the axis to join along.

    Returns:
      A tensor in the arrays' promoted dtype.

    Raises:
      ValueError: if `arys` is empty.

    Example:
      >>> tnp.concatenate([[1, 2], [3]]).numpy()
      array([1, 2, 3])
    """
    if not isinstance(arys, (list, tuple)):
        arys = [arys]
    if not arys:
        raise ValueError("Need at least one array to concatenate. Received empty input: "
                         f"arys={arys}")
    return tfo.concat(promote_dtype(*arys), axis)


@_export("append")
def append(arr, values, axis=None):
    """Appends `values` to the end of `arr`.

    Args:
      arr: array_like input.
      values: array_like to append; shaped as `arr` except along `axis` unless `axis` is None.
      axis: the axis to append along; None flattens both first.

    Returns:
      A tensor in the promoted dtype of both inputs.

    Example:
      >>> tnp.append([1, 2], [[3, 4]]).numpy()
      array([1, 2, 3, 4])
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


@_export("stack")
def stack(arrays, axis=0):
    """Joins arrays of the same shape along a new axis.

    Args:
      arrays: a sequence of array_likes of one shape, or a tensor (stacked along its first axis).
      axis: position of the new axis in the result.

    Returns:
      A tensor of rank one more than the inputs, in their promoted dtype.

    Example:
      >>> tnp.stack([[1, 2], [3, 4]], axis=1).numpy()
      array([[1, 3],
             [2, 4]])
    """
    if isinstance(arrays, Tensor):
        arrays = asarray(arrays)
        return arrays if axis == 0 else swapaxes(arrays, 0, axis)
    return tfo.stack(promote_dtype(*arrays), axis)


@_export("hstack")
def hstack(tup):
    """Joins arrays horizontally: along axis 1, or axis 0 for rank-1 inputs.

    Args:
      tup: a sequence of array_likes (scalars are treated as shape (1,)).

    Returns:
      A tensor in the inputs' promoted dtype.

    Example:
      >>> tnp.hstack([[1, 2], [3]]).numpy()
      array([1, 2, 3])
    """
    arrays = promote_dtype(*[atleast_1d(a) for a in tup])
    return tfo.concat(arrays, axis=0 if static_rank(arrays[0]) == 1 else 1)


@_export("vstack")
def vstack(tup):
    """Joins arrays vertically, along axis 0 after making each at least 2-D.

    Args:
      tup: a sequence of array_likes with equal trailing shapes.

    Returns:
      A tensor of rank at least 2 in the inputs' promoted dtype.

    Example:
      >>> tnp.vstack([[1, 2], [3, 4]]).numpy()
      array([[1, 2],
             [3, 4]])
    """
    return tfo.concat(promote_dtype(*[atleast_2d(a) for a in tup]), axis=0)


@_export("dstack")
def dstack(tup):
    """Joins arrays depth-wise, along axis 2 after making each at least 3-D.

    Args:
      tup: a sequence of array_likes with equal shapes except along axis 2.

    Returns:
      A tensor of rank at least 3 in the inputs' promoted dtype.

    Example:
      >>> tnp.dstack([[1, 2], [3, 4]]).shape
      TensorShape([1, 2, 2])
    """
    return tfo.concat(promote_dtype(*[atleast_3d(a) for a in tup]), axis=2)


def _boundaries_to_sizes(a, boundaries, axis):
    if axis >= len(a.shape):
        raise ValueError(f"axis {axis} is out of bound for shape {a.shape}")
    total = a.shape[axis]
    sizes, taken, prev = [], 0, 0
    for i, b in enumerate(boundaries):
        size = b - prev
        if size < 0:
            raise ValueError(f"The {i}-th boundary {b} is smaller than the previous boundary "
                             f"{prev}")
        size = min(size, max(0, total - taken))
        sizes.append(size)
        taken += size
        prev = b
    sizes.append(max(0, total - taken))
    return sizes


@_export("split")
def split(ary, indices_or_sections, axis=0):
    """Splits `ary` into several tensors along `axis`.

    Args:
      ary: array_like input.
      indices_or_sections: an int N for N equal pieces, or a sorted list of indices at which to cut
        (pieces past the end are empty).
      axis: the axis to split along.

    Returns:
      A list of tensors of ary's dtype.

    Raises:
      ValueError: if the indices decrease or `axis` is out of range.
      InvalidArgumentError: if N does not divide the axis evenly.

    Example:
      >>> [p.numpy().tolist() for p in tnp.split(tnp.arange(6), [2, 3])]
      [[0, 1], [2], [3, 4, 5]]
    """
    ary = asarray(ary)
    if not isinstance(indices_or_sections, int):
        indices_or_sections = _boundaries_to_sizes(ary, indices_or_sections, axis)
    return tfo.split(ary, indices_or_sections, axis=axis)


def _split_on_axis(name, axis, what):
    def f(ary, indices_or_sections):
        ary = asarray(ary)
        new_axis = 0 if axis == 1 and ary.shape.rank == 1 else axis
        if isinstance(indices_or_sections, int):
            size = ary.shape[new_axis]
            if size is not None and size % indices_or_sections:
                raise ValueError("array split does not result in an equal division")
        return split(ary, indices_or_sections, axis=new_axis)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Splits `ary` {what}; see `tnp.split`.

    Args:
      ary: array_like input.
      indices_or_sections: an int N for N equal pieces, or a sorted list of cut indices.

    Returns:
      A list of tensors of ary's dtype.

    Raises:
      ValueError: if N does not divide the axis evenly.

    Example:
      >>> [p.shape for p in tnp.{name}(tnp.zeros((4, 4, 4)), 2)][0]
      TensorShape({[[2, 4, 4], [4, 2, 4], [4, 4, 2]][axis]})
    """
    return _export(name)(f)


vsplit = _split_on_axis("vsplit", 0, "vertically, along axis 0")


hsplit = _split_on_axis("hsplit", 1, "horizontally, along axis 1 (axis 0 for rank-1 input)")


dsplit = _split_on_axis("dsplit", 2, "depth-wise, along axis 2")


@_export("flip")
def flip(m, axis=None):
    """Reverses the order of elements along an axis (or all axes).

    Args:
      m: array_like input.
      axis: the axis to reverse; None reverses every axis.

    Returns:
      A tensor of m's shape and dtype.

    Example:
      >>> tnp.flip([1, 2, 3]).numpy()
      array([3, 2, 1])
    """
    m = asarray(m)
    rank = static_rank(m)
    if rank == 0:
        return m  # TF's ReverseV2 leaves a scalar as it is
    if axis is None:
        return tfo.reverse(m, list(range(rank)))
    return tfo.reverse(m, [axis + rank if axis < 0 else axis])


def _flip_on_axis(name, axis, what, example):
    def f(m):
        return flip(m, axis)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Reverses the order of {what} (axis {axis}).

    Args:
      m: array_like of rank >= {axis + 1}.

    Returns:
      A tensor of m's shape and dtype.

    Example:
      >>> tnp.{name}([[1, 2], [3, 4]]).numpy()
      {example}
    """
    return _export(name)(f)


flipud = _flip_on_axis("flipud", 0, "rows", "array([[3, 4],\n             [1, 2]])")
fliplr = _flip_on_axis("fliplr", 1, "columns", "array([[2, 1],\n             [4, 3]])")


@_export("roll")
def roll(a, shift, axis=None):
    """Shifts elements cyclically along an axis.

    Args:
      a: array_like input.
      shift: number of places to shift (an int or, with `axis`, a sequence).
      axis: the axis (or axes) to roll; None rolls the flattened array and restores the shape.

    Returns:
      A tensor of a's shape and dtype.

    Example:
      >>> tnp.roll([1, 2, 3, 4], 1).numpy()
      array([4, 1, 2, 3])
    """
    a = asarray(a)
    if axis is not None:
        return tfo.roll(a, shift, axis)
    return tfo.reshape(tfo.roll(tfo.reshape(a, [-1]), shift, 0), tfo.shape(a))


@_export("rot90")
def rot90(m, k=1, axes=(0, 1)):
    """Rotates an array by 90 degrees `k` times in the plane of two axes.

    Args:
      m: array_like of rank >= 2.
      k: number of counterclockwise quarter turns (may be negative).
      axes: the two axes that span the plane of rotation.

    Returns:
      A tensor of m's dtype.

    Raises:
      InvalidArgumentError: if an axis is out of range.

    Example:
      >>> tnp.rot90([[1, 2], [3, 4]]).numpy()
      array([[2, 4],
             [1, 3]])
    """
    m = asarray(m)
    rank = static_rank(m)
    ax1, ax2 = (x + rank if x < 0 else x for x in axes)
    if not (0 <= ax1 < rank and 0 <= ax2 < rank):
        raise InvalidArgumentError(None, None, f"rot90: axes {tuple(axes)} are out of range "
                                   f"for an array of rank {rank}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(rank))
    perm[ax1], perm[ax2] = ax2, ax1
    if k == 1:
        return tfo.transpose(flip(m, ax2), perm)
    return flip(tfo.transpose(m, perm), ax2)


@_export("repeat")
def repeat(a, repeats, axis=None):
    """Repeats each element of `a`.

    Args:
      a: array_like input.
      repeats: an int, or one int per element along `axis`.
      axis: the axis to repeat along; None works on the flattened array.

    Returns:
      A tensor of a's dtype.

    Example:
      >>> tnp.repeat([1, 2], 2).numpy()
      array([1, 1, 2, 2])
    """
    a = asarray(a)
    if a.shape.rank == 0 and axis is None:
        a = tfo.reshape(a, [1])
    return tfo.repeat(a, asarray(repeats), axis)


@_export("tile")
def tile(a, reps):
    """Builds an array by repeating `a` `reps` times along each axis.

    Args:
      a: array_like input.
      reps: an int or a sequence of ints (a tensor must have a known value); when longer than a's
        rank, `a` gains leading axes.

    Returns:
      A tensor of a's dtype.

    Raises:
      ValueError: if `reps` is a tensor whose value is unknown.

    Example:
      >>> tnp.tile([1, 2], 2).numpy()
      array([1, 2, 1, 2])
    """
    a = array(a, copy=False)
    if isinstance(reps, Tensor):
        static = tfo.get_static_value(reps)
        if static is None:
            raise ValueError(f"tile needs the value of `reps` in ndflow, got {reps}")
        reps = static
    reps = [int(r) for r in np.ravel(reps)]
    rank = static_rank(a)
    reps = [1] * max(rank - len(reps), 0) + reps
    if len(reps) > rank:
        a = tfo.reshape(a, tfo.concat([tfo.ones([len(reps) - rank], dtypes.int32),
                                       tfo.shape(a)], 0))
    return tfo.tile(a, reps)


@_export("pad")
def pad(array, pad_width, mode, **kwargs):  # noqa: A002
    """Pads an array.

    Args:
      array: array_like input.
      pad_width: an int array of shape [rank, 2] giving the padding before and after each axis.
      mode: 'constant', 'reflect' or 'symmetric'.
      **kwargs: `constant_values`, the fill value for 'constant' (default 0).

    Returns:
      A tensor of array's dtype.

    Raises:
      ValueError: for another mode.

    Example:
      >>> tnp.pad([1, 2], [[1, 2]], 'constant').numpy()
      array([0, 1, 2, 0, 0])
    """
    constant_values = kwargs.get("constant_values", 0)
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError("Unsupported padding mode: " + mode)
    array = asarray(array)
    pad_width = asarray(pad_width, dtype=dtypes.int32)  # [rank, 2], as tf.pad takes it
    return tfo.pad(array, pad_width, mode=mode.upper(), constant_values=constant_values)
