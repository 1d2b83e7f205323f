"""`tf.RaggedTensorSpec`: the type of a RaggedTensor (shape with None ragged dimensions, dtype,
ragged_rank, row_splits_dtype), for `tf.function(input_signature=...)` and a dataset's
`element_spec`. As TensorFlow, ragged_rank 0 describes a plain dense tensor (what a dataset
of the rows of a 2-D RaggedTensor yields).

Its components are the specs of `[flat_values, *nested_row_splits]`; rebuilt around tensors
it gives a RaggedTensor, around TensorSpecs the spec those components imply.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import TypeSpec
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import composite_dispatch
from ndflow.ops.ragged_tensor import RaggedTensor, from_components


@tf_export("RaggedTensorSpec")
class RaggedTensorSpec(TypeSpec):
    """`RaggedTensorSpec(shape=[None, None], dtype=tf.int32, ragged_rank=1)`."""

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype", "_flat_values_spec")

    value_type = RaggedTensor

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None,
                 row_splits_dtype=dtypes.int64, flat_values_spec=None):
        self._shape = as_shape(shape)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if flat_values_spec is not None:
            if dtype is not None and dtypes.as_dtype(dtype) is not flat_values_spec.dtype \
                    and dtype is not dtypes.float32:
                raise ValueError("dtype must be the same as flat_values_spec.dtype")
            dtype = flat_values_spec.dtype
        self._dtype = dtypes.as_dtype(dtype)
        self._flat_values_spec = flat_values_spec
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int):
            raise TypeError(f"ragged_rank must be an int, got {ragged_rank!r}")
        if rank is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be non-negative and less than rank "
                             f"({rank}), got {ragged_rank}")
        self._ragged_rank = ragged_rank

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)
    flat_values_spec = property(lambda self: self._flat_values_spec)

    @classmethod
    def from_value(cls, value) -> RaggedTensorSpec:
        if isinstance(value, RaggedTensor):
            return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)
        return cls(value.shape, value.dtype, 0)

    # -- components ----------------------------------------------------------------------------
    def _to_components(self) -> list:
        if self._ragged_rank == 0:
            return [TensorSpec(self._shape, self._dtype)]
        dims = self._shape.as_list() if self._shape.rank is not None else None
        if dims is None:
            flat = TensorSpec(None, self._dtype)
            outer = None
        else:
            flat = TensorSpec([None] + dims[self._ragged_rank + 1:], self._dtype)
            outer = dims[0]
        if self._flat_values_spec is not None:
            flat = self._flat_values_spec
        splits = [TensorSpec([None if outer is None else outer + 1], self._row_splits_dtype)]
        splits += [TensorSpec([None], self._row_splits_dtype)] * (self._ragged_rank - 1)
        return [flat] + splits

    def _from_components_like(self, components: list):
        if components and all(isinstance(c, TensorSpec) for c in components):
            return _spec_from_component_specs(components, self._ragged_rank)
        if self._ragged_rank == 0:
            return components[0]
        dims = self._shape.as_list() if self._shape.rank is not None else \
            [None] * (self._ragged_rank + 1)
        return from_components(components[0], components[1:], dims[1:self._ragged_rank + 1])

    # -- compatibility -------------------------------------------------------------------------
    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, RaggedTensorSpec) else \
            RaggedTensorSpec.from_value(spec_or_value) \
            if hasattr(spec_or_value, "dtype") else None
        return (other is not None and other._dtype is self._dtype
                and other._ragged_rank == self._ragged_rank
                and other._row_splits_dtype is self._row_splits_dtype
                and self._shape.is_compatible_with(other._shape))

    def most_specific_common_supertype(self, others):
        shape = self._shape
        for o in others:
            if not isinstance(o, RaggedTensorSpec) or o._dtype is not self._dtype or \
                    o._ragged_rank != self._ragged_rank or \
                    o._row_splits_dtype is not self._row_splits_dtype or \
                    o._shape.rank != shape.rank:
                return None
            shape = shape.most_specific_compatible_shape(o._shape)
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def _key(self):
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __eq__(self, other):
        return type(other) is RaggedTensorSpec and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"RaggedTensorSpec({self._shape!r}, tf.{self._dtype.name}, "
                f"{self._ragged_rank}, tf.{self._row_splits_dtype.name})")


def _spec_from_component_specs(components: list, ragged_rank: int) -> RaggedTensorSpec:
    """The spec of a RaggedTensor whose components have these specs."""
    flat, splits = components[0], components[1:1 + ragged_rank]
    if not splits:
        return RaggedTensorSpec(flat.shape, flat.dtype, 0)
    n = splits[0].shape.as_list()[0] if splits[0].shape.rank == 1 else None
    inner = flat.shape.as_list()[1:] if flat.shape.rank is not None else None
    shape = TensorShape(None) if inner is None else \
        TensorShape([None if n is None else n - 1] + [None] * ragged_rank + inner)
    return RaggedTensorSpec(shape, flat.dtype, ragged_rank, splits[0].dtype)


composite_dispatch.register("ragged_spec_from_value")(RaggedTensorSpec.from_value)
composite_dispatch.register("ragged_spec_from_components")(_spec_from_component_specs)
