"""`tf.experimental.BatchableExtensionType` and `tf.experimental.ExtensionTypeBatchEncoder`:
ExtensionTypes that `tf.data` can batch and unbatch (and slice with `from_tensor_slices`).

A batchable value is batched through its encoding, a list of batchable values (tensors,
RaggedTensors, SparseTensors, nested batchable ExtensionTypes): stacking, unstacking or
concatenating the encodings of values and decoding the result must be the same as doing it
to the values. The default encoder's encoding is the value's components (its tensor and
composite fields, in field order), and its `batch`/`unbatch` add or drop an outer dimension
on every nested spec and `TensorShape` field; a subclass sets `__batch_encoder__` to its own
encoder when that is not so. data/element_batching.py applies it leaf by leaf.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.extension_type import (
    ExtensionType,
    ExtensionTypeSpec,
    _components,
    _map,
    _new,
    _rebuild_fields,
)
from ndflow.ops.ragged_tensor_spec import RaggedTensorSpec
from ndflow.ops.sparse_tensor_spec import SparseTensorSpec


def _lead(batch_size) -> TensorShape:
    return TensorShape([batch_size])


def batch_spec(spec, batch_size):
    """The spec of a batch of `batch_size` (None: unknown) values of `spec`, for the kinds
    of specs TF calls batchable; other values (Python fields) unchanged."""
    if isinstance(spec, BatchableExtensionTypeSpec):
        return spec.__batch_encoder__.batch(spec, batch_size)
    if isinstance(spec, TensorShape):
        return _lead(batch_size).concatenate(spec)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(_lead(batch_size).concatenate(spec.shape), spec.dtype,
                                spec.ragged_rank + 1, spec.row_splits_dtype)
    if isinstance(spec, SparseTensorSpec):
        return SparseTensorSpec(_lead(batch_size).concatenate(spec.shape), spec.dtype)
    if isinstance(spec, TensorSpec):
        return TensorSpec(_lead(batch_size).concatenate(spec.shape), spec.dtype)
    return spec


def _drop_lead(shape: TensorShape) -> TensorShape:
    if shape.rank == 0:
        raise ValueError("Slicing dataset elements is not supported for rank 0.")
    return shape[1:] if shape.rank is not None else shape


def unbatch_spec(spec):
    """The spec of one value of a batch described by `spec` (`batch_spec`'s inverse)."""
    if isinstance(spec, BatchableExtensionTypeSpec):
        return spec.__batch_encoder__.unbatch(spec)
    if isinstance(spec, TensorShape):
        return _drop_lead(spec)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(_drop_lead(spec.shape), spec.dtype,
                                max(spec.ragged_rank - 1, 0), spec.row_splits_dtype)
    if isinstance(spec, SparseTensorSpec):
        return SparseTensorSpec(_drop_lead(spec.shape), spec.dtype)
    if isinstance(spec, TensorSpec):
        return TensorSpec(_drop_lead(spec.shape), spec.dtype)
    return spec


def _mapped_fields(spec, fn):
    return _new(type(spec), {f.name: _map(fn, spec.__dict__[f.name])
                             for f in spec._tf_extension_type_fields()})


@tf_export("experimental.ExtensionTypeBatchEncoder")
class ExtensionTypeBatchEncoder:
    """Encodes ExtensionType values as lists of batchable values, and says how batching
    changes their specs (see the module doc). Subclass it to batch a type whose values are
    not batched by batching each of their fields."""

    def batch(self, spec, batch_size):
        """The spec of `batch_size` values of `spec` stacked: an outer dimension added to
        every nested TypeSpec and TensorShape field."""
        return _mapped_fields(spec, lambda f: batch_spec(f, batch_size))

    def unbatch(self, spec):
        """The spec of one value of a batch `spec`: the outer dimension dropped."""
        return _mapped_fields(spec, unbatch_spec)

    def encode(self, spec, value, minimum_rank=0):
        """The batchable values `value` is encoded as: its components (tensors and
        composites, in field order)."""
        return _components(value)

    def decode(self, spec, encoded_value):
        """The value of spec `spec` whose encoding is `encoded_value`."""
        return _new(spec.value_type, _rebuild_fields(spec, list(encoded_value)))

    def encoding_specs(self, spec):
        """The specs of what `encode(spec, ...)` returns."""
        return _components(spec)


class BatchableExtensionTypeSpec(ExtensionTypeSpec):
    """Base of the `Spec` classes of BatchableExtensionTypes."""

    @property
    def __batch_encoder__(self):  # noqa: PLW3201 - TF's name for the type's encoder
        return getattr(self.value_type, "__batch_encoder__", _DEFAULT_ENCODER)

    def _batch(self, batch_size):
        return self.__batch_encoder__.batch(self, batch_size)

    def _unbatch(self):
        return self.__batch_encoder__.unbatch(self)


_DEFAULT_ENCODER = ExtensionTypeBatchEncoder()


@tf_export("experimental.BatchableExtensionType")
class BatchableExtensionType(ExtensionType):
    """An ExtensionType that `tf.data` (and `tf.map_fn`-style APIs) can batch and unbatch:
    by default, by batching each of its tensor, composite and TensorShape fields."""

    _tf_extension_type_do_not_transform_this_class = True
    _tf_extension_type_spec_base = BatchableExtensionTypeSpec
    __batch_encoder__ = _DEFAULT_ENCODER


def is_batchable_spec(spec) -> bool:
    return isinstance(spec, BatchableExtensionTypeSpec)
