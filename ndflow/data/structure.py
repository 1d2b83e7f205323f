"""Elements of a dataset: nests of tensors described by nests of `tf.TensorSpec`.

Inside the pipeline an element travels flat — a tuple of `EagerTensor`s in `tf.nest.flatten`
order of the dataset's `element_spec` — and is packed into its structure only when handed to
the user (iteration) or to a user function (map, filter, ...). These helpers convert values to
that flat form, check them against specs and stack/slice the ATen (or, for strings, NumPy
object) values behind the tensors without going through eager op dispatch.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import context, dtypes
from ndflow.core.composite_tensor import CompositeTensor, is_composite
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import convert_to_tensor, infer_numpy, numpy_to_torch


def normalize(value):
    """A user value as a nest of eager tensors: tuples, namedtuples and dicts are structure;
    anything else (lists included, as TensorFlow) is converted to one tensor. Datasets hold
    eager values even when built while a graph is the default (TF1 programs, tf.function)."""
    if context.executing_eagerly():
        return _normalize(value)
    for leaf in flatten(value):
        if isinstance(leaf, SymbolicTensor):
            raise TypeError(f"ndflow datasets hold concrete values: the graph tensor {leaf} "
                            "cannot be an element. Build the dataset outside the graph "
                            "function (or from NumPy values).")
    with context.eager_scope():
        return _normalize(value)


def _normalize(value):
    if isinstance(value, dict):
        return type(value)((k, _normalize(v)) for k, v in value.items()) \
            if type(value) is not dict else {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (Tensor, CompositeTensor)):
        return value
    if hasattr(value, "handle") and hasattr(value, "read_value"):  # a variable: its value
        return value.read_value()
    return convert_to_tensor(value)


def lists_to_tuples(structure):
    """TensorFlow's rule for what user functions return: a list is a tuple of components."""
    if isinstance(structure, list):
        return tuple(lists_to_tuples(v) for v in structure)
    if isinstance(structure, tuple):
        items = [lists_to_tuples(v) for v in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    if isinstance(structure, dict):
        return {k: lists_to_tuples(v) for k, v in structure.items()} \
            if type(structure) is dict else type(structure)(
                (k, lists_to_tuples(v)) for k, v in structure.items())
    return structure


def flatten_up_to(spec_structure, value) -> list:
    """The leaves of `value` where `spec_structure` has its specs (a list in `value` where a
    spec stands is one leaf); a different structure is ValueError/TypeError/KeyError."""
    if isinstance(spec_structure, dict):
        if not isinstance(value, dict) or set(value) != set(spec_structure):
            raise ValueError("structure mismatch")
        return [x for k in sorted(spec_structure) for x in
                flatten_up_to(spec_structure[k], value[k])]
    if isinstance(spec_structure, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec_structure):
            raise ValueError("structure mismatch")
        return [x for s, v in zip(spec_structure, value) for x in flatten_up_to(s, v)]
    if is_composite(spec_structure):  # a RaggedTensorSpec: the value's components
        if isinstance(value, CompositeTensor):
            parts = value._to_components()
            if len(parts) != len(spec_structure._to_components()):
                raise ValueError("structure mismatch")
            return parts
        if len(spec_structure._to_components()) != 1:
            raise ValueError("structure mismatch")
    return [value]


def to_numpy(t):
    """A tensor's value as `as_numpy_iterator` gives it: NumPy scalars for 0-d values."""
    v = t.numpy()
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def spec_of(value) -> TensorSpec:
    return TensorSpec(value.shape, value.dtype)


def specs_of(structure):
    """The element_spec of a nest of tensors."""
    return pack_sequence_as(structure, [spec_of(t) for t in flatten(structure)])


def with_shapes(spec_structure, shapes: list):
    """`spec_structure` with each spec's shape replaced (same dtypes)."""
    flat = flatten(spec_structure)
    return pack_sequence_as(spec_structure, [TensorSpec(s, f.dtype)
                                              for f, s in zip(flat, shapes)])


def check_spec(spec_structure, what: str) -> None:
    for s in flatten(spec_structure):
        if not isinstance(s, TensorSpec) and not getattr(s, "_is_dataset_spec", False):
            raise TypeError(f"{what} must be a (nested) structure of `tf.TensorSpec` objects, "
                            f"got {s!r}.")


def eager(value, dtype) -> EagerTensor:
    return EagerTensor(value, dtype)


def to_eager(value, dtype) -> EagerTensor:
    """`value` (a tensor, NumPy array or Python value) as an eager tensor of `dtype`, without
    consulting the execution mode (pipelines also run on worker threads of TF1 programs)."""
    if isinstance(value, EagerTensor):
        if value.dtype is not dtype:
            raise TypeError(f"expected {dtype.name}, got a {value.dtype.name} tensor")
        return value
    if isinstance(value, Tensor):
        value = value.numpy()
    arr, dt = infer_numpy(value, dtype)
    return EagerTensor(numpy_to_torch(arr, dt), dt)


def to_flat(element, spec_structure, what: str) -> tuple:
    """A nested element (tensors, NumPy arrays, Python values) as a flat tuple of eager
    tensors of the specs' dtypes; a value that does not fit is InvalidArgumentError."""
    flat_specs = flatten(spec_structure)
    try:
        leaves = flatten_up_to(spec_structure, element)
    except (TypeError, ValueError, KeyError):
        raise InvalidArgumentError(None, None, f"{what} produced an element that does not "
                                   f"match the structure {spec_structure}: {element!r}") \
            from None
    out = []
    for value, spec in zip(leaves, flat_specs):
        if isinstance(value, EagerTensor) and value.dtype is spec.dtype:
            t = value
        else:
            try:
                t = to_eager(value, spec.dtype)
            except (TypeError, ValueError) as e:
                raise InvalidArgumentError(
                    None, None, f"{what} produced an element that could not be converted to "
                    f"the expected type. The expected type was {spec.dtype.name}, but the "
                    f"element was {value!r} ({e}).") from None
        if not spec.shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(
                None, None, f"{what} produced an element of shape {tuple(t.shape.as_list())} "
                f"where an element of shape {_shape_str(spec.shape)} was expected.")
        out.append(t)
    return tuple(out)


def _shape_str(shape: TensorShape) -> str:
    return "<unknown>" if shape.rank is None else str(tuple(shape.as_list()))


def shape_list(value) -> list:
    return list(value.shape)


def stack_values(values: list, dtype, component: int):
    """The values (ATen tensors or NumPy object arrays) of one component of several elements
    stacked along a new first axis; TensorFlow's error when their shapes differ."""
    first = tuple(values[0].shape)
    for i, v in enumerate(values[1:], 1):
        if tuple(v.shape) != first:
            raise InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component "
                f"{component}. First element had shape {list(first)} and element {i} had "
                f"shape {list(v.shape)}.")
    if isinstance(values[0], torch.Tensor):
        return torch.stack(values)
    return np.stack([np.asarray(v, dtype=object) for v in values]) if first else \
        np.array([v[()] if isinstance(v, np.ndarray) else v for v in values] + [None],
                 dtype=object)[:-1]


def batch_flat(elements: list, flat_specs: list) -> tuple:
    """Flat elements (tuples of eager tensors) -> one flat element of stacked components."""
    return tuple(eager(stack_values([e[c]._value for e in elements], spec.dtype, c), spec.dtype)
                 for c, spec in enumerate(flat_specs))


def is_string(dtype) -> bool:
    return dtype is dtypes.string
