"""Elements of a dataset: nests of tensors described by nests of `tf.TensorSpec`,
`tf.RaggedTensorSpec` and `tf.SparseTensorSpec`.

Inside the pipeline an element travels flat — a tuple of `EagerTensor`s in `tf.nest.flatten`
order of the dataset's `element_spec` (a RaggedTensor or SparseTensor as its components; a
SparseTensor's are indices, values, dense_shape) — and is packed into its structure only when
handed to the user (iteration) or to a user function (map, filter, ...). These helpers convert
values to that flat form, check them against specs and stack/slice the ATen (or, for
strings, NumPy object) values behind the tensors without going through eager op dispatch.

A SparseTensor is a named tuple of its three tensors (ops/sparse_tensor.py), so `tf.nest`
would see three leaves; the element helpers here (`leaves`, `map_leaves`, `pack_leaves`)
treat it as one leaf, described by one SparseTensorSpec.
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import context, dtypes
from ndflow.core.composite_tensor import CompositeTensor, TypeSpec, is_composite
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import SymbolicTensor
from ndflow.core.nest import assert_same_structure, flatten, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import constant_value, convert_to_tensor, infer_numpy, numpy_to_torch
from ndflow.ops.array_core import stack, unstack
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec


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
    if isinstance(value, SparseTensorValue):  # TF: a SparseTensorValue is a SparseTensor
        value = SparseTensor.from_value(value)
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


# -- the leaves of an element: tensors, composites and SparseTensors ----------------------------
def _is_leaf(x) -> bool:
    return isinstance(x, (SparseTensor, SparseTensorValue)) or \
        not isinstance(x, (dict, list, tuple))


def _keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def leaves(structure) -> list:
    """The leaves of a nest of values or specs in `tf.nest.flatten` order, each composite,
    spec and SparseTensor one leaf (`tf.nest.flatten(x, expand_composites=False)` in TF)."""
    if _is_leaf(structure):
        return [structure]
    if isinstance(structure, dict):
        return [x for k in _keys(structure) for x in leaves(structure[k])]
    return [x for v in structure for x in leaves(v)]


def pack_leaves(structure, flat_leaves):
    """`structure` rebuilt around `flat_leaves` (one per leaf of `leaves(structure)`)."""
    return _pack(structure, iter(flat_leaves))


def _pack(s, it):
    # module-level, not a closure naming itself: that is a reference cycle, which kept each
    # element's tensors alive until Python's cycle collector ran
    if _is_leaf(s):
        return next(it)
    if isinstance(s, dict):
        built = {k: _pack(s[k], it) for k in _keys(s)}
        return {k: built[k] for k in s} if type(s) is dict else \
            type(s)((k, built[k]) for k in s)
    items = [_pack(v, it) for v in s]
    return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)


def map_leaves(fn, structure):
    """`fn` applied to each leaf (see `leaves`), in `tf.nest.flatten` order."""
    return pack_leaves(structure, [fn(x) for x in leaves(structure)])


def leaf_sizes(spec) -> list:
    """(leaf spec, number of flat components) for each leaf of an element_spec."""
    return [(s, len(flatten(s))) for s in leaves(spec)]


def has_sparse(structure_or_spec) -> bool:
    """Whether a nest of values or specs holds a SparseTensor or SparseTensorSpec."""
    return any(isinstance(x, (SparseTensor, SparseTensorSpec))
               for x in leaves(structure_or_spec))


def sparse_spec_of(value: SparseTensor) -> SparseTensorSpec:
    """The SparseTensorSpec of a SparseTensor: its dense shape as far as it is known (all of
    it eagerly; in a graph the dense_shape tensor's static value, as TF's
    `constant_value_as_shape`)."""
    known = constant_value(value.dense_shape, partial=True)
    if known is not None:
        shape = TensorShape([None if d is None else int(d)
                             for d in np.asarray(known, dtype=object).reshape(-1)])
    else:
        n = value.dense_shape.shape.as_list()[0] if value.dense_shape.shape.rank == 1 else None
        shape = TensorShape(None if n is None else [None] * n)
    return SparseTensorSpec(shape, value.dtype)


def static_dense_shape(value: SparseTensor, spec: SparseTensorSpec) -> SparseTensor:
    """A graph SparseTensor whose dense_shape holds the dimensions `spec` knows as constants
    (TF's SparseTensorSpec rebuilds traced elements so): shape inference and the specs of
    what a dataset function returns then see them."""
    dims = spec.shape.as_list() if spec.shape.rank is not None else None
    if dims is None or all(d is None for d in dims) or not isinstance(value.dense_shape,
                                                                       SymbolicTensor):
        return value
    if None not in dims:
        shape = convert_to_tensor(np.asarray(dims, np.int64), dtypes.int64, name="shape")
    else:
        pieces = unstack(value.dense_shape, num=len(dims))
        shape = stack([p if d is None else convert_to_tensor(np.int64(d), dtypes.int64)
                       for p, d in zip(pieces, dims)])
    return SparseTensor(value.indices, value.values, shape)


def with_static_dense_shapes(element, spec_structure):
    """`element` (graph tensors packed as `spec_structure`) with `static_dense_shape` applied
    to its SparseTensors."""
    if not has_sparse(spec_structure):
        return element
    return pack_leaves(element, [
        static_dense_shape(v, s) if isinstance(s, SparseTensorSpec) and
        isinstance(v, SparseTensor) else v
        for v, s in zip(leaves(element), leaves(spec_structure))])


def output_spec(outputs, returned: dict):
    """The element_spec of what a traced dataset function returned: `outputs` is its nest of
    graph tensors, `returned` maps a flat output's index to the DatasetSpec of a dataset
    returned there."""
    index = 0

    def one(leaf):
        nonlocal index
        if isinstance(leaf, SparseTensor):
            index += 3
            return sparse_spec_of(leaf)
        comps = flatten(leaf)
        specs = [returned.get(index + k) or TensorSpec(t.shape, t.dtype)
                 for k, t in enumerate(comps)]
        index += len(comps)
        return pack_sequence_as(leaf, specs) if is_composite(leaf) else specs[0]

    return map_leaves(one, outputs)


def common_spec(a, b):
    """The element_spec of `a.concatenate(b)`: each leaf the most specific spec compatible
    with both; TensorFlow's TypeError when the structures, kinds of leaves or dtypes differ."""
    try:
        assert_same_structure(a, b)
        pairs = list(zip(leaves(a), leaves(b)))
    except (TypeError, ValueError):
        pairs = None
    out = []
    for x, y in pairs or []:
        common = None
        if type(x) is type(y) and x.dtype is y.dtype:
            common = TensorSpec(x.shape.most_specific_compatible_shape(y.shape), x.dtype) \
                if isinstance(x, TensorSpec) else x.most_specific_common_supertype([y]) \
                if isinstance(x, TypeSpec) else x
        if common is None:
            pairs = None
            break
        out.append(common)
    if pairs is None:
        raise TypeError(f"Incompatible dataset elements:\n  {a} vs.   {b}")
    return pack_leaves(a, out)


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


class SparseMismatch(ValueError):
    """A SparseTensor where a SparseTensorSpec it does not fit stands (`got` is its spec)."""

    def __init__(self, got: SparseTensorSpec, expected: SparseTensorSpec):
        super().__init__(f"{got} vs {expected}")
        self.got, self.expected = got, expected


def flatten_up_to(spec_structure, value) -> list:
    """The component values of `value` where `spec_structure` has its specs (a list in `value`
    where a spec stands is one leaf; a SparseTensor(Value) where a SparseTensorSpec stands
    gives its three parts as eager tensors); a different structure is
    ValueError/TypeError/KeyError, a SparseTensor that does not fit its spec SparseMismatch."""
    if isinstance(spec_structure, dict):
        if not isinstance(value, dict) or set(value) != set(spec_structure):
            raise ValueError("structure mismatch")
        return [x for k in sorted(spec_structure) for x in
                flatten_up_to(spec_structure[k], value[k])]
    if isinstance(spec_structure, (tuple, list)):
        if not isinstance(value, (tuple, list)) or is_sparse_value(value) or \
                len(value) != len(spec_structure):
            raise ValueError("structure mismatch")
        return [x for s, v in zip(spec_structure, value) for x in flatten_up_to(s, v)]
    if isinstance(spec_structure, SparseTensorSpec):
        if not is_sparse_value(value):
            raise ValueError("structure mismatch")
        parts = sparse_parts(value)
        got = SparseTensorSpec(parts[2].numpy().tolist(), parts[1].dtype)
        if not spec_structure.is_compatible_with(got):
            raise SparseMismatch(got, spec_structure)
        return parts
    if is_composite(spec_structure):  # a RaggedTensorSpec: the value's components
        if isinstance(value, CompositeTensor):
            parts = value._to_components()
            if len(parts) != len(spec_structure._to_components()):
                raise ValueError("structure mismatch")
            return parts
        if len(spec_structure._to_components()) != 1:
            raise ValueError("structure mismatch")
    return [value]


def is_sparse_value(value) -> bool:
    return isinstance(value, (SparseTensor, SparseTensorValue))


def sparse_parts(value) -> list:
    """[indices, values, dense_shape] of a SparseTensor or SparseTensorValue as eager tensors
    (int64 indices and shape; the values' dtype as given or inferred as TensorFlow would)."""
    values = value.values
    if not isinstance(values, EagerTensor):
        arr, dt = infer_numpy(values.numpy() if isinstance(values, Tensor) else values, None)
        values = EagerTensor(numpy_to_torch(arr, dt), dt)
    return [to_eager(value.indices, dtypes.int64), values,
            to_eager(value.dense_shape, dtypes.int64)]


def sparse_to_numpy(indices, values, dense_shape, dtype) -> np.ndarray:
    """A SparseTensor's dense value as NumPy (what `as_numpy_iterator` gives, as TF's
    `SparseTensor._numpy`): zeros with the values at their indices."""
    if dtype is dtypes.string:
        raise TypeError("Cannot interpret 'tf.string' as a data type: as_numpy_iterator() "
                        "gives a SparseTensor as its dense NumPy array, which needs a numeric "
                        "dtype.")
    out = np.zeros([int(d) for d in dense_shape.numpy()], dtype=dtype.as_numpy_dtype)
    idx = indices.numpy()
    if len(idx):
        out[tuple(idx.T)] = values.numpy()
    return out


def numpy_element(spec_structure, flat: tuple):
    """A flat element as `as_numpy_iterator` gives it: NumPy values for tensors, a
    RaggedTensor's `.numpy()` (an object array of rows), a SparseTensor's dense array."""
    out, c = [], 0
    for leaf in leaves(spec_structure):
        n = len(flatten(leaf))
        part = flat[c:c + n]
        c += n
        if isinstance(leaf, SparseTensorSpec):
            out.append(sparse_to_numpy(*part, leaf.dtype))
        elif is_composite(leaf):
            out.append(leaf._from_components_like(list(part)).numpy())
        else:
            out.append(to_numpy(part[0]))
    return out[0] if _is_leaf(spec_structure) else pack_leaves(spec_structure, out)


def to_numpy(t):
    """A tensor's value as `as_numpy_iterator` gives it: NumPy scalars for 0-d values."""
    v = t.numpy()
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def spec_of(value) -> TensorSpec:
    return TensorSpec(value.shape, value.dtype)


def specs_of(structure):
    """The element_spec of a nest of tensors (RaggedTensorSpecs and SparseTensorSpecs for
    composite leaves)."""
    def one(leaf):
        if isinstance(leaf, SparseTensor):
            return sparse_spec_of(leaf)
        if is_composite(leaf):
            return pack_sequence_as(leaf, [spec_of(t) for t in flatten(leaf)])
        return spec_of(leaf)
    return map_leaves(one, structure)


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
        parts = flatten_up_to(spec_structure, element)
    except SparseMismatch as e:
        raise InvalidArgumentError(None, None, f"{what} produced an element of {e.got} where "
                                   f"an element of {e.expected} was expected.") from None
    except (TypeError, ValueError, KeyError):
        raise InvalidArgumentError(None, None, f"{what} produced an element that does not "
                                   f"match the structure {spec_structure}: {element!r}") \
            from None
    out = []
    for value, spec in zip(parts, flat_specs):
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
