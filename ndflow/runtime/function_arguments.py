"""How `tf.function` reads a call's arguments: the cache key of each argument (tensors by
dtype and shape, SparseTensors by their spec, variables by TF's `VariableSpec`, Python values
by value, other objects by identity), its tensor leaves in trace order, and the argument
rebuilt around the trace's placeholders."""

from __future__ import annotations

import numpy as np

from ndflow.core.composite_tensor import CompositeTensor, is_composite
from ndflow.core.nest import flatten
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.sparse_tensor import SparseTensor

_TENSOR = "<tensor>"


def _is_variable(x) -> bool:
    return not isinstance(x, Tensor) and isinstance(getattr(x, "handle", None), Tensor)


def _encode(value, leaves: list, refs: list, relaxed: dict | None = None):
    """Hashable cache key for one argument; tensor leaves are appended to `leaves`
    (`relaxed`: leaf index -> the shape its placeholder gets instead of its own)."""
    if isinstance(value, SparseTensor) and all(isinstance(t, Tensor) for t in value):
        # TF traces a SparseTensor by its SparseTensorSpec (dense shape, dtype): any number
        # of values reuses the trace
        shape = value.shape
        n, rank = len(leaves), shape.rank
        parts = _encode(tuple(value), leaves, refs)
        if relaxed is not None:
            relaxed.update({n: TensorShape([None, rank]), n + 1: TensorShape([None]),
                            n + 2: TensorShape([rank])})
        return ("sparse", None if rank is None else tuple(shape.as_list()), parts)
    if isinstance(value, (Tensor, TensorSpec)):
        leaves.append(value)
        return _TENSOR
    if isinstance(value, np.ndarray):
        leaves.append(value)
        return _TENSOR
    if _is_variable(value):
        refs.append(value)
        if getattr(value, "_traced_by_spec", False):
            return _variable_key(value, refs)
        return ("variable", id(value))
    if isinstance(value, IndexedSlices):  # traced as its tensors, as its spec's placeholders
        return ("composite", None, _encode(_slices_parts(value), leaves, refs))
    if is_composite(value):  # a RaggedTensor (or its spec): traced as its components
        return ("composite", value._trace_static_key(),
                _encode(value._to_components(), leaves, refs))
    if isinstance(value, dict):
        return ("dict", tuple((k, _encode(value[k], leaves, refs)) for k in _keys(value)))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_encode(v, leaves, refs) for v in value))
    if hasattr(value, "_tf_function_parts"):  # a value made of tensors (tf.distribute's
        # PerReplica): its parts are traced as arguments, the object rebuilt around them
        return (type(value), _encode(value._tf_function_parts(), leaves, refs))
    try:
        hash(value)
    except TypeError:
        refs.append(value)
        return ("object", type(value), id(value))
    return ("value", type(value), value)


def _variable_key(var, refs: list) -> tuple:
    """TF's VariableSpec: a variable argument is traced by its dtype, shape and trainability,
    so any variable like it reuses the trace (its handle is bound at the call), and by its
    alias id (the position it first took among the arguments: f(a, a) and f(a, b) differ)."""
    alias = next(i for i, r in enumerate(refs) if r is var)
    shape = var.shape
    dims = None if shape.rank is None else tuple(shape.as_list())
    return ("variable", var.dtype, dims, var.trainable, alias)


def _flat_signature(signature) -> list:
    """An input_signature's TensorSpecs in trace order: a spec of a value made of tensors
    (tf.distribute's PerReplicaSpec, `_tf_function_parts`) stands for its parts' specs."""
    out: list = []
    for s in flatten(signature):
        if hasattr(s, "_tf_function_parts"):
            out.extend(_flat_signature(list(s._tf_function_parts())))
        else:
            out.append(s)
    return out


def _tensor_leaves(value) -> list:
    leaves: list = []
    _encode(value, leaves, [])
    return leaves


def _keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def _substitute(value, it):
    """`value` with each tensor leaf (in `_encode` order) replaced by `next(it)`."""
    if isinstance(value, (Tensor, TensorSpec, np.ndarray)):
        return next(it)
    if _is_variable(value):
        return value
    if isinstance(value, IndexedSlices):
        return IndexedSlices(*_substitute(_slices_parts(value), it))
    if is_composite(value):  # a RaggedTensor around placeholders (from a value or a spec)
        parts = _substitute(value._to_components(), it)
        return value._traced_from_components(parts) if isinstance(value, CompositeTensor) \
            else value._from_components_like(parts)
    if isinstance(value, dict):
        new = {k: _substitute(value[k], it) for k in _keys(value)}
        return {k: new[k] for k in value} if type(value) is dict else \
            type(value)((k, new[k]) for k in value)
    if isinstance(value, (list, tuple)):
        items = [_substitute(v, it) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if hasattr(value, "_tf_function_parts"):
        return type(value)(_substitute(value._tf_function_parts(), it))
    return value


def _slices_parts(value: IndexedSlices) -> list:
    """An IndexedSlices argument's tensors (an IndexedSlicesSpec's components): no
    CompositeTensor inside ndflow, whose gradient code keeps it one value."""
    parts = [value.values, value.indices]
    return parts if value.dense_shape is None else parts + [value.dense_shape]


def _spec_of(x) -> tuple:
    return (x.dtype, x.shape)
