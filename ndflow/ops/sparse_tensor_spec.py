"""`tf.SparseTensorSpec`: the type of a SparseTensor (dense shape and values dtype), for
`tf.function(input_signature=...)`. Its components are the specs of (indices, values,
dense_shape); rebuilt around tensors it gives a SparseTensor."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import TypeSpec
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.sparse_tensor import SparseTensor


@tf_export("SparseTensorSpec")
class SparseTensorSpec(TypeSpec):
    """`SparseTensorSpec(shape=[None, 3], dtype=tf.float32)`."""

    __slots__ = ("_shape", "_dtype")

    value_type = SparseTensor

    def __init__(self, shape=None, dtype=dtypes.float32):
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)

    @classmethod
    def from_value(cls, value) -> SparseTensorSpec:
        return cls(value.shape, value.dtype)

    def _to_components(self) -> list:
        rank = self._shape.rank
        return [TensorSpec([None, rank], dtypes.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], dtypes.int64)]

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            rank = components[2].shape.as_list()[0] if components[2].shape.rank else None
            return SparseTensorSpec(TensorShape(None if rank is None else [None] * rank),
                                    components[1].dtype)
        return SparseTensor(*components)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, SparseTensorSpec) else \
            SparseTensorSpec.from_value(spec_or_value) \
            if isinstance(spec_or_value, SparseTensor) else None
        return (other is not None and other._dtype is self._dtype
                and self._shape.is_compatible_with(other._shape))

    def most_specific_common_supertype(self, others):
        shape = self._shape
        for o in others:
            if not isinstance(o, SparseTensorSpec) or o._dtype is not self._dtype or \
                    o._shape.rank != shape.rank:
                return None
            shape = shape.most_specific_compatible_shape(o._shape)
        return SparseTensorSpec(shape, self._dtype)

    def __eq__(self, other):
        return type(other) is SparseTensorSpec and (self._shape, self._dtype) == (
            other._shape, other._dtype)

    def __hash__(self):
        return hash((self._shape, self._dtype))

    def __repr__(self):
        return f"SparseTensorSpec({self._shape!r}, tf.{self._dtype.name})"
