"""`keras.ops` array construction and shape manipulation (ops.numpy): zeros/ones/full,
arange/linspace/eye, reshape, transpose, concatenate, stack, take, pad, split, tile,
repeat, where, clip, ... as Keras 3 computes them on the TensorFlow backend (lists of
tensors are promoted to one dtype; negative `take` indices count from the end)."""

from __future__ import annotations

import numpy as np

from ndflow.keras import docstrings
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops import numpy_array_docs, numpy_select_docs
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    arithmetic,
    array_builders,
    array_core,
    array_fill,
    array_misc,
    array_range,
    array_reorder,
    array_slicing,
    array_transpose,
    comparison,
    gather_batch,
    math,
)
from ndflow.ops import array_split as split_ops
from ndflow.ops.cast import cast


def _np(name, **kwargs):
    return keras_op(name, "numpy", **kwargs)


def _dtype(dtype):
    return rules.standardize(dtype)


def _shape_arg(shape):
    if isinstance(shape, int):
        return [shape]
    return shape


def _rank(x) -> int:
    return x.shape.rank


# -- construction ----------------------------------------------------------------------------
@_np("zeros")
def zeros(shape, dtype=None):
    return array_fill.zeros(_shape_arg(shape), dtype=_dtype(dtype))


@_np("ones")
def ones(shape, dtype=None):
    return array_fill.ones(_shape_arg(shape), dtype=_dtype(dtype))


@_np("empty")
def empty(shape, dtype=None):
    return zeros(shape, dtype)


@_np("full")
def full(shape, fill_value, dtype=None):
    value = rules.to_tensor(fill_value, _dtype(dtype))
    return array_fill.broadcast_to(value, _shape_arg(shape))


@_np("zeros_like")
def zeros_like(x, dtype=None):
    x = rules.to_tensor(x)
    return array_fill.zeros_like(x, dtype=_dtype(dtype or x.dtype))


@_np("ones_like")
def ones_like(x, dtype=None):
    x = rules.to_tensor(x)
    return array_fill.ones_like(x, dtype=_dtype(dtype or x.dtype))


@_np("empty_like")
def empty_like(x, dtype=None):
    return zeros_like(x, dtype)


@_np("full_like")
def full_like(x, fill_value, dtype=None):
    x = rules.to_tensor(x)
    dtype = rules.result_type(dtype or x.dtype)
    return array_fill.broadcast_to(rules.to_tensor(fill_value, dtype), array_core.shape(x))


@_np("arange")
def arange(start, stop=None, step=None, dtype=None):
    if dtype is None:
        found = [rules.dtype_of(start)]
        if stop is not None:
            found.append(rules.dtype_of(stop))
        if step is not None:
            found.append(rules.dtype_of(step))
        dtype = rules.result_type(*found)
    dtype = _dtype(dtype)
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype in ("float16", "bfloat16"):
        return cast(array_range.range(start, stop, step, dtype="float32"), dtype)
    return array_range.range(cast(start, dtype), cast(stop, dtype), cast(step, dtype),
                             dtype=dtype)


@_np("linspace")
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if num < 0:
        raise ValueError(f"`num` must be a non-negative integer. Received: num={num}")
    if dtype is None:
        dtype = rules.result_type(rules.dtype_of(start), rules.dtype_of(stop), float)
    dtype = _dtype(dtype)
    compute = "float64" if dtype == "float64" else "float32"
    start, stop = rules.to_tensor(start, compute), rules.to_tensor(stop, compute)
    divisor = (num - 1) if endpoint else num
    step = (stop - start) / cast(max(divisor, 1), compute)
    if endpoint:
        out = array_builders.linspace(start, stop, num, axis=axis)
    else:
        out = array_builders.linspace(start, stop - step, num, axis=axis) if num > 0 else \
            array_builders.linspace(start, stop, 0, axis=axis)
    out = cast(out, dtype) if not dtype.startswith(("int", "uint")) else \
        cast(math.floor(out), dtype)
    return (out, step) if retstep else out


@_np("logspace")
def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    dtype = _dtype(dtype or rules.result_type(rules.dtype_of(start), rules.dtype_of(stop),
                                              float))
    compute = "float64" if dtype == "float64" else "float32"
    exponents = linspace(start, stop, num, endpoint=endpoint, dtype=compute, axis=axis)
    return cast(arithmetic.pow(cast(base, compute), exponents), dtype)


@_np("geomspace")
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    dtype = _dtype(dtype or rules.result_type(rules.dtype_of(start), rules.dtype_of(stop),
                                              float))
    compute = "float64" if dtype == "float64" else "float32"
    start = rules.to_tensor(start, compute)
    stop = rules.to_tensor(stop, compute)
    logs = linspace(arithmetic.log(math.abs(start)), arithmetic.log(math.abs(stop)), num,
                    endpoint=endpoint, dtype=compute, axis=axis)
    return cast(math.exp(logs) * math.sign(start), dtype)


@_np("eye")
def eye(N, M=None, k=0, dtype=None):  # noqa: N803 - Keras' names
    dtype = _dtype(dtype)
    M = N if M is None else M  # noqa: N806
    if k == 0:
        return array_builders.eye(N, M, dtype=dtype)
    rows = array_range.range(0, N)[:, None]
    cols = array_range.range(0, M)[None, :]
    return cast(comparison.equal(cols - rows, k), dtype)


@_np("identity")
def identity(n, dtype=None):
    return eye(n, dtype=dtype)


@_np("tri")
def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    dtype = _dtype(dtype)
    M = N if M is None else M  # noqa: N806
    rows = array_range.range(0, N)[:, None]
    cols = array_range.range(0, M)[None, :]
    return cast(comparison.less_equal(cols - rows, k), dtype)


@_np("array")
def array(x, dtype=None):
    return rules.to_tensor(x, dtype)


@_np("copy")
def copy(x):
    return array_core.identity(rules.to_tensor(x))


# -- shapes ----------------------------------------------------------------------------------
@_np("reshape")
def reshape(x, newshape):
    return array_core.reshape(rules.to_tensor(x), _shape_arg(newshape))


@_np("ravel")
def ravel(x):
    return array_core.reshape(rules.to_tensor(x), [-1])


@_np("transpose")
def transpose(x, axes=None):
    return array_transpose.transpose(rules.to_tensor(x), perm=axes)


@_np("expand_dims")
def expand_dims(x, axis):
    x = rules.to_tensor(x)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out_rank = _rank(x) + len(axes)
    for a in sorted(a % out_rank if a < 0 else a for a in axes):
        x = array_core.expand_dims(x, a)
    return x


@_np("squeeze")
def squeeze(x, axis=None):
    x = rules.to_tensor(x)
    if isinstance(axis, int):
        axis = [axis]
    if axis is not None:
        for a in axis:
            if x.shape[a] is not None and x.shape[a] != 1:
                raise ValueError(f"Cannot squeeze axis {a}, because the dimension is not 1.")
    return array_core.squeeze(x, axis=axis)


@_np("moveaxis")
def moveaxis(x, source, destination):
    x = rules.to_tensor(x)
    rank = _rank(x)
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    source = [s % rank for s in source]
    destination = [d % rank for d in destination]
    perm = [i for i in range(rank) if i not in source]
    for d, s in sorted(zip(destination, source)):
        perm.insert(d, s)
    return array_transpose.transpose(x, perm)


@_np("swapaxes")
def swapaxes(x, axis1, axis2):
    x = rules.to_tensor(x)
    perm = list(range(_rank(x)))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return array_transpose.transpose(x, perm)


@_np("broadcast_to")
def broadcast_to(x, shape):
    return array_fill.broadcast_to(rules.to_tensor(x), _shape_arg(shape))


def _promote_list(xs):
    xs = [rules.to_tensor(x) for x in xs]
    dtype = rules.result_type(*(x.dtype.name for x in xs))
    return [rules.to_tensor(x, dtype) for x in xs]


@_np("concatenate")
def concatenate(xs, axis=0):
    xs = _promote_list(xs)
    if axis is None:
        xs, axis = [array_core.reshape(x, [-1]) for x in xs], 0
    return array_slicing.concat(xs, axis)


@_np("append")
def append(x1, x2, axis=None):
    return concatenate([x1, x2], axis=axis)


@_np("stack")
def stack(x, axis=0):
    return array_core.stack(_promote_list(x), axis=axis)


@_np("vstack")
def vstack(xs):
    return concatenate([x if _rank(x) >= 2 else array_core.reshape(x, [1, -1])
                        for x in map(rules.to_tensor, xs)], axis=0)


@_np("hstack")
def hstack(xs):
    xs = [rules.to_tensor(x) for x in xs]
    return concatenate(xs, axis=0 if _rank(xs[0]) == 1 else 1)


@_np("dstack")
def dstack(xs):
    def atleast_3d(x):
        r = _rank(x)
        if r == 0:
            return array_core.reshape(x, [1, 1, 1])
        if r == 1:
            return array_core.reshape(x, [1, -1, 1])
        return array_core.expand_dims(x, 2) if r == 2 else x
    return concatenate([atleast_3d(rules.to_tensor(x)) for x in xs], axis=2)


def _split_points(indices_or_sections, size):
    """Pieces' sizes for NumPy's split arguments (equal sections must divide `size`)."""
    if isinstance(indices_or_sections, int):
        return indices_or_sections
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return [max(min(b, size) - max(a, 0), 0) for a, b in zip(bounds[:-1], bounds[1:])]


@_np("split")
def split(x, indices_or_sections, axis=0):
    x = rules.to_tensor(x)
    size = x.shape[axis]
    if isinstance(indices_or_sections, int) and size is not None \
            and size % indices_or_sections:
        raise ValueError("array split does not result in an equal division")
    return split_ops.split(x, _split_points(indices_or_sections, size), axis=axis)


@_np("array_split")
def array_split(x, indices_or_sections, axis=0):
    x = rules.to_tensor(x)
    size = x.shape[axis]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
        return split_ops.split(x, sizes, axis=axis)
    return split_ops.split(x, _split_points(indices_or_sections, size), axis=axis)


@_np("vsplit")
def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=0)


@_np("hsplit")
def hsplit(x, indices_or_sections):
    x = rules.to_tensor(x)
    return split(x, indices_or_sections, axis=0 if _rank(x) == 1 else 1)


@_np("dsplit")
def dsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=2)


@_np("tile")
def tile(x, repeats):
    x = rules.to_tensor(x)
    repeats = [repeats] if isinstance(repeats, int) else list(repeats)
    rank = _rank(x)
    if len(repeats) < rank:
        repeats = [1] * (rank - len(repeats)) + repeats
    elif len(repeats) > rank:
        x = array_core.reshape(x, [1] * (len(repeats) - rank) + (
            x.shape.as_list() if None not in x.shape.as_list() else [-1]))
    return array_fill.tile(x, repeats)


@_np("repeat")
def repeat(x, repeats, axis=None):
    x = rules.to_tensor(x)
    if axis is None:
        x, axis = array_core.reshape(x, [-1]), 0
    return array_builders.repeat(x, repeats, axis=axis)


@_np("pad")
def pad(x, pad_width, mode="constant", constant_values=None):
    x = rules.to_tensor(x)
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"TensorFlow backend only supports modes 'constant', 'reflect' and "
                         f"'symmetric'. Received: mode={mode}")
    if constant_values is not None and mode != "constant":
        raise ValueError("Argument `constant_values` can only be provided when "
                         f"`mode == 'constant'`. Received: mode={mode}")
    width = np.asarray(pad_width, dtype=np.int64)
    rank = _rank(x)
    if width.ndim == 0:
        width = np.full((rank, 2), int(width))
    elif width.ndim == 1:
        width = np.tile(width.reshape(1, -1) if width.size == 2 else
                        np.repeat(width, 2).reshape(1, 2), (rank, 1))
    elif width.shape[0] == 1 and rank > 1:
        width = np.tile(width, (rank, 1))
    if width.shape[-1] == 1:
        width = np.repeat(width, 2, axis=-1)
    if width.shape[0] != rank:
        raise ValueError(f"`pad_width` must have the same length as `x.shape`. Received: "
                         f"pad_width={pad_width} (of length {len(pad_width)}) and "
                         f"x.shape={tuple(x.shape.as_list())} (of length {rank})")
    value = 0 if constant_values is None else constant_values
    return array_fill.pad(x, width.astype(np.int32), mode.upper(),
                          constant_values=cast(value, x.dtype))


# -- selection -------------------------------------------------------------------------------
def _wrap_negative(indices, size):
    return arithmetic.where(comparison.less(indices, cast(0, indices.dtype)),
                            indices + cast(size, indices.dtype), indices)


def _int_indices(indices):
    indices = rules.to_tensor(indices)
    if not indices.dtype.is_integer or indices.dtype.name == "bool":
        indices = cast(indices, "int32")
    return indices


@_np("take")
def take(x, indices, axis=None):
    x = rules.to_tensor(x)
    if axis is None:
        x, axis = array_core.reshape(x, [-1]), 0
    indices = _int_indices(indices)
    size = array_core.shape(x, out_type=indices.dtype)[axis]
    return gather_batch.gather(x, _wrap_negative(indices, size), axis=axis)


@_np("take_along_axis")
def take_along_axis(x, indices, axis=None):
    x, indices = rules.to_tensor(x), _int_indices(indices)
    if axis is None:
        if _rank(indices) != 1:
            raise ValueError(f"`indices` must be 1D if axis=None. Received: "
                             f"indices.shape={indices.shape}")
        return take(array_core.reshape(x, [-1]), indices)
    rank = _rank(x)
    axis = axis % rank
    x = moveaxis(x, axis, -1)
    indices = moveaxis(indices, axis, -1)
    # broadcast every other dimension of the two against each other
    x_shape, i_shape = array_core.shape(x), array_core.shape(indices)
    lead = array_misc.broadcast_dynamic_shape(x_shape[:-1], i_shape[:-1])
    x = array_fill.broadcast_to(x, array_slicing.concat([lead, x_shape[-1:]], 0))
    indices = array_fill.broadcast_to(indices, array_slicing.concat(
        [cast(lead, i_shape.dtype), i_shape[-1:]], 0))
    indices = _wrap_negative(indices, cast(x_shape[-1], indices.dtype))
    out = gather_batch.gather(x, indices, axis=rank - 1, batch_dims=rank - 1)
    return moveaxis(out, -1, axis)


@_np("get_item")
def get_item(x, key):
    return rules.to_tensor(x)[key]


@_np("where")
def where(condition, x1=None, x2=None):
    condition = rules.to_tensor(condition, "bool")
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("`x1` and `x2` either both should be `None` or both should have "
                         "non-None value.")
    x1, x2 = rules.promote(x1, x2)
    return arithmetic.where(condition, x1, x2)


@_np("nonzero")
def nonzero(x):
    x = rules.to_tensor(x)
    found = arithmetic.where(comparison.not_equal(x, cast(0, x.dtype)) if x.dtype.name != "bool"
                             else x)
    return tuple(array_core.unstack(cast(found, "int32"), num=_rank(x), axis=1))


@_np("clip")
def clip(x, x_min, x_max):
    x = rules.to_tensor(x)
    if x.dtype.name == "bool":
        x = cast(x, "int32")
    return math.clip_by_value(x, cast(x_min, x.dtype), cast(x_max, x.dtype))


@_np("flip")
def flip(x, axis=None):
    x = rules.to_tensor(x)
    axes = list(range(_rank(x))) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    return array_reorder.reverse(x, axes)


@_np("fliplr")
def fliplr(x):
    return flip(x, 1)


@_np("flipud")
def flipud(x):
    return flip(x, 0)


@_np("roll")
def roll(x, shift, axis=None):
    x = rules.to_tensor(x)
    if axis is None:
        flat = array_core.reshape(x, [-1])
        return array_core.reshape(array_reorder.roll(flat, shift, 0), array_core.shape(x))
    return array_reorder.roll(x, shift, axis)


@_np("rot90")
def rot90(array, k=1, axes=(0, 1)):
    x = rules.to_tensor(array)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"Invalid axes: {axes}. Axes must be a tuple of two different "
                         "dimensions.")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    x = swapaxes(x, axes[0], axes[1])
    return flip(x, axes[1]) if k == 3 else flip(x, axes[0])


@_np("unravel_index")
def unravel_index(indices, shape):
    indices = rules.to_tensor(indices)
    out = array_misc.unravel_index(indices, cast(list(shape), indices.dtype))
    return tuple(array_core.unstack(out, num=len(shape), axis=0))


@_np("meshgrid")
def meshgrid(*x, indexing="xy"):
    return array_builders.meshgrid(*[rules.to_tensor(v) for v in x], indexing=indexing)


@_np("select")
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("condlist and choicelist must have the same length. Received: "
                         f"len(condlist)={len(condlist)}, len(choicelist)={len(choicelist)}")
    choices = _promote_list(list(choicelist))
    out = rules.to_tensor(default, choices[0].dtype.name)
    for cond, choice in reversed(list(zip(condlist, choices))):
        cond = rules.to_tensor(cond, "bool")
        out = arithmetic.where(cond, choice, out)
    return out


docstrings.attach(globals(), numpy_array_docs.DOCS)
docstrings.attach(globals(), numpy_select_docs.DOCS)
