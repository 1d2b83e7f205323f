"""TF-NumPy's shape and layout functions: reshape/transpose/moveaxis, joining and splitting,
flips and rolls, repeat/tile/pad, take/where/select/compress/nonzero, sort/argsort."""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_arrays import array, asarray, cast, promote_dtype, static_rank
from ndflow.ops.numpy_ops.np_math_ops import where_
from ndflow.ops.numpy_ops.np_reductions import diagonal_


def _export(name):
    return tf_export(f"experimental.numpy.{name}", v1=[])


@_export("reshape")
def reshape(a, newshape, order="C"):
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
    return tfo.reshape(asarray(a), [-1])


@_export("flatten")
def flatten(a, order="C"):
    a = asarray(a)
    if order in ("C", "A", "K"):
        return tfo.reshape(a, [-1])
    if order == "F":
        return tfo.reshape(tfo.transpose(a), [-1])
    raise ValueError("order can only be C, A, K (all row major) or F (column major).")


@_export("transpose")
def transpose(a, axes=None):
    a = asarray(a)
    if axes is not None:
        axes = asarray(axes)
    return tfo.transpose(a, axes)


@_export("swapaxes")
def swapaxes(a, axis1, axis2):
    a = asarray(a)
    rank = static_rank(a)
    perm = list(range(rank))
    axis1, axis2 = axis1 % rank if axis1 < 0 else axis1, axis2 % rank if axis2 < 0 else axis2
    perm[axis1], perm[axis2] = axis2, axis1
    return tfo.transpose(a, perm)


@_export("moveaxis")
def moveaxis(a, source, destination):
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
    return tfo.expand_dims(asarray(a), axis)


@_export("squeeze")
def squeeze(a, axis=None):
    return tfo.squeeze(asarray(a), axis)


@_export("concatenate")
def concatenate(arys, axis=0):
    if not isinstance(arys, (list, tuple)):
        arys = [arys]
    if not arys:
        raise ValueError("Need at least one array to concatenate. Received empty input: "
                         f"arys={arys}")
    return tfo.concat(promote_dtype(*arys), axis)


@_export("append")
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


@_export("stack")
def stack(arrays, axis=0):
    if isinstance(arrays, Tensor):
        arrays = asarray(arrays)
        return arrays if axis == 0 else swapaxes(arrays, 0, axis)
    return tfo.stack(promote_dtype(*arrays), axis)


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
    return _atleast(1, arys)


@_export("atleast_2d")
def atleast_2d(*arys):
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
    return _atleast(3, arys, _shape_3d)


@_export("hstack")
def hstack(tup):
    arrays = promote_dtype(*[atleast_1d(a) for a in tup])
    return tfo.concat(arrays, axis=0 if static_rank(arrays[0]) == 1 else 1)


@_export("vstack")
def vstack(tup):
    return tfo.concat(promote_dtype(*[atleast_2d(a) for a in tup]), axis=0)


@_export("dstack")
def dstack(tup):
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
    ary = asarray(ary)
    if not isinstance(indices_or_sections, int):
        indices_or_sections = _boundaries_to_sizes(ary, indices_or_sections, axis)
    return tfo.split(ary, indices_or_sections, axis=axis)


def _split_on_axis(name, axis):
    def f(ary, indices_or_sections):
        ary = asarray(ary)
        new_axis = 0 if axis == 1 and ary.shape.rank == 1 else axis
        if isinstance(indices_or_sections, int):
            size = ary.shape[new_axis]
            if size is not None and size % indices_or_sections:
                raise ValueError("array split does not result in an equal division")
        return split(ary, indices_or_sections, axis=new_axis)
    f.__name__ = f.__qualname__ = name
    return _export(name)(f)


vsplit = _split_on_axis("vsplit", 0)
hsplit = _split_on_axis("hsplit", 1)
dsplit = _split_on_axis("dsplit", 2)


@_export("broadcast_to")
def broadcast_to(array, shape):  # noqa: A002 - NumPy's name
    shape = asarray(shape) if not isinstance(shape, Tensor) else shape
    if shape.shape.rank == 0:
        shape = tfo.reshape(shape, [-1])
    return tfo.broadcast_to(asarray(array), shape)


@_export("broadcast_arrays")
def broadcast_arrays(*args, **kwargs):
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


@_export("flip")
def flip(m, axis=None):
    m = asarray(m)
    rank = static_rank(m)
    if rank == 0:
        return m  # TF's ReverseV2 leaves a scalar as it is
    if axis is None:
        return tfo.reverse(m, list(range(rank)))
    return tfo.reverse(m, [axis + rank if axis < 0 else axis])


@_export("flipud")
def flipud(m):
    return flip(m, 0)


@_export("fliplr")
def fliplr(m):
    return flip(m, 1)


@_export("roll")
def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is not None:
        return tfo.roll(a, shift, axis)
    return tfo.reshape(tfo.roll(tfo.reshape(a, [-1]), shift, 0), tfo.shape(a))


@_export("rot90")
def rot90(m, k=1, axes=(0, 1)):
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
    a = asarray(a)
    if a.shape.rank == 0 and axis is None:
        a = tfo.reshape(a, [1])
    return tfo.repeat(a, asarray(repeats), axis)


@_export("tile")
def tile(a, reps):
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
    constant_values = kwargs.get("constant_values", 0)
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError("Unsupported padding mode: " + mode)
    array = asarray(array)
    pad_width = asarray(pad_width, dtype=dtypes.int32)  # [rank, 2], as tf.pad takes it
    return tfo.pad(array, pad_width, mode=mode.upper(), constant_values=constant_values)


@_export("take")
def take(a, indices, axis=None, out=None, mode="clip"):
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
    a = atleast_1d(a)
    rank = static_rank(a)
    return tfo.unstack(tfo.where(cast(a, dtypes.bool)), rank, axis=1)


@_export("where")
def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(asarray(condition, dtype=np.bool_))
    if x is not None and y is not None:
        return where_(condition, x, y)
    raise ValueError("Both x and y must be ndarrays, or both must be None.")


@_export("select")
def select(condlist, choicelist, default=0):
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
    return diagonal_(a, offset, axis1, axis2)


@_export("shape")
def shape(a):
    return asarray(a).shape


@_export("ndim")
def ndim(a):
    return asarray(a).shape.rank


@_export("isscalar")
def isscalar(num):
    return ndim(num) == 0


@_export("size")
def size(x, axis=None):
    if axis is not None:
        raise NotImplementedError("axis argument is not supported in the current `np.size` "
                                  "implementation")
    if isinstance(x, (numbers.Number, np.generic)):
        return 1
    x = asarray(x)
    if x.shape.is_fully_defined():
        return int(np.prod(x.shape.as_list(), dtype=int))
    return tfo.size(x)

