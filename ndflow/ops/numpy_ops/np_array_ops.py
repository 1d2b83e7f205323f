"""TF-NumPy's array functions (TF's np_array_ops), in three modules by concept:
np_array_shape (reshape, transpose, atleast_Nd, broadcasting, shape/ndim/size), np_array_join
(concatenate/stack/split, flips and rolls, repeat/tile/pad) and np_array_select (take, where,
select, compress, sort, diagonal). This module re-exports them all."""

from __future__ import annotations

from ndflow.ops.numpy_ops.np_array_join import (  # noqa: F401 - re-exported
    append,
    concatenate,
    dsplit,
    dstack,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    pad,
    repeat,
    roll,
    rot90,
    split,
    stack,
    tile,
    vsplit,
    vstack,
)
from ndflow.ops.numpy_ops.np_array_select import (  # noqa: F401 - re-exported
    argsort,
    compress,
    diagonal,
    nonzero,
    select,
    sort,
    take,
    take_along_axis,
    where,
)
from ndflow.ops.numpy_ops.np_array_shape import (  # noqa: F401 - re-exported
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_to,
    expand_dims,
    flatten,
    isscalar,
    moveaxis,
    ndim,
    ravel,
    reshape,
    reshape_method,
    shape,
    size,
    squeeze,
    swapaxes,
    transpose,
)
