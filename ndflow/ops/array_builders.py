"""Arrays built from other ops, as TensorFlow builds them in Python: `tf.eye`,
`tf.linspace`, `tf.meshgrid`, `tf.sequence_mask` and `tf.repeat`."""

from __future__ import annotations

from ndflow.core import dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import array_builders_docs
from ndflow.ops.apply import constant_value, convert_to_tensor
from ndflow.ops.arithmetic import maximum, multiply, subtract, truediv
from ndflow.ops.array_core import expand_dims, identity, reshape, shape, size
from ndflow.ops.array_fill import broadcast_to, ones, tile
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_search import searchsorted
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_slicing import slice as slice_op
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name, equal, less
from ndflow.ops.math_cumulative import cumsum
from ndflow.ops.reduction import reduce_max, reduce_sum


@tf_export("eye", "linalg.eye")
def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32,
        name: str | None = None) -> Tensor:
    """`tf.eye`: identity matrices [*batch_shape, num_rows, num_columns]."""
    dtype = dtypes.as_dtype(dtype)
    with composite_name(name, "eye") as final:
        rows = range_(num_rows)
        columns = rows if num_columns is None else range_(num_columns)
        matrix = cast(equal(expand_dims(rows, 1), expand_dims(columns, 0)), dtype)
        if batch_shape is not None:
            matrix = broadcast_to(matrix, concat([convert_to_tensor(batch_shape, dtypes.int32),
                                                  shape(matrix)], 0))
    return identity(matrix, name=final)


@tf_export("linspace", v1=["lin_space", "linspace"])
def linspace(start, stop, num, name: str | None = None, axis: int = 0) -> Tensor:
    """`tf.linspace`: `num` evenly spaced values from `start` to `stop` (both included), for
    scalars or along `axis` for broadcast tensors; the last value is exactly `stop`."""
    with scopes.name_scope(name, "linspace"):
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, name="stop", dtype=start.dtype)
        num_int = convert_to_tensor(num, name="num", dtype_hint=dtypes.int32)
        steps = maximum(num_int - 1, 1)
        both = broadcast_to(start, shape(start + stop))
        start = expand_dims(both, axis)
        stop = expand_dims(broadcast_to(stop, shape(both)), axis)
        delta = truediv(subtract(stop, start), cast(steps, start.dtype))
        # integer ends: the true division makes delta floating (float64), and all follow it
        start, stop = cast(start, delta.dtype), cast(stop, delta.dtype)
        # start + i * delta for i in [1, num - 1), then stop itself, cut to num values.
        inner = cast(range_(1, maximum(num_int - 1, 1)), start.dtype)
        rank = start.shape.rank
        along = [1] * rank
        along[axis % rank] = -1
        values = concat([start, start + multiply(reshape(inner, along), delta), stop],
                        axis % rank)
        return _take(values, num_int, axis % rank)


def _take(values, count, axis: int) -> Tensor:
    """The first `count` entries of `values` along `axis` (count 1: start only)."""
    begin = [0] * values.shape.rank
    full = shape(values)
    sizes = concat([full[:axis], reshape(count, [1]), full[axis + 1:]], 0)
    return slice_op(values, begin, sizes)


@tf_export("meshgrid")
def meshgrid(*args, **kwargs) -> list:
    """`tf.meshgrid(x, y, ..., indexing="xy")`: coordinate grids, Cartesian ("xy": the first
    two axes swapped) or matrix ("ij") indexing."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got "
                         f"'{indexing}'")
    with scopes.name_scope(name):
        ndim = len(args)
        ones_shape = (1,) * ndim
        grids = [reshape(convert_to_tensor(x), ones_shape[:i] + (-1,) + ones_shape[i + 1:])
                 for i, x in enumerate(args)]
        sizes = [size(convert_to_tensor(x)) for x in args]
        dtype = grids[0].dtype if grids else dtypes.float32
        if indexing == "xy" and ndim > 1:
            grids[0] = reshape(grids[0], (1, -1) + (1,) * (ndim - 2))
            grids[1] = reshape(grids[1], (-1, 1) + (1,) * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        spread = ones(sizes, dtype)
        return [multiply(g, spread) for g in grids]


@tf_export("sequence_mask")
def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name: str | None = None) -> Tensor:
    """`tf.sequence_mask`: `mask[i..., j] = j < lengths[i...]` for j < maxlen (default: the
    largest length)."""
    with scopes.name_scope(name, "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = maximum(convert_to_tensor(0, dtype=lengths.dtype), reduce_max(lengths))
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.rank not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received "
                             f"`maxlen` = {maxlen} with shape '{maxlen.shape}' instead")
        mask = less(range_(maxlen), cast(expand_dims(lengths, -1), maxlen.dtype))
        dtype = dtypes.as_dtype(dtype)
        return mask if dtype is dtypes.bool else cast(mask, dtype)


@tf_export("repeat")
def repeat(input, repeats, axis=None, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.repeat`: each element (or slice along `axis`; the flattened input when `axis` is
    None) repeated `repeats` times (a scalar, or one count per element)."""
    with scopes.name_scope(name, "Repeat"):
        value = convert_to_tensor(input, name="input")
        if axis is None:
            value, axis = reshape(value, [-1]), 0
        repeats = convert_to_tensor(repeats, name="repeats", dtype_hint=dtypes.int32)
        rank = value.shape.rank
        if repeats.shape.num_elements() == 1 and rank:
            return _repeat_each(value, reshape(repeats, []), axis % rank, rank)
        n = shape(value, out_type=repeats.dtype)[axis]
        counts = broadcast_to(repeats, reshape(n, [1])) if repeats.shape.rank == 0 else repeats
        # Output row i comes from the input row whose cumulative count first exceeds i.
        ends = cumsum(counts)
        source = searchsorted(ends, range_(reduce_sum(counts), dtype=repeats.dtype),
                              side="right")
        return gather(value, source, axis=axis)


def _repeat_each(value: Tensor, count: Tensor, axis: int, rank: int) -> Tensor:
    """Every slice along `axis` repeated `count` (a scalar) times, as TF's repeat_with_axis
    writes it: a new axis after `axis` tiled `count` times, merged into `axis` (one copy, and
    a sum for the gradient, where a gather's gradient scatters)."""
    dims = shape(value, out_type=count.dtype)
    multiples = concat([ones([axis + 1], count.dtype), reshape(count, [1]),
                        ones([rank - axis - 1], count.dtype)], 0)
    tiled = tile(expand_dims(value, axis + 1), multiples)
    out = reshape(tiled, concat([dims[:axis], reshape(count * dims[axis], [1]),
                                 dims[axis + 1:]], 0))
    static = value.shape.as_list()       # the other dimensions, known or not, stay as they are
    times = constant_value(count)
    static[axis] = None if times is None or static[axis] is None else static[axis] * int(times)
    out.set_shape(static)
    return out


attach(globals(), array_builders_docs.DOCS)
