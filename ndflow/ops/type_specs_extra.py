"""`tf.TensorArraySpec`, `tf.IndexedSlicesSpec`, `tf.NoneTensorSpec`: the TypeSpecs of a
TensorArray, an IndexedSlices and None, with TensorFlow's semantics.

Like TensorFlow's generic `TypeSpec`, each is described by its `_serialize()` tuple: equality
and hashing compare it, `repr` prints it (`IndexedSlicesSpec(TensorShape([None, 3]),
tf.float32, tf.int64, None, TensorShape([None]))`), `is_compatible_with` compares it item by
item (shapes and dtypes by their own compatibility, everything else by equality), and
`is_subtype_of` / `most_specific_common_supertype` relax the shapes and keep the rest
(TensorArraySpec has TensorFlow's own rules, quirks included: see its methods).

Their components (ndflow's composite protocol, core/composite_tensor.py): an IndexedSlices is
(values, indices[, dense_shape]), a TensorArray its flow (one variant), None nothing; so
`tf.nest` with `expand_composites=True` flattens the specs into those TensorSpecs and packs
components back into values, and `tf.function(input_signature=[tf.IndexedSlicesSpec(...)])`
traces an IndexedSlices of placeholders (`[tf.NoneTensorSpec()]` takes None). The values
themselves stay what ndflow's machinery expects — an IndexedSlices one leaf of gradient
structures, a TensorArray no composite (as in TensorFlow) — and `tf.type_spec_from_value`
knows them through `type_spec_util.register_type_spec_from_value_converter`, as TensorFlow
registers them.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor, TypeSpec
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import type_spec_util
from ndflow.ops.apply import constant_value
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.tensor_array_ops import TensorArray

# -- TensorFlow's TraceType rules for the parts of a serialization ------------------------------


def _shape_is_subtype(a: TensorShape, b) -> bool:
    if not isinstance(b, TensorShape):
        return False
    if b.rank is None:
        return True
    if a.rank != b.rank:
        return False
    return all(y is None or x == y for x, y in zip(a.dims, b.dims))


def _shape_supertype(a: TensorShape, others: list):
    """TensorShape.most_specific_common_supertype: dims all agree on, else None; an unknown or
    differing rank gives the unknown shape."""
    if any(not isinstance(o, TensorShape) for o in others):
        return None
    if a.rank is None or any(o.rank is None or o.rank != a.rank for o in others):
        return TensorShape(None)
    return TensorShape([d if all(d == o.dims[i] for o in others) else None
                        for i, d in enumerate(a.dims)])


def _attr_is_subtype(a, b) -> bool:
    if isinstance(a, TensorShape):
        return _shape_is_subtype(a, b)
    if isinstance(a, (TypeSpec, TensorSpec)) and hasattr(a, "is_subtype_of"):
        return a.is_subtype_of(b)
    return a == b   # a DType is a subtype of itself only


def _attr_supertype(a, others: list):
    """(ok, supertype) of one serialized attribute."""
    if isinstance(a, TensorShape):
        s = _shape_supertype(a, others)
        return s is not None, s
    if isinstance(a, (TypeSpec, TensorSpec)):
        s = a.most_specific_common_supertype(others)
        return s is not None, s
    return all(a == o for o in others), a


def _same_types(a, b) -> bool:
    """As TF: namedtuples of one name and fields count as one type."""
    if isinstance(a, tuple) and hasattr(a, "_fields") and isinstance(b, tuple) and \
            hasattr(b, "_fields"):
        return type(a).__name__ == type(b).__name__ and a._fields == b._fields
    return type(a) is type(b)


def _compatible(a, b) -> bool:
    """TypeSpec.__is_compatible: shapes, dtypes and specs by compatibility, the rest by ==."""
    if isinstance(a, (TypeSpec, TensorSpec)):
        return a.is_compatible_with(b)
    if not _same_types(a, b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_compatible(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(_compatible(a[k], b[k]) for k in a)
    if isinstance(a, (TensorShape, dtypes.DType)):
        return a.is_compatible_with(b)
    return a == b


def _as_spec(spec_or_value):
    if isinstance(spec_or_value, (TypeSpec, TensorSpec)):
        return spec_or_value
    return type_spec_util.type_spec_from_value(spec_or_value)


class _SerializedTypeSpec(TypeSpec):
    """TensorFlow's default TypeSpec behaviour, from the tuple `_serialize()` returns."""

    __slots__ = ()

    def _serialize(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other):
        return type(other) is type(self) and self._serialize() == other._serialize()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self), self._serialize()))

    def __reduce__(self):
        return type(self), self._serialize()

    def __repr__(self):
        return f"{type(self).__name__}{self._serialize()!r}"

    def is_compatible_with(self, spec_or_value) -> bool:
        """Same type, and each serialized attribute compatible (shapes and dtypes by their
        compatibility, the rest equal)."""
        other = _as_spec(spec_or_value)
        return type(other) is type(self) and _compatible(self._serialize(), other._serialize())

    def is_subtype_of(self, other) -> bool:
        """Same type; shapes at least as specific as `other`'s, the rest equal."""
        if type(other) is not type(self):
            return False
        mine, theirs = self._serialize(), other._serialize()
        return len(mine) == len(theirs) and all(
            _attr_is_subtype(a, b) for a, b in zip(mine, theirs))

    def most_specific_common_supertype(self, others):
        """The most specific spec of this type that `self` and all `others` are subtypes of
        (shapes relaxed where they differ), or None."""
        others = list(others)
        if any(type(o) is not type(self) for o in others):
            return None
        parts = []
        for i, a in enumerate(self._serialize()):
            ok, s = _attr_supertype(a, [o._serialize()[i] for o in others])
            if not ok:
                return None
            parts.append(s)
        return type(self)(*parts)

    def most_specific_compatible_type(self, other):
        """Deprecated (TF): `most_specific_common_supertype([other])`, a ValueError if none."""
        result = self.most_specific_common_supertype([other])
        if result is None:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return result


# -- TensorArraySpec -----------------------------------------------------------------------------

@tf_export("TensorArraySpec")
class TensorArraySpec(_SerializedTypeSpec):
    """`TensorArraySpec(element_shape=[2], dtype=tf.float32, dynamic_size=False,
    infer_shape=True)`: the type of a `tf.TensorArray` (its component: the flow variant)."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    value_type = property(lambda self: TensorArray)

    def __init__(self, element_shape=None, dtype=dtypes.float32, dynamic_size=False,
                 infer_shape=True):
        self._element_shape = as_shape(element_shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    def _serialize(self) -> tuple:
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    @staticmethod
    def from_value(value) -> TensorArraySpec:
        if not isinstance(value, TensorArray):
            raise TypeError(f"Expected value to be a TensorArray, but got: `{type(value)}`")
        return TensorArraySpec(dtype=value.dtype, element_shape=value.element_shape,
                               dynamic_size=bool(value.dynamic_size),
                               infer_shape=value._infer_shape)

    def is_subtype_of(self, other) -> bool:
        """TF: the same dtype and dynamic_size (element shapes are not compared)."""
        return isinstance(other, TensorArraySpec) and self._dtype == other._dtype and \
            self._dynamic_size == other._dynamic_size

    def most_specific_common_supertype(self, others):
        """TensorFlow 2.21's rule, kept as it behaves: False (not None) when another is no
        TensorArraySpec, None when dtypes or dynamic_size differ, else this spec's element
        shape (TF hands the shapes to TensorShape's supertype as a generator, which its first
        check exhausts, so the other shapes are never compared) and infer_shape only if all
        infer shapes."""
        others = list(others)
        if not all(isinstance(o, TensorArraySpec) for o in others):
            return False
        shape = self._element_shape
        if not all(self._dtype == o._dtype for o in others):
            return None
        if not all(self._dynamic_size == o._dynamic_size for o in others):
            return None
        infer_shape = self._infer_shape and all(o._infer_shape for o in others)
        return TensorArraySpec(shape, self._dtype, self._dynamic_size, infer_shape)

    def is_compatible_with(self, other) -> bool:
        """Same dtype, compatible element shapes and the same dynamic_size (TF leaves
        infer_shape out)."""
        other = _as_spec(other)
        return isinstance(other, TensorArraySpec) and \
            self._dtype.is_compatible_with(other._dtype) and \
            self._element_shape.is_compatible_with(other._element_shape) and \
            self._dynamic_size == other._dynamic_size

    def _to_components(self) -> list:
        return [TensorSpec([], dtypes.variant)]

    def _from_components_like(self, components: list):
        if all(isinstance(c, TensorSpec) for c in components):
            return TensorArraySpec(*self._serialize())
        ta = TensorArray(dtype=self._dtype, flow=components[0],
                         dynamic_size=self._dynamic_size, infer_shape=self._infer_shape)
        ta._implementation._element_shape = [self._element_shape]
        return ta


# -- IndexedSlicesSpec ---------------------------------------------------------------------------

@tf_export("IndexedSlicesSpec")
class IndexedSlicesSpec(_SerializedTypeSpec):
    """`IndexedSlicesSpec(shape=[None, 3], dtype=tf.float32, indices_dtype=tf.int64,
    dense_shape_dtype=None, indices_shape=None)`: the type of a `tf.IndexedSlices` (its
    components: values, indices and, with a dense_shape_dtype, dense_shape)."""

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype",
                 "_indices_shape")

    value_type = property(lambda self: IndexedSlices)

    def __init__(self, shape=None, dtype=dtypes.float32, indices_dtype=dtypes.int64,
                 dense_shape_dtype=None, indices_shape=None):
        self._shape = as_shape(shape)
        self._values_dtype = dtypes.as_dtype(dtype)
        self._indices_dtype = dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else \
            dtypes.as_dtype(dense_shape_dtype)
        self._indices_shape = as_shape(indices_shape).with_rank(1)

    def _serialize(self) -> tuple:
        return (self._shape, self._values_dtype, self._indices_dtype, self._dense_shape_dtype,
                self._indices_shape)

    def _to_components(self) -> list:
        specs = [TensorSpec(self._indices_shape.concatenate(self._shape[1:]), self._values_dtype),
                 TensorSpec(self._indices_shape, self._indices_dtype)]
        if self._dense_shape_dtype is not None:
            specs.append(TensorSpec([self._shape.rank], self._dense_shape_dtype))
        return specs

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            values, indices = components[0], components[1]
            rank = components[2].shape[0] if len(components) > 2 and \
                components[2].shape.rank == 1 else None
            shape = TensorShape([None]).concatenate(values.shape[1:]) \
                if values.shape.rank is not None else \
                TensorShape(None if rank is None else [None] * rank)
            return IndexedSlicesSpec(shape, values.dtype, indices.dtype,
                                     components[2].dtype if len(components) > 2 else None,
                                     indices.shape)
        return IndexedSlices(*components)


def _indexed_slices_spec(value: IndexedSlices) -> IndexedSlicesSpec:
    """TF's IndexedSlices._type_spec: the dense shape is [None] + the rows' shape, refined by
    what is known of dense_shape; the indices' shape is merged with the values' rows."""
    values, indices, dense = value.values, value.indices, value.dense_shape
    indices_shape = indices.shape.merge_with(values.shape[:1])
    shape = TensorShape([None]).concatenate(values.shape[1:])
    dense_dtype = None
    if dense is not None:
        dense_dtype = dense.dtype
        known = constant_value(dense)
        if known is not None:
            shape = shape.merge_with([int(d) for d in np.asarray(known).reshape(-1)])
        elif dense.shape.rank == 1 and dense.shape[0] is not None:
            shape = shape.merge_with([None] * dense.shape[0])
    return IndexedSlicesSpec(shape, value.dtype, indices.dtype, dense_dtype, indices_shape)


# -- NoneTensorSpec ------------------------------------------------------------------------------

class NoneTensor(CompositeTensor):
    """The composite tensor standing for None (the value type of `NoneTensorSpec`)."""

    __slots__ = ()

    @property
    def _type_spec(self) -> NoneTensorSpec:
        return NoneTensorSpec()

    def _to_components(self) -> list:
        return []

    def _from_components_like(self, components: list):
        return None

    def _session_value(self, arrays: list):
        return None


@tf_export("NoneTensorSpec")
class NoneTensorSpec(_SerializedTypeSpec):
    """`NoneTensorSpec()`: the type of None where a structure of tensors has one (no
    components)."""

    __slots__ = ()

    value_type = property(lambda self: NoneTensor)

    def _serialize(self) -> tuple:
        return ()

    @staticmethod
    def from_value(value) -> NoneTensorSpec:
        return NoneTensorSpec()

    def most_specific_compatible_shape(self, other):
        if type(self) is not type(other):
            raise ValueError(f"No `TypeSpec` is compatible with both {self} and {other}")
        return self

    def _to_components(self) -> list:
        return []

    def _from_components_like(self, components: list):
        return None


# The specs of the values that are no CompositeTensors in ndflow (TF registers the same).
type_spec_util.register_type_spec_from_value_converter(IndexedSlices, _indexed_slices_spec,
                                                       allow_subclass=True)
type_spec_util.register_type_spec_from_value_converter(TensorArray, TensorArraySpec.from_value,
                                                       allow_subclass=True)
type_spec_util.register_type_spec_from_value_converter(type(None), NoneTensorSpec.from_value)
# public here, so that the converters above are registered whenever it is used
type_spec_from_value = tf_export("type_spec_from_value")(type_spec_util.type_spec_from_value)
