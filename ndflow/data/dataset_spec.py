"""`tf.data.DatasetSpec`: the type of a dataset-valued component of an element (the windows
of `Dataset.window`, the groups `group_by_window` hands to its `reduce_func`).

Such a component travels through a pipeline as the dataset object itself (a Python value in
the flat element where a tensor would be); in a graph it is a `tf.variant` scalar.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.data.dataset import DatasetV2


@tf_export("data.DatasetSpec", v1=["data.DatasetSpec", "data.experimental.DatasetStructure"])
class DatasetSpec:
    """The type of a `tf.data.Dataset`: the `element_spec` of its elements."""

    __slots__ = ("_element_spec", "_dataset_shape")
    _is_dataset_spec = True  # what structure.check_spec accepts besides tf.TensorSpec

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = as_shape(dataset_shape)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return DatasetV2

    # A dataset component's graph representation: one variant scalar.
    @property
    def dtype(self):
        return dtypes.variant

    @property
    def shape(self) -> TensorShape:
        return self._dataset_shape

    def is_compatible_with(self, other) -> bool:
        if isinstance(other, DatasetV2):
            other = DatasetSpec(other.element_spec)
        if not isinstance(other, DatasetSpec):
            return False
        mine, theirs = flatten(self._element_spec), flatten(other._element_spec)
        return len(mine) == len(theirs) and all(
            a.is_compatible_with(b) for a, b in zip(mine, theirs))

    def __eq__(self, other):
        return (isinstance(other, DatasetSpec) and self._element_spec == other._element_spec
                and self._dataset_shape == other._dataset_shape)

    def __hash__(self):
        return hash((DatasetSpec, repr(self._element_spec)))

    def __repr__(self):
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape!r})"

    @staticmethod
    def from_value(value):
        return DatasetSpec(value.element_spec)


def is_dataset_spec(spec) -> bool:
    return isinstance(spec, DatasetSpec)
