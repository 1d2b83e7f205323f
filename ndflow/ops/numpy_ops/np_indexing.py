"""NumPy-style indexing of tensors (`x[[0, 2], 1:]`, `x[mask]`), which
`experimental_enable_numpy_behavior` installs as `tf.Tensor.__getitem__`.

Integer scalars, slices, `None` and `...` index as in TF's strided slice; integer arrays,
lists and rank-1 boolean arrays are NumPy's advanced indices: broadcast together, their
result dimensions replace theirs in place when the advanced indices are adjacent (after
scalars are taken out, TF-NumPy's rule) and come first otherwise."""

from __future__ import annotations

import numbers

import numpy as np

from ndflow.core import dtypes
from ndflow.core.tensor import Tensor
from ndflow.ops.numpy_ops import _tf_ops as tfo
from ndflow.ops.numpy_ops.np_arrays import asarray, cast, promote_dtype

_SLICE_ERROR = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices")


def _is_bool_array(s) -> bool:
    return (isinstance(s, Tensor) and s.dtype == dtypes.bool) or \
        (isinstance(s, np.ndarray) and s.dtype == np.bool_)


def _spec_tuple(spec):
    """NumPy's reading of a non-tuple index: a list of plain ints is one array index."""
    if isinstance(spec, tuple):
        return spec
    if isinstance(spec, list) and any(s is None or s is Ellipsis or
                                      isinstance(s, (list, tuple, slice)) or
                                      (isinstance(s, (np.ndarray, Tensor)) and s.ndim != 0)
                                      for s in spec):
        return tuple(spec)
    return (spec,)


def _as_index(s):
    """(index tensor, is_scalar) of a non-slice index; bool arrays become positions."""
    if isinstance(s, numbers.Integral) and not isinstance(s, bool):
        return s, True
    data = asarray(s)
    if data.dtype == dtypes.bool:
        if data.shape.rank != 1:
            raise NotImplementedError(f"Need rank 1 for bool index {s}")
        data = tfo.reshape(tfo.where(data), [-1])
    if not data.dtype.is_integer:
        raise IndexError(_SLICE_ERROR + f", got {s!r}")
    if data.dtype not in (dtypes.int32, dtypes.int64):
        data = cast(data, dtypes.int64)
    return data, data.shape.rank == 0


def numpy_getitem(tensor, slice_spec, basic_getitem):
    """tensor[slice_spec] with NumPy's advanced indexing; `basic_getitem` is TF's slicing."""
    if isinstance(slice_spec, bool) or _is_bool_array(slice_spec):
        return tfo.boolean_mask(tensor, slice_spec)
    spec = _spec_tuple(slice_spec)
    basic, advanced = [], []  # advanced: (position in spec, index tensor)
    for i, s in enumerate(spec):
        if isinstance(s, slice) or s is None or s is Ellipsis:
            basic.append(s)
            continue
        index, is_scalar = _as_index(s)
        if is_scalar:
            basic.append(index)
        else:
            basic.append(slice(None))
            advanced.append((i, index))
    if not advanced:
        return basic_getitem(tensor, tuple(basic))
    result = basic_getitem(tensor, tuple(basic))
    dims = _advanced_dims(spec, [i for i, _ in advanced], tensor.shape.rank)
    rank = result.shape.rank
    sizes = tfo.shape(result)
    indices = [cast(ix, dtypes.int64) for _, ix in advanced]
    indices = promote_dtype(*indices)
    shape = tfo.shape(indices[0])
    for ix in indices[1:]:
        shape = tfo.broadcast_dynamic_shape(shape, tfo.shape(ix))
    wrapped = []
    for ix, d in zip(indices, dims):
        size = cast(sizes[d], ix.dtype)
        ix = tfo.where(tfo.less(ix, tfo.zeros_like(ix)), tfo.add(ix, size), ix)
        wrapped.append(tfo.broadcast_to(ix, shape))
    contiguous = dims == list(range(dims[0], dims[0] + len(dims)))
    if not contiguous:  # NumPy puts the broadcast index dimensions first
        rest = [d for d in range(rank) if d not in dims]
        moved = tfo.transpose(result, dims + rest)
        return tfo.gather_nd(moved, tfo.stack(wrapped, axis=-1))
    # Adjacent: one gather on the flattened dimensions, by the linear index (as TF-NumPy,
    # whose linear index does not check each index against its own dimension)
    axis = dims[0]
    flat = wrapped[0]
    for ix, d in zip(wrapped[1:], dims[1:]):
        flat = tfo.add(tfo.multiply(flat, cast(sizes[d], flat.dtype)), ix)
    if len(dims) > 1:
        result = tfo.reshape(result, tfo.concat([sizes[:axis], [-1],
                                                 sizes[axis + len(dims):]], 0))
    return tfo.gather(result, flat, axis=axis)


def _advanced_dims(spec, positions, rank):
    """Where each advanced index's dimension is in the result of the basic indexing."""
    if rank is None:
        raise ValueError("NumPy-style indexing needs a tensor of known rank")
    consumed = sum(1 for s in spec if s is not None and s is not Ellipsis)
    out, dims = 0, {}
    for i, s in enumerate(spec):
        if s is Ellipsis:
            out += rank - consumed
        elif i in positions:
            dims[i] = out
            out += 1
        elif isinstance(s, slice) or s is None:
            out += 1
        # a scalar index removes its dimension
    return [dims[i] for i in positions]
