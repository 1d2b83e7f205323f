"""`tf.experimental.StructuredTensor`: a (possibly ragged) tensor of structures — each element
a dict of named fields — stored field-major: one Tensor, RaggedTensor or nested
StructuredTensor per field, whose outer `rank` dimensions are the StructuredTensor's shape.

    st = StructuredTensor.from_pyval([{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3]}])
    st.shape                  # (2,)
    st.field_value("b")       # <tf.RaggedTensor [[1, 2], [3]]>
    st[0]["b"]                # tf.Tensor([1 2])

As TensorFlow's, it is an ExtensionType with two fields, `_fields` (name -> value) and
`_ragged_shape` (a DynamicRaggedShape holding `rank - 1` row partitions), so `tf.function`
and `tf.nest` carry it as its field tensors and its shape's.
"""

from __future__ import annotations

import re
import typing

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import structured_pyval
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.array_core import shape as shape_op
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.dynamic_ragged_shape import (
    DynamicRaggedShape,
    batched_shape_spec,
    spec_shape,
    template_spec,
    unbatched_shape_spec,
)
from ndflow.ops.extension_type import _new
from ndflow.ops.extension_type_batch import (
    BatchableExtensionType,
    ExtensionTypeBatchEncoder,
    batch_spec,
    unbatch_spec,
)
from ndflow.ops.extension_type_field import ImmutableDict
from ndflow.ops.ragged_factory import constant as ragged_constant
from ndflow.ops.ragged_tensor import RaggedTensor, from_components
from ndflow.ops.row_partition import RowPartition, RowPartitionSpec, row_partition_of

_FIELD_NAME_RE = re.compile("^[a-zA-Z][a-zA-Z0-9_]*$")
# composites first: converting a RaggedTensor field as a Tensor would fail (and cost)
_FieldValue = typing.Union[CompositeTensor, Tensor]  # noqa: UP007 - ExtensionType annotation


class _StructuredBatchEncoder(ExtensionTypeBatchEncoder):
    """Batches StructuredTensors as their shape's template (zeros of the shape) followed
    by their field values: each batches by its own rule."""

    def batch(self, spec, batch_size):
        fields = {k: batch_spec(v, batch_size) for k, v in spec._fields.items()}
        return _new(type(spec), {"_fields": ImmutableDict(fields), "_ragged_shape":
                                 _full_partitions(batched_shape_spec(spec._ragged_shape,
                                                                     batch_size))})

    def unbatch(self, spec):
        fields = {k: unbatch_spec(v) for k, v in spec._fields.items()}
        return _new(type(spec), {"_fields": ImmutableDict(fields), "_ragged_shape":
                                 unbatched_shape_spec(spec._ragged_shape)})

    def encode(self, spec, value, minimum_rank=0):
        shape = value._ragged_shape
        template = _scalar_zero() if shape.rank == 0 else shape._template()
        return [template] + list(value._fields.values())

    def decode(self, spec, encoded_value):
        template, values = encoded_value[0], encoded_value[1:]
        rank = spec_shape(spec._ragged_shape).rank
        dtype = spec._ragged_shape._inner_shape.dtype
        if rank == 0:
            shape = _scalar_shape(dtype)
        else:
            shape = DynamicRaggedShape.from_tensor(template, dtype)
            if rank > 1:
                shape = _fully_ragged(shape, rank)
        # the encoded values are the fields as they were: no conversion needed
        return _new(StructuredTensor, {"_fields": ImmutableDict(zip(spec._fields, values)),
                                       "_ragged_shape": shape})

    def encoding_specs(self, spec):
        return [template_spec(spec._ragged_shape)] + list(spec._fields.values())


_CACHE: dict = {}


def _cached(key, make):
    """Eagerly, one immutable value per key (tf.data batches structures one by one)."""
    if not context.executing_eagerly():
        return make()
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def _scalar_zero():
    """The template of a scalar shape."""
    return _cached("zero", lambda: convert_to_tensor(np.int32(0)))


def _scalar_shape(dtype) -> DynamicRaggedShape:
    """The scalar DynamicRaggedShape of `dtype`."""
    return _cached(dtype, lambda: DynamicRaggedShape(
        [], convert_to_tensor(np.zeros([0], np.int64), dtype)))


def _fully_ragged(shape: DynamicRaggedShape, rank: int) -> DynamicRaggedShape:
    """`shape` (of rank `rank`) with `rank - 1` row partitions and an inner rank of 1, as a
    StructuredTensor keeps it."""
    rps = shape._with_num_row_partitions(rank - 1).row_partitions
    return DynamicRaggedShape(rps, [rps[-1].nvals()])


def _full_partitions(spec):
    """A batched shape spec in a StructuredTensor's form (rank - 1 partitions)."""
    rank = spec_shape(spec).rank
    if rank is None or rank < 2 or len(spec._row_partitions) == rank - 1:
        return spec
    dims = spec_shape(spec).as_list()
    dtype = spec._inner_shape.dtype
    rps = [RowPartitionSpec(dims[0] if i == 0 else None, None, dims[i + 1], dtype)
           for i in range(rank - 1)]
    return _new(type(spec), {"_inner_shape": TensorSpec([1], dtype),
                             "_row_partitions": tuple(rps),
                             "_static_inner_shape": TensorShape([None])})


@tf_export("experimental.StructuredTensor")
class StructuredTensor(BatchableExtensionType):
    """A multidimensional collection of structures with the same schema (module doc)."""

    _fields: typing.Mapping[str, _FieldValue]  # noqa: UP006 - ExtensionType annotation
    _ragged_shape: DynamicRaggedShape

    FieldName = typing.Union[str, typing.Sequence[str]]  # noqa: UP007 - TF's alias
    __batch_encoder__ = _StructuredBatchEncoder()

    class Spec:
        @property
        def _shape(self) -> TensorShape:
            return spec_shape(self._ragged_shape)

        @property
        def _field_specs(self) -> dict:
            return dict(self._fields)

        shape = property(lambda self: self._shape)
        rank = property(lambda self: self._shape.rank)

    def __init__(self, fields, ragged_shape):
        self._fields = fields
        self._ragged_shape = ragged_shape

    # -- factories -----------------------------------------------------------------------------
    @classmethod
    def from_shape(cls, ragged_shape):
        """A StructuredTensor with no fields and this DynamicRaggedShape."""
        return StructuredTensor(fields={}, ragged_shape=ragged_shape)

    @classmethod
    def from_fields(cls, fields, shape=(), nrows=None, row_partitions=None, validate=False):
        """From a dict of field values whose outer `shape.rank` dimensions are `shape`."""
        shape = as_shape(shape)
        rank = shape.rank
        if rank is None:
            raise ValueError("StructuredTensor's shape must have known rank.")
        if not isinstance(fields, dict):
            raise TypeError(f"fields must be a dictionary, got {type(fields).__name__}")
        if rank < 2 and row_partitions:
            raise ValueError("row_partitions must be None or [] if shape.rank<2")
        if rank == 0 and nrows is not None:
            raise ValueError("nrows must be None if shape.rank==0")
        given_partitions = row_partitions is not None
        if given_partitions:
            row_partitions = tuple(row_partitions)
            if len(row_partitions) != max(0, rank - 1):
                raise ValueError("len(row_partitions) must be shape.rank-1")
        fields = dict(fields)
        for key, value in fields.items():
            if not isinstance(key, str):
                raise TypeError(f"Unexpected type for key in `fields`: {key}")
            if not _FIELD_NAME_RE.match(key):
                raise ValueError(f"Field name {key!r} is not currently allowed.")
            fields[key] = _field_value(value)
        ragged_shape = _shape_from_fields(fields, shape, nrows, row_partitions)
        if given_partitions and rank > 1:
            fields = {k: _with_partitions(v, row_partitions) for k, v in fields.items()}
        return cls(fields=fields, ragged_shape=ragged_shape)

    @classmethod
    def from_fields_and_rank(cls, fields, rank, validate=False, dtype=None):
        """From a non-empty dict of fields, the shape being their outer `rank` dims."""
        if not fields:
            raise ValueError("Must provide at least one field")
        if not isinstance(rank, int):
            raise ValueError("rank must be an integer")
        if rank < 0:
            raise ValueError("rank must be nonnegative")
        st = cls.from_fields(fields, shape=[None] * rank, validate=validate)
        return st if dtype is None else st.with_shape_dtype(dtype)

    @classmethod
    def from_pyval(cls, pyval, typespec=None):
        """From nested Python dicts and lists: dicts become structures, lists of dicts add
        dimensions, other lists become (ragged) tensors of their values."""
        if typespec is not None:
            raise NotImplementedError("ndflow's StructuredTensor.from_pyval infers the "
                                      "field types; a typespec is not supported yet")
        return _from_pyval(pyval, ())

    # -- properties ----------------------------------------------------------------------------
    @property
    def rank(self):
        return self._ragged_shape.rank

    @property
    def shape(self) -> TensorShape:
        return self._ragged_shape._to_tensor_shape()

    @property
    def row_partitions(self) -> tuple:
        """`rank - 1` RowPartitions (none when rank < 2), outermost first."""
        if self.rank < 2:
            return ()
        return tuple(self._ragged_shape.row_partitions)

    def nrows(self):
        """The outer dimension's size (a scalar tensor), None for a scalar."""
        if self.rank == 0:
            return None
        return self._ragged_shape[0]

    def field_names(self) -> tuple:
        return tuple(self._fields.keys())

    def field_value(self, field_name):
        """A field's value, or the value at a path (a tuple of names) of nested fields."""
        if isinstance(field_name, (list, tuple)):
            value = self
            for f in field_name:
                if not isinstance(value, StructuredTensor):
                    raise KeyError(f"Field path {field_name} not found in {self}")
                value = value.field_value(f)
            return value
        return self._fields[field_name]

    def with_shape_dtype(self, dtype):
        """The same StructuredTensor with its shape (and ragged fields) encoded in `dtype`."""
        dtype = dtypes.as_dtype(dtype)
        if dtype is self._ragged_shape.dtype:
            return self
        fields = {k: v.with_row_splits_dtype(dtype) if isinstance(v, RaggedTensor) else
                  v.with_shape_dtype(dtype) if isinstance(v, StructuredTensor) else v
                  for k, v in self._fields.items()}
        return StructuredTensor(fields=fields, ragged_shape=self._ragged_shape.with_dtype(dtype))

    def with_updates(self, updates, validate=False):
        """A copy with fields set (a value), changed (a function of the old value, None
        when absent) or deleted (None), each named by a field name or path."""
        fields = dict(self._fields)
        for name, value in updates.items():
            path = (name,) if isinstance(name, str) else tuple(name)
            if not path:
                raise ValueError("Empty field path")
            head, rest = path[0], path[1:]
            if rest:
                child = fields.get(head)
                if not isinstance(child, StructuredTensor):
                    raise ValueError(f"Field `{'.'.join(path)}` is not a nested "
                                     f"StructuredTensor field `{head}`")
                fields[head] = child.with_updates({rest: value}, validate)
                continue
            new = value(fields.get(head)) if callable(value) else value
            if new is None:
                if head not in fields:
                    raise ValueError(f"Field `{head}` does not exist and cannot be deleted")
                del fields[head]
            else:
                fields[head] = _field_value(new)
        return StructuredTensor(fields=fields, ragged_shape=self._ragged_shape)

    # -- indexing ------------------------------------------------------------------------------
    def __getitem__(self, key):
        """`st["field"]` of a scalar; `st[i]`, `st[i:j]`, `st[i, "field"]` ... otherwise."""
        key = tuple(key) if isinstance(key, list) else key if isinstance(key, tuple) \
            else (key,)
        if not key:
            return self
        if self.rank == 0:
            if isinstance(key[0], slice) and key[0] == slice(None):
                return StructuredTensor.from_fields(
                    {k: v[key[1:]] for k, v in self._fields.items()}, self.shape)
            if not isinstance(key[0], (str, bytes)):
                raise ValueError("Key for indexing a StructuredTensor must be a string or a "
                                 "full slice (':')")
            name = key[0].decode() if isinstance(key[0], bytes) else key[0]
            return self._fields[name][key[1:]]
        rank = self.rank
        if len(key) > rank:
            if not isinstance(key[rank], (str, bytes)):
                raise ValueError("Key for indexing a StructuredTensor must be a string")
            name = key[rank].decode() if isinstance(key[rank], bytes) else key[rank]
            return self._fields[name][key[:rank] + key[rank + 1:]]
        fields = {name: v[key] for name, v in self._fields.items()}
        dims = self.shape.as_list()
        for d, k in enumerate(key):
            if isinstance(k, slice):
                if k != slice(None):
                    dims[d] = None
            elif isinstance(k, (int, Tensor)):
                dims[d] = -1
            elif k is None:
                raise ValueError("Slicing not supported for tf.newaxis")
            else:
                raise ValueError(f"Slicing not supported for {k!r}")
        return StructuredTensor.from_fields(fields, [d for d in dims if d != -1])

    def __repr__(self):
        items = ((k, str(v).replace("\n", "\n            "))
                 for k, v in sorted(self._fields.items()))
        body = ",\n        ".join(f'"{k}": {v}' for k, v in items)
        return ("<StructuredTensor(\n    fields={\n        " + body + "},\n"
                f"    shape={_shape_text(self.shape)})>")

    # -- conversion ----------------------------------------------------------------------------
    def to_pyval(self):
        """Nested Python dicts (rank 0) or lists of dicts (eager only)."""
        from_eager = all(isinstance(t, EagerTensor) for t in _flat_tensors(self))
        if not from_eager:
            raise ValueError("StructuredTensor.to_pyval() is only supported in eager mode.")
        result = {}
        for key, value in self._fields.items():
            if isinstance(value, RaggedTensor):
                result[key] = value.to_list()
            elif isinstance(value, StructuredTensor):
                result[key] = value.to_pyval()
            elif isinstance(value, Tensor):
                v = value.numpy()
                result[key] = v.tolist() if isinstance(v, np.ndarray) else v
            else:
                result[key] = value
        if self.rank == 0:
            return result
        if not result:
            template = self._ragged_shape._add_row_partitions(
                zeros(self._ragged_shape.inner_shape, dtypes.int32))
            nested = template.to_list() if isinstance(template, RaggedTensor) else \
                template.numpy().tolist()
            return structured_pyval.empty_dicts(nested)
        return structured_pyval.node_major(list(result), list(result.values()), self.rank)

    # -- transforms ----------------------------------------------------------------------------
    def partition_outer_dimension(self, row_partition):
        """The outer dimension split into rows by `row_partition` (rank + 1)."""
        if not isinstance(row_partition, RowPartition):
            raise TypeError("row_partition must be a RowPartition.")
        if self.shape.rank == 0:
            raise ValueError(f"Shape {self.shape} must have rank at least 1")
        return _partition(self, row_partition)

    def merge_dims(self, outer_axis, inner_axis):
        """Dimensions outer_axis..inner_axis merged into one (row-major)."""
        rank = self.shape.rank
        outer = _positive_axis(outer_axis, rank, "outer_axis")
        inner = _positive_axis(inner_axis, rank, "inner_axis")
        if not outer <= inner:
            raise ValueError(f"Expected outer_axis ({outer}) to be less than or equal to "
                             f"inner_axis ({inner})")
        return _merge_dims(self, outer, inner)


# -- helpers -----------------------------------------------------------------------------------

def _shape_text(shape: TensorShape) -> str:
    dims = shape.as_list()
    return "(" + ", ".join("None" if d is None else str(d) for d in dims) + \
        ("," if len(dims) == 1 else "") + ")"


def _flat_tensors(st) -> list:
    out = []
    for v in st._fields.values():
        out += _flat_tensors(v) if isinstance(v, StructuredTensor) else \
            (v._to_components() if isinstance(v, CompositeTensor) else [v])
    return out


def _field_value(value):
    if isinstance(value, (Tensor, CompositeTensor)):
        return value
    if isinstance(value, dict):
        return StructuredTensor.from_fields(value)
    return convert_to_tensor(value)


def _positive_axis(axis, rank, name):
    if not -rank <= axis < rank:
        raise ValueError(f"{name}={axis} out of bounds: expected {-rank}<={name}<{rank}")
    return axis + rank if axis < 0 else axis


def _value_partitions(value, rank: int, dtype) -> tuple:
    """The `rank - 1` outer row partitions of a field value (uniform ones for dense dims)."""
    if isinstance(value, StructuredTensor):
        return tuple(value.row_partitions[:rank - 1])
    shape = DynamicRaggedShape.from_tensor(value, dtype)
    if shape.num_row_partitions >= rank - 1:
        return tuple(shape.row_partitions[:rank - 1])
    return tuple(shape._with_num_row_partitions(rank - 1).row_partitions)


def _shape_from_fields(fields: dict, shape: TensorShape, nrows, row_partitions):
    rank = shape.rank
    dtype = next((v.row_splits.dtype for v in fields.values() if isinstance(v, RaggedTensor)),
                 None)
    dtype = dtype or next((v._ragged_shape.dtype for v in fields.values()
                           if isinstance(v, StructuredTensor)), None) or dtypes.int64
    if rank == 0:
        return DynamicRaggedShape([], convert_to_tensor([], dtype))
    first = next(iter(fields.values()), None)
    for v in fields.values():
        vrank = v.rank if isinstance(v, StructuredTensor) else v.shape.rank
        if vrank is not None and vrank < rank:
            raise ValueError(f"Field has rank {vrank}, which is less than the "
                             f"StructuredTensor's rank {rank}")
    if rank == 1:
        if nrows is None:
            if first is None:
                raise ValueError("nrows must be specified if rank==1 and `fields` is empty.")
            n = first.nrows() if isinstance(first, (RaggedTensor, StructuredTensor)) else \
                shape_op(first, out_type=dtype)[0]
        else:
            n = nrows
        n = convert_to_tensor(n, dtype) if not isinstance(n, Tensor) else n
        static = shape
        for v in fields.values():
            static = static.merge_with(v.shape[:1])
        return DynamicRaggedShape([], n[None], dtype=dtype, static_inner_shape=static)
    if row_partitions is None:
        if first is None:
            raise ValueError("row_partitions must be specified if rank>1 and `fields` is "
                             "empty.")
        row_partitions = _value_partitions(first, rank, dtype)
    rps = [rp.with_dtype(dtype) for rp in row_partitions]
    return DynamicRaggedShape(rps, [rps[-1].nvals()], dtype=dtype)


def _with_partitions(value, rps):
    """A field value whose outer dims are re-expressed with the row partitions `rps`."""
    if isinstance(value, StructuredTensor):
        return value
    flat = value
    for _ in rps:
        flat = flat.values if isinstance(flat, RaggedTensor) else _merge_outer(flat)
    return from_components(flat, [rp.row_splits() for rp in rps],
                           [rp.static_uniform_row_length for rp in rps])


def _merge_outer(t):
    """A dense tensor with its two outer dimensions merged."""
    dims = shape_op(t)
    return reshape(t, concat([convert_to_tensor([-1], dims.dtype), dims[2:]], 0))


# -- from_pyval / to_pyval ----------------------------------------------------------------------

def _from_pyval(pyval, path: tuple):
    if isinstance(pyval, dict):
        fields = {k: _from_pyval(v, path + (k,)) for k, v in pyval.items()}
        return StructuredTensor.from_fields(fields=fields, shape=())
    if isinstance(pyval, (list, tuple)):
        keys: dict = {}   # first-appearance order (TF: a set)
        rank = structured_pyval.struct_keys_and_depth(pyval, keys)
        if rank is not None:
            return _from_pylist_of_dict(pyval, keys, rank, path)
        try:   # TF's tf.ragged.constant: a plain tensor for a flat list
            return ragged_constant(pyval) if structured_pyval.list_depth(pyval) > 1 else \
                convert_to_tensor(pyval)
        except Exception as exc:
            raise ValueError(f"Error parsing path {path!r}") from exc
    try:
        return convert_to_tensor(pyval)
    except Exception as exc:
        raise ValueError(f"Error parsing path {path!r}") from exc


def _from_pylist_of_dict(pyval, keys, rank, path):
    fields = {key: [] for key in keys}
    for child in pyval:
        structured_pyval.update_fields(child, fields, 1)
    try:
        if not fields:
            return _from_pylist_of_empty_dict(pyval, rank)
        values = {k: _from_pyval(v, path + (k,)) for k, v in fields.items()}
        return StructuredTensor.from_fields(values, shape=[None] * rank)
    except Exception as exc:
        raise ValueError(f"Error parsing path {path!r}") from exc


def _from_pylist_of_empty_dict(pyval, rank):
    if rank == 1:
        return StructuredTensor.from_fields({}, shape=(len(pyval),), nrows=len(pyval))
    template = ragged_constant(structured_pyval.dicts_to_zeros(pyval))
    rps = []
    level = template
    while isinstance(level, RaggedTensor):
        rps.append(row_partition_of(level))
        level = level.values
    return StructuredTensor.from_fields({}, shape=[len(pyval)] + [None] * (rank - 1),
                                        row_partitions=rps[:rank - 1], nrows=len(pyval))


# -- partition / merge --------------------------------------------------------------------------

def _partition(value, rp: RowPartition):
    if isinstance(value, StructuredTensor):
        fields = {k: _partition(v, rp) for k, v in value._fields.items()}
        dims = value.shape.as_list()
        shape = TensorShape([rp.static_nrows, rp.static_uniform_row_length] + dims[1:])
        old = list(value.row_partitions)
        return StructuredTensor(fields=fields, ragged_shape=DynamicRaggedShape(
            [rp] + old, [(old[-1] if old else rp).nvals()], dtype=rp.dtype,
            static_inner_shape=shape[len(old) + 1:len(old) + 2] if old else None))
    splits = rp.row_splits()
    if isinstance(value, RaggedTensor) and value.row_splits.dtype is not rp.dtype:
        value = value.with_row_splits_dtype(rp.dtype)
    return RaggedTensor._from_splits(value, splits, rp.static_uniform_row_length)


def _merge_dims(value, outer: int, inner: int):
    if not outer < inner:   # TF asserts this too
        raise AssertionError(f"merge_dims needs outer_axis < inner_axis, got {outer} and "
                             f"{inner}")
    if isinstance(value, StructuredTensor):
        if not value._fields:
            template = value._ragged_shape._add_row_partitions(
                zeros(value._ragged_shape.inner_shape, dtypes.int32))
            merged = _merge_dims(template, outer, inner)
            return StructuredTensor.from_shape(DynamicRaggedShape.from_tensor(
                merged, value._ragged_shape.dtype))
        fields = {k: _merge_dims(v, outer, inner) for k, v in value._fields.items()}
        rank = value.rank - (inner - outer)
        return StructuredTensor.from_fields(fields, shape=[None] * rank)
    if isinstance(value, RaggedTensor):
        return value.merge_dims(outer, inner)
    dims = shape_op(value)
    return reshape(value, concat([dims[:outer], convert_to_tensor([-1], dims.dtype),
                                  dims[inner + 1:]], 0))
