"""`tf.experimental.Optional` (a value or nothing), its `tf.OptionalSpec`, `tf.data.IteratorSpec`
and `tf.data.experimental.get_structure`.

`Optional` is the abstract type: the optionals iterators return from `get_next_as_optional`
(eager and graph) are registered as its subclasses, and `Optional.from_value` / `.empty`
build eager ones.
"""

from __future__ import annotations

import abc

from ndflow.core.api_export import tf_export
from ndflow.core.nest import assert_same_structure, flatten
from ndflow.data import structure
from ndflow.data.dataset import DatasetV2, EagerOptional, IteratorBase
from ndflow.data.iterator_ops import GraphOptional


@tf_export("experimental.Optional", "data.experimental.Optional")
class Optional(abc.ABC):
    """A value that may be absent: `has_value()`, `get_value()`, `element_spec`."""

    @abc.abstractmethod
    def has_value(self, name=None):
        """A scalar bool tensor: whether a value is present."""

    @abc.abstractmethod
    def get_value(self, name=None):
        """The value; `tf.errors.InvalidArgumentError` when there is none."""

    @property
    @abc.abstractmethod
    def element_spec(self):
        """The structure (TensorSpecs) of the value."""

    @staticmethod
    def from_value(value):
        """An optional holding `value` (a nest of tensors)."""
        value = structure.normalize(value)
        return EagerOptional(value, structure.specs_of(value))

    @staticmethod
    def empty(element_spec):
        """An optional with no value, typed by `element_spec`."""
        return EagerOptional(None, element_spec)


Optional.register(EagerOptional)
Optional.register(GraphOptional)


class _SpecOfElements:
    """A spec parametrised by an element structure (compared and printed as TF's)."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        try:
            assert_same_structure(self._element_spec, other._element_spec)
        except (ValueError, TypeError):
            return False
        return flatten(self._element_spec) == flatten(other._element_spec)

    def __hash__(self):
        return hash((type(self).__name__, repr(self._element_spec)))

    def __repr__(self):
        return f"{type(self).__name__}({self._element_spec!r},)"

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value if isinstance(spec_or_value, type(self)) else \
            self.from_value(spec_or_value)
        try:
            assert_same_structure(self._element_spec, other._element_spec)
        except (ValueError, TypeError):
            return False
        return all(a.is_compatible_with(b) for a, b in
                   zip(flatten(self._element_spec), flatten(other._element_spec)))


@tf_export("OptionalSpec", v1=["OptionalSpec", "data.experimental.OptionalStructure"])
class OptionalSpec(_SpecOfElements):
    """The type of a `tf.experimental.Optional`: its element structure."""

    value_type = property(lambda self: Optional)

    @staticmethod
    def from_value(value):
        return OptionalSpec(value.element_spec)


@tf_export("data.IteratorSpec", v1=[])
class IteratorSpec(_SpecOfElements):
    """The type of a `tf.data.Iterator`: its element structure."""

    value_type = property(lambda self: IteratorBase)

    @staticmethod
    def from_value(value):
        return IteratorSpec(value.element_spec)


@tf_export("data.experimental.get_structure")
def get_structure(dataset_or_iterator):
    """The element structure (TensorSpecs) of a dataset or iterator."""
    if isinstance(dataset_or_iterator, (DatasetV2, IteratorBase)) or (
            hasattr(dataset_or_iterator, "element_spec")
            and hasattr(dataset_or_iterator, "get_next")):
        return dataset_or_iterator.element_spec
    raise TypeError("Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a "
                    "`tf.data.Dataset` or tf.data.Iterator object, but got "
                    f"{type(dataset_or_iterator)}.")


