"""What makes an operator a composite tensor (TF's `_LinearOperatorSpec` and
`make_composite_tensor`): its components are the tensors (and variables, and
sub-operators) among the parameters named by `_composite_tensor_fields`; everything else
there (sizes, dtypes, flags, the hints) is static, part of its type. `tf.nest` with
`expand_composites=True` and `tf.function` arguments and results go through these.

A class is made composite by `make_composite_tensor` (every tf.linalg class is); a user's
subclass without it is one opaque value (no components, rebuilt as itself), as its
parameters are unknown."""

from __future__ import annotations

import copy

import numpy as np

from ndflow.core.composite_tensor import CompositeTensor, TypeSpec
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.apply import constant_value
from ndflow.ops.linear_operator import util

__all__ = ["CompositeOperator", "LinearOperatorSpec", "make_composite_tensor"]

_HINTS = ("is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square")


def make_composite_tensor(cls):
    """Makes `cls` (a LinearOperator subclass with `_composite_tensor_fields`) a composite
    tensor: its tensors are its components, and it is rebuilt from them (TF's
    `linear_operator.make_composite_tensor`). An operator class without it is an opaque
    value: no components, rebuilt as itself."""
    cls._is_composite = True
    return cls


class CompositeOperator(CompositeTensor):
    """The composite-tensor side of `LinearOperator`."""

    __slots__ = ()

    @property
    def _composite_tensor_fields(self) -> tuple:
        """The parameters that rebuild this operator (tensors among them are components)."""
        return ()

    @property
    def _composite_tensor_prefer_static_fields(self) -> tuple:
        return ()

    def _field(self, key):
        missing = object()
        for value in (getattr(self, key, missing), getattr(self, "_" + key, missing),
                      self._parameters.get(key, missing)):
            if value is not missing:
                break
        else:
            raise ValueError(f"Could not determine an appropriate value for field `{key}` in "
                             f"object  `{self}`.")
        if key in self._composite_tensor_prefer_static_fields and value is not None and \
                isinstance(value, Tensor):
            static = constant_value(value)
            if static is not None:
                value = static
        if isinstance(value, (np.ndarray, np.generic)):
            value = value.tolist()
        return value

    def _split_fields(self):
        """(dynamic fields: tensors, variables and operators; static fields: the rest)."""
        dynamic, static = {}, {}
        for key in tuple(self._composite_tensor_fields) + _HINTS:
            value = self._field(key)
            (dynamic if _is_dynamic(value) else static)[key] = value
        return dynamic, static

    _is_composite = False

    def _to_components(self):
        held = self.__dict__.get("_held_components")
        if held is not None:
            return held
        return self._split_fields()[0] if self._is_composite else {}

    def _from_components_like(self, components):
        if not self._is_composite:
            return self
        if not _all_values(components):
            # Placeholders (a traced function's output slots): a copy of this operator that
            # only holds them, rebuilt around the values later.
            held = copy.copy(self)
            held._held_components = components
            return held
        _, static = self._split_fields()
        return type(self)(**static, **components)

    def _trace_static_key(self):
        if not self._is_composite:
            return (type(self), id(self))
        _, static = self._split_fields()
        return (type(self), tuple(sorted((k, _hashable(v)) for k, v in static.items())))

    def _session_value(self, arrays):
        return self._from_components_like(arrays)

    @property
    def _type_spec(self):
        return LinearOperatorSpec(self)


class LinearOperatorSpec(TypeSpec):
    """The type of an operator: its class, static parameters and component specs."""

    __slots__ = ("value_type", "_key", "_operator")

    def __init__(self, operator):
        self.value_type = type(operator)
        self._key = operator._trace_static_key()
        self._operator = operator

    def _to_components(self):
        return _specs_of(self._operator._to_components())

    def _from_components_like(self, components):
        return self._operator._from_components_like(components)

    def _trace_static_key(self):
        return self._key

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value._type_spec if isinstance(spec_or_value, CompositeOperator) \
            else spec_or_value
        return isinstance(other, LinearOperatorSpec) and other._key == self._key

    def __eq__(self, other):
        return isinstance(other, LinearOperatorSpec) and other._key == self._key and \
            repr(self._to_components()) == repr(other._to_components())

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"{self.value_type.__name__}Spec({self._to_components()!r})"


def _specs_of(value):
    if isinstance(value, dict):
        return {k: _specs_of(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_specs_of(v) for v in value)
    if isinstance(value, CompositeOperator):
        return value._type_spec
    return (value.dtype, value.shape)


def _all_values(value) -> bool:
    if isinstance(value, dict):
        return all(_all_values(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_all_values(v) for v in value)
    if isinstance(value, CompositeOperator):
        return "_held_components" not in value.__dict__
    return isinstance(value, Tensor) or util.is_ref(value)


def _is_dynamic(value) -> bool:
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_dynamic(v) for v in value)
    return isinstance(value, (Tensor, CompositeOperator)) or util.is_ref(value)


def _hashable(value):
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, EagerTensor):
        return _hashable(value.numpy().tolist())
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
