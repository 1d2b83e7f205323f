"""TF-NumPy's shape functions: reshape/ravel/transpose/swapaxes/moveaxis, expand_dims and
squeeze, atleast_Nd, broadcasting, and shape/ndim/size."""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_arrays import asarray, static_rank


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


@_export("reshape")
def reshape(a, newshape, order="C"):
    """Gives `a` a new shape with the same elements.

    Args:
      a: array_like input.
      newshape: an int or a sequence of ints; one entry may be -1 (inferred).
      order: 'C' reads and writes elements in row-major order, 'F' in column-major order.

    Returns:
      A tensor of shape `newshape` and a's dtype.

    Raises:
      ValueError: if `order` is not 'C' or 'F'.
      InvalidArgumentError: if the element counts differ.

    Example:
      >>> tnp.reshape(tnp.arange(6), (2, 3)).numpy()
      array([[0, 1, 2],
             [3, 4, 5]])
    """
    if order not in {"C", "F"}:
        raise ValueError(f"Unsupported order argument {order}")
    a = asarray(a)
    if isinstance(newshape, int):
        newshape = [newshape]
    if order == "F":
        return tfo.transpose(tfo.reshape(tfo.transpose(a), list(newshape)[::-1]))
    return tfo.reshape(a, newshape)


def reshape_method(a, *newshape, **kwargs):
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` (the method enable_numpy_behavior adds)."""
    order = kwargs.pop("order", "C")
    if kwargs:
        raise ValueError(f"Unsupported arguments: {kwargs.keys()}")
    if len(newshape) == 1 and not isinstance(newshape[0], int):
        newshape = newshape[0]
    return reshape(a, newshape, order=order)


@_export("ravel")
def ravel(a):
    """Flattens `a` into a rank-1 tensor in row-major order.

    Args:
      a: array_like input.

    Returns:
      A rank-1 tensor of a's dtype holding all of a's elements.

    Example:
      >>> tnp.ravel([[1, 2], [3, 4]]).numpy()
      array([1, 2, 3, 4])
    """
    return tfo.reshape(asarray(a), [-1])


@_export("flatten")
def flatten(a, order="C"):
    """Flattens `a` into a rank-1 tensor.

    Args:
      a: array_like input.
      order: 'C', 'A' or 'K' for row-major order, 'F' for column-major order.

    Returns:
      A rank-1 tensor of a's dtype.

    Raises:
      ValueError: for any other `order`.

    Example:
      >>> tnp.flatten([[1, 2], [3, 4]], order='F').numpy()
      array([1, 3, 2, 4])
    """
    a = asarray(a)
    if order in ("C", "A", "K"):
        return tfo.reshape(a, [-1])
    if order == "F":
        return tfo.reshape(tfo.transpose(a), [-1])
    raise ValueError("order can only be C, A, K (all row major) or F (column major).")


@_export("transpose")
def transpose(a, axes=None):
    """Permutes the axes of `a`.

    Args:
      a: array_like input.
      axes: a permutation of `range(rank)`; None reverses the axes.

    Returns:
      A tensor of a's dtype whose axis i is a's axis `axes[i]`.

    Example:
      >>> tnp.transpose(tnp.zeros((2, 3, 4))).shape
      TensorShape([4, 3, 2])
    """
    a = asarray(a)
    if axes is not None:
        axes = asarray(axes)
    return tfo.transpose(a, axes)


@_export("swapaxes")
def swapaxes(a, axis1, axis2):
    """Exchanges two axes of `a`.

    Args:
      a: array_like input. Its rank must be known.
      axis1: first axis (negative counts from the end).
      axis2: second axis.

    Returns:
      A tensor of a's dtype with the two axes exchanged.

    Raises:
      ValueError: if the rank of `a` is unknown.

    Example:
      >>> tnp.swapaxes(tnp.zeros((2, 3, 4)), 0, 2).shape
      TensorShape([4, 3, 2])
    """
    a = asarray(a)
    rank = static_rank(a)
    perm = list(range(rank))
    axis1, axis2 = axis1 % rank if axis1 < 0 else axis1, axis2 % rank if axis2 < 0 else axis2
    perm[axis1], perm[axis2] = axis2, axis1
    return tfo.transpose(a, perm)


@_export("moveaxis")
def moveaxis(a, source, destination):
    """Moves axes of `a` to new positions, keeping the other axes in order.

    Args:
      a: array_like input. Its rank must be known.
      source: an axis or a sequence of axes to move.
      destination: their new positions, as many as `source`.

    Returns:
      A tensor of a's dtype with the axes moved.

    Raises:
      ValueError: if `source` and `destination` differ in length.

    Example:
      >>> tnp.moveaxis(tnp.zeros((2, 3, 4)), 0, -1).shape
      TensorShape([3, 4, 2])
    """
    if not source and not destination:
        return a
    a = asarray(a)
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise ValueError("The lengths of source and destination must equal")
    rank = static_rank(a)
    source = tuple(x + rank if x < 0 else x for x in source)
    destination = tuple(x + rank if x < 0 else x for x in destination)
    perm = [i for i in range(rank) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        perm.insert(dest, src)
    return tfo.transpose(a, perm)


@_export("expand_dims")
def expand_dims(a, axis):
    """Inserts an axis of size 1 into the shape of `a`.

    Args:
      a: array_like input.
      axis: position of the new axis (negative counts from the end).

    Returns:
      A tensor of a's dtype and rank + 1.

    Example:
      >>> tnp.expand_dims([1, 2], 0).shape
      TensorShape([1, 2])
    """
    return tfo.expand_dims(asarray(a), axis)


@_export("squeeze")
def squeeze(a, axis=None):
    """Removes axes of size 1 from `a`.

    Args:
      a: array_like input.
      axis: an int or list of ints naming the axes to remove; None removes every axis of size 1.

    Returns:
      A tensor of a's dtype.

    Raises:
      InvalidArgumentError: if a named axis does not have size 1.

    Example:
      >>> tnp.squeeze(tnp.zeros((1, 3, 1))).shape
      TensorShape([3])
    """
    return tfo.squeeze(asarray(a), axis)


def _pad_left(x, n, new_shape=None):
    x = asarray(x)
    rank = static_rank(x)
    if rank >= n:
        return x
    shape = tfo.shape(x)
    if new_shape is None:
        new_shape = tfo.concat([tfo.ones([n - rank], dtypes.int32), shape], 0)
    return tfo.reshape(x, new_shape)


def _atleast(n, arys, shape_fn=None):
    out = [_pad_left(a, n, shape_fn(asarray(a)) if shape_fn else None) for a in arys]
    return out[0] if len(out) == 1 else out


@_export("atleast_1d")
def atleast_1d(*arys):
    """Views each input as an array of rank at least 1.

    Args:
      *arys: array_likes; scalars become shape (1,).

    Returns:
      One tensor for one input, else a list of tensors.

    Example:
      >>> tnp.atleast_1d(5).shape
      TensorShape([1])
    """
    return _atleast(1, arys)


@_export("atleast_2d")
def atleast_2d(*arys):
    """Views each input as an array of rank at least 2.

    Args:
      *arys: array_likes; lower ranks gain leading axes of size 1.

    Returns:
      One tensor for one input, else a list of tensors.

    Example:
      >>> tnp.atleast_2d([1, 2]).shape
      TensorShape([1, 2])
    """
    return _atleast(2, arys)


def _shape_3d(x):
    shape = x.shape.as_list() if x.shape.rank is not None else None
    if shape is None or x.shape.rank >= 3:
        return None
    if len(shape) == 0:
        return [1, 1, 1]
    if len(shape) == 1:
        return [1, -1, 1]
    return tfo.concat([tfo.shape(x), [1]], 0)


@_export("atleast_3d")
def atleast_3d(*arys):
    """Views each input as an array of rank at least 3.

    Args:
      *arys: array_likes; a scalar becomes (1, 1, 1), shape (n,) becomes (1, n, 1) and (m, n)
        becomes (m, n, 1).

    Returns:
      One tensor for one input, else a list of tensors.

    Example:
      >>> tnp.atleast_3d([1, 2]).shape
      TensorShape([1, 2, 1])
    """
    return _atleast(3, arys, _shape_3d)


@_export("broadcast_to")
def broadcast_to(array, shape):  # noqa: A002 - NumPy's name
    """Broadcasts `array` to a new shape.

    Args:
      array: array_like input.
      shape: the target shape (an int, a sequence or a tensor).

    Returns:
      A tensor of the given shape and array's dtype.

    Raises:
      InvalidArgumentError: if the shapes are not compatible.

    Example:
      >>> tnp.broadcast_to([1, 2], (2, 2)).numpy()
      array([[1, 2],
             [1, 2]])
    """
    shape = asarray(shape) if not isinstance(shape, Tensor) else shape
    if shape.shape.rank == 0:
        shape = tfo.reshape(shape, [-1])
    return tfo.broadcast_to(asarray(array), shape)


@_export("broadcast_arrays")
def broadcast_arrays(*args, **kwargs):
    """Broadcasts any number of arrays against each other.

    Args:
      *args: array_likes with compatible shapes.
      **kwargs: only `subok=False` is accepted.

    Returns:
      A list of tensors, all of the common broadcast shape.

    Raises:
      ValueError: for `subok=True` or any other keyword.

    Example:
      >>> [t.shape for t in tnp.broadcast_arrays([1, 2], [[3], [4]])]
      [TensorShape([2, 2]), TensorShape([2, 2])]
    """
    if kwargs.pop("subok", False):
        raise ValueError("subok=True is not supported.")
    if kwargs:
        raise ValueError(f"Received unsupported arguments {kwargs.keys()}")
    args = [asarray(a) for a in args]
    if len(args) <= 1:
        return args
    shape = tfo.shape(args[0])
    for a in args[1:]:
        shape = tfo.broadcast_dynamic_shape(shape, tfo.shape(a))
    return [tfo.broadcast_to(a, shape) for a in args]


@_export("shape")
def shape(a):
    """The static shape of `a`.

    Args:
      a: array_like input.

    Returns:
      A `tf.TensorShape` (some dimensions may be None inside a graph).

    Example:
      >>> tnp.shape([[1, 2, 3]])
      TensorShape([1, 3])
    """
    return asarray(a).shape


@_export("ndim")
def ndim(a):
    """The number of dimensions of `a`.

    Args:
      a: array_like input.

    Returns:
      An int, or None when the rank is unknown.

    Example:
      >>> tnp.ndim([[1, 2]])
      2
    """
    return asarray(a).shape.rank


@_export("isscalar")
def isscalar(num):
    """Whether `num` is a rank-0 value.

    Args:
      num: array_like input.

    Returns:
      A Python bool.

    Example:
      >>> tnp.isscalar(3.0)
      True
    """
    return ndim(num) == 0


@_export("size")
def size(x, axis=None):
    """The number of elements of `x`.

    Args:
      x: array_like input.
      axis: unsupported; must be None.

    Returns:
      An int (1 for a Python or NumPy scalar), or a scalar int tensor when the shape is not fully
      known.

    Raises:
      NotImplementedError: if `axis` is given.

    Example:
      >>> tnp.size([[1, 2, 3]])
      3
    """
    if axis is not None:
        raise NotImplementedError("axis argument is not supported in the current `np.size` "
                                  "implementation")
    if isinstance(x, (numbers.Number, np.generic)):
        return 1
    x = asarray(x)
    if x.shape.is_fully_defined():
        return int(np.prod(x.shape.as_list(), dtype=int))
    return tfo.size(x)
