"""Composite tensors (`tf.RaggedTensor`) and their type specs (`tf.TypeSpec`).

A composite tensor is a Python object made of ordinary tensors, its *components*
(a RaggedTensor: flat values + one row-splits vector per ragged dimension). Inside ndflow a
composite always travels as its components: `tf.function` traces them as arguments and
returns them as outputs, `tf.data` carries them as the element's flat tensors, and the object
is rebuilt around them where the user sees it. `tf.nest` with `expand_composites=True` (and
ndflow's internal flattening, see core/nest.py) expands them the same way.

Both a composite value and its spec can rebuild "the same kind of object" around new
components (`_from_components_like`): components that are tensors give a value, components
that are `TensorSpec`s give a spec, anything else (the placeholders a traced function's
outputs are rebuilt from) gives a value holding those objects.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export


class CompositeTensor:
    """Base of tensor-like objects made of several tensors (`tf.RaggedTensor`)."""

    __slots__ = ()

    @property
    def _type_spec(self) -> TypeSpec:
        raise NotImplementedError

    def _to_components(self) -> list:
        """The component tensors, in a fixed order the object's structure determines."""
        raise NotImplementedError

    def _from_components_like(self, components: list):
        """An object of this one's structure (same number of components) around
        `components`."""
        raise NotImplementedError

    def _session_value(self, arrays: list):
        """What a TF1 `Session.run` returns for this object, its components computed."""
        raise NotImplementedError

    def _traced_from_components(self, components: list):
        """The object a `tf.function` trace sees for this argument, around its placeholders:
        only what the trace is keyed on (the components' specs) may be static there."""
        return self._from_components_like(components)

    def _trace_static_key(self):
        """What a `tf.function` trace is keyed on besides the components' specs (hashable;
        an ExtensionType's type and Python fields)."""
        return None


@tf_export("TypeSpec", v1=["TypeSpec", "data.experimental.Structure"])
class TypeSpec:
    """The type of a composite tensor: its component specs and how to rebuild it."""

    __slots__ = ()

    value_type: type = object

    def _to_components(self) -> list:
        """The components' `TensorSpec`s."""
        raise NotImplementedError

    def _from_components_like(self, components: list):
        raise NotImplementedError

    def is_compatible_with(self, spec_or_value) -> bool:
        raise NotImplementedError

    def most_specific_common_supertype(self, others):
        raise NotImplementedError

    def _trace_static_key(self):
        """As CompositeTensor._trace_static_key; a spec and its values give the same key."""
        return None


def is_composite(x) -> bool:
    """Whether `x` is a composite tensor or the spec of one (both expand into components)."""
    return isinstance(x, (CompositeTensor, TypeSpec))
