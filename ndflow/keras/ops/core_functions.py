"""`keras.ops` core: conversions and introspection (cast, convert_to_tensor/numpy, shape,
dtype, is_tensor), control flow (cond, while_loop, fori_loop, scan, associative_scan, map,
switch, vectorized_map), slicing and scattering (slice, slice_update, scatter,
scatter_update), unstack, stop_gradient, saturate_cast, custom_gradient, as Keras 3 runs them
on the TensorFlow backend (ndflow's tf.cond / tf.while_loop / tf.map_fn underneath, so they
also run inside tf.function graphs)."""

from __future__ import annotations

import numpy as np

from ndflow.autodiff import custom_gradient as custom_gradient_ops
from ndflow.core.nest import flatten, is_nested, map_structure, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.keras import docstrings
from ndflow.keras.ops import core_docs
from ndflow.keras.ops import dtype_rules as rules
from ndflow.keras.ops.symbolic import keras_op
from ndflow.ops import (
    array_builders,
    array_core,
    array_nd,
    array_reorder,
    array_slicing,
    array_transpose,
    cast_bits,
    math,
    tensor_array_ops,
)
from ndflow.ops.cast import cast as cast_op
from ndflow.runtime import control_flow, functional_ops


@keras_op("cast")
def cast(x, dtype):
    return cast_op(rules.to_tensor(x), rules.standardize(dtype))


@keras_op("convert_to_tensor")
def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    return rules.to_tensor(x, dtype)


@keras_op("convert_to_numpy", symbolic=False)
def convert_to_numpy(x):
    if isinstance(x, Tensor):
        return x.numpy()
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


@keras_op("is_tensor", symbolic=False)
def is_tensor(x):
    return isinstance(x, Tensor)


@keras_op("shape", symbolic=False)
def shape(x):
    if not isinstance(x, Tensor) and hasattr(x, "shape") and isinstance(x.shape, tuple):
        return x.shape   # a KerasTensor or NumPy array
    x = rules.to_tensor(x)
    if x.shape.rank is None:
        return array_core.shape(x)
    static = x.shape.as_list()
    if None not in static:
        return tuple(static)
    dynamic = array_core.shape(x)
    return tuple(dynamic[i] if s is None else s for i, s in enumerate(static))


@keras_op("dtype", symbolic=False)
def dtype(x):
    return rules.standardize(getattr(x, "dtype", None) or rules.to_tensor(x).dtype)


@keras_op("size", "numpy")
def size(x):
    return array_core.size(rules.to_tensor(x), out_type="int32")


@keras_op("ndim", "numpy", symbolic=False)
def ndim(x):
    if hasattr(x, "ndim") and not isinstance(x, Tensor):
        return x.ndim
    return rules.to_tensor(x).shape.rank


@keras_op("stop_gradient")
def stop_gradient(variable):
    return array_core.stop_gradient(rules.to_tensor(variable))


@keras_op("saturate_cast")
def saturate_cast(x, dtype):
    return cast_bits.saturate_cast(rules.to_tensor(x), rules.standardize(dtype))


@keras_op("unstack")
def unstack(x, num=None, axis=0):
    return array_core.unstack(rules.to_tensor(x), num=num, axis=axis)


# -- slicing and scattering ------------------------------------------------------------------
@keras_op("slice")
def slice(inputs, start_indices, shape):  # noqa: A001 - Keras' name
    return array_slicing.slice(rules.to_tensor(inputs), start_indices, shape)


def _block_indices(start, block_shape):
    """[*block_shape, rank] indices of the block at `start`."""
    grids = array_builders.meshgrid(*[np.arange(n) for n in block_shape], indexing="ij")
    stacked = array_core.stack([cast_op(g, "int64") for g in grids], axis=-1)
    return stacked + cast_op(rules.to_tensor(start), "int64")


@keras_op("slice_update")
def slice_update(inputs, start_indices, updates):
    inputs = rules.to_tensor(inputs)
    updates = rules.to_tensor(updates, inputs.dtype.name)
    block = updates.shape.as_list()
    if None in block:
        raise ValueError("slice_update needs `updates` of a static shape. Received: "
                         f"updates.shape={updates.shape}")
    indices = _block_indices(start_indices, block)
    return array_nd.tensor_scatter_nd_update(inputs, indices, updates)


@keras_op("scatter")
def scatter(indices, values, shape):
    values = rules.to_tensor(values)
    return array_nd.scatter_nd(rules.to_tensor(indices), values, shape)


@keras_op("scatter_update")
def scatter_update(inputs, indices, updates, reduction=None):
    inputs = rules.to_tensor(inputs)
    indices = rules.to_tensor(indices)
    updates = rules.to_tensor(updates, inputs.dtype.name)
    if reduction is None:
        return array_nd.tensor_scatter_nd_update(inputs, indices, updates)
    table = {"add": array_nd.tensor_scatter_nd_add, "max": array_nd.tensor_scatter_nd_max,
             "min": array_nd.tensor_scatter_nd_min}
    if reduction in table:
        return table[reduction](inputs, indices, updates)
    if reduction == "mul":   # one update at a time: repeated indices multiply in turn
        out = inputs
        for i in range(indices.shape[0]):
            idx = indices[i:i + 1]
            out = array_nd.tensor_scatter_nd_update(
                out, idx, array_nd.gather_nd(out, idx) * updates[i:i + 1])
        return out
    raise ValueError(f"Unsupported reduction: {reduction}")


# -- control flow ----------------------------------------------------------------------------
@keras_op("cond", symbolic=False)
def cond(pred, true_fn, false_fn):
    return control_flow.cond(pred, true_fn, false_fn)


@keras_op("while_loop", symbolic=False)
def while_loop(cond, body, loop_vars, maximum_iterations=None):
    is_tuple = isinstance(loop_vars, (tuple, list))
    loop_vars = tuple(loop_vars) if is_tuple else (loop_vars,)

    def step(*args):
        out = body(*args)
        return tuple(out) if is_tuple else (out,)
    out = control_flow.while_loop(cond, step, loop_vars,
                                  maximum_iterations=maximum_iterations)
    return out if is_tuple else out[0]


@keras_op("fori_loop", symbolic=False)
def fori_loop(lower, upper, body_fun, init_val):
    return control_flow.while_loop(lambda i, val: i < upper,
                                   lambda i, val: (i + 1, body_fun(i, val)),
                                   (lower, init_val))[1]


@keras_op("switch", symbolic=False)
def switch(index, branches, *operands):
    index = math.clip_by_value(rules.to_tensor(index, "int32"), 0, len(branches) - 1)
    return control_flow.switch_case(index, [
        (lambda b=b: b(*operands)) for b in branches])


@keras_op("map", symbolic=False)
def map(f, xs):  # noqa: A001 - Keras' name
    xs = map_structure(rules.to_tensor, xs)
    first = pack_sequence_as(xs, [x[0] for x in flatten(xs)]) if is_nested(xs) else xs[0]
    signature = map_structure(TensorSpec.from_tensor, f(first))
    return functional_ops.map_fn(f, xs, fn_output_signature=signature)


@keras_op("vectorized_map", symbolic=False)
def vectorized_map(function, elements):
    return functional_ops.vectorized_map(function, elements)


@keras_op("scan", symbolic=False)
def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    if xs is None and length is None:
        raise ValueError("Got no `xs` to scan over and `length` not provided.")
    flat_xs = [rules.to_tensor(x) for x in flatten(xs)] if xs is not None else []
    n = length if length is not None else (
        flat_xs[0].shape[0] if flat_xs[0].shape[0] is not None
        else array_core.shape(flat_xs[0])[0])
    init = map_structure(rules.to_tensor, init)

    def x_at(i):
        if xs is None:
            return None
        j = (n - 1 - i) if reverse else i
        return pack_sequence_as(xs, [x[j] for x in flat_xs])
    # the ys' structure and dtypes from one traced step
    first_carry, first_y = f(init, x_at(0))
    flat_y0 = [rules.to_tensor(y) for y in flatten(first_y)]
    arrays = [tensor_array_ops.TensorArray(y.dtype, size=n) for y in flat_y0]
    arrays = [a.write(0, y) for a, y in zip(arrays, flat_y0)]

    def body(i, carry, *arrays):
        carry, y = f(carry, x_at(i))
        return (i + 1, carry, *[a.write(i, v) for a, v in zip(arrays, flatten(y))])
    out = control_flow.while_loop(lambda i, *_: i < n, body,
                                  (1, map_structure(rules.to_tensor, first_carry), *arrays))
    carry, arrays = out[1], out[2:]
    ys = [a.stack() for a in arrays]
    if reverse:
        ys = [array_reorder.reverse(y, [0]) for y in ys]
    return carry, pack_sequence_as(first_y, ys)


@keras_op("associative_scan", symbolic=False)
def associative_scan(f, elems, reverse=False, axis=0):
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    flat = [rules.to_tensor(e) for e in flatten(elems)]
    n = flat[0].shape[axis]
    if n is None:
        raise ValueError("associative_scan needs a static length along `axis`")
    moved = [_moveaxis0(e, axis) for e in flat]
    order = range(n - 1, -1, -1) if reverse else range(n)
    outs, acc = [None] * n, None
    for i in order:
        cur = pack_sequence_as(elems, [e[i] for e in moved])
        acc = cur if acc is None else (f(cur, acc) if reverse else f(acc, cur))
        outs[i] = flatten(acc)
    stacked = [array_core.stack([o[k] for o in outs], axis=axis) for k in range(len(flat))]
    return pack_sequence_as(elems, stacked)


def _moveaxis0(x, axis):
    rank = x.shape.rank
    axis %= rank
    if axis == 0:
        return x
    perm = [axis] + [i for i in range(rank) if i != axis]
    return array_transpose.transpose(x, perm)


@keras_op("custom_gradient", symbolic=False)
def custom_gradient(f):
    return custom_gradient_ops.custom_gradient(f)


docstrings.attach(globals(), core_docs.DOCS)
