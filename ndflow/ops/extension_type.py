"""`tf.experimental.ExtensionType`: user-defined immutable classes of typed fields that
TensorFlow treats as values — `tf.function` arguments and results, `tf.nest` structures
(with `expand_composites=True`), `tf.cond` / `tf.while_loop` values.

    class MaskedTensor(tf.experimental.ExtensionType):
        values: tf.Tensor
        mask: tf.Tensor

        def __validate__(self):
            self.values.shape.assert_is_compatible_with(self.mask.shape)

Defining a subclass (the metaclass below) reads its annotated fields (extension_type_field.py
says what each annotation accepts), gives it a constructor (or wraps the user's, which may set
the fields), and a nested `Spec` class, its TypeSpec: the same fields with tensors replaced by
their `TensorSpec`s and composites by their specs. Values are immutable outside a
constructor; `==` compares every component tensor (a scalar bool tensor), as TensorFlow.

Inside ndflow an ExtensionType is a composite tensor (core/composite_tensor.py): its
components are its tensor fields, in field order, nested composites expanded; the Python
fields are static and belong to the spec (so `tf.function` traces anew when they change).
"""

from __future__ import annotations

import collections.abc
import inspect
import typing

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor, TypeSpec
from ndflow.core.nest import flatten
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops import array_core, comparison, reduction
from ndflow.ops.apply import apply_op
from ndflow.ops.extension_type_field import (
    NO_DEFAULT,
    Context,
    ImmutableDict,
    convert_fields,
    is_reserved_name,
    make_field,
)

_IN_CONSTRUCTOR = "_tf_extension_type_in_constructor"
_MUTABLE = ("_keras_mask",)
_SPEC_CACHE = "_tf_extension_type_cached_type_spec"


def _new(cls, fields: dict):
    """An instance of `cls` with these fields, bypassing its constructor (as TF rebuilds
    values from components: a user's `__init__` may take other arguments)."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


# -- walking a field's nested tuples and mappings --------------------------------------------

def _leaves(value) -> list:
    """The leaves of a field value, tuples in order and mappings by sorted key (tf.nest)."""
    if isinstance(value, tuple):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, collections.abc.Mapping):
        return [x for k in sorted(value) for x in _leaves(value[k])]
    return [value]


def _rebuild(value, it):
    """`value` with each leaf replaced by `it`'s next item."""
    if isinstance(value, tuple):
        return tuple(_rebuild(v, it) for v in value)
    if isinstance(value, collections.abc.Mapping):
        new = {k: _rebuild(value[k], it) for k in sorted(value)}
        return ImmutableDict((k, new[k]) for k in value)
    return next(it)


def _map(fn, value):
    return _rebuild(value, iter([fn(x) for x in _leaves(value)]))


_STATIC = (int, float, str, bytes, bool, type(None), TensorShape, dtypes.DType)


def _is_component(x) -> bool:
    """Whether a field leaf is a component (a tensor, composite or spec, or what stands for
    one while a function is traced) rather than a static Python value."""
    return not isinstance(x, _STATIC)


def _hashable(value):
    """A hashable form of a (spec) field value: mappings as sorted item tuples."""
    if isinstance(value, tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, collections.abc.Mapping):
        return ("mapping", tuple((k, _hashable(value[k])) for k in sorted(value)))
    return value


def _components(obj) -> list:
    """The component leaves of an ExtensionType's (or Spec's) fields, in field order."""
    return [x for v in obj._field_values() for x in _leaves(v) if _is_component(x)]


def _rebuild_fields(obj, components) -> dict:
    """The fields of ExtensionType (or Spec) `obj` with its components replaced, in order,
    by `components` (static fields kept)."""
    it = iter(components)
    fields = {}
    for f in obj._tf_extension_type_fields():
        value = obj.__dict__[f.name]
        fields[f.name] = _rebuild(value, iter([next(it) if _is_component(x) else x
                                               for x in _leaves(value)]))
    if next(it, None) is not None:
        raise ValueError("Cannot build an ExtensionType instance from components because "
                         "more components are provided than the number expected by the "
                         "type spec.")
    return fields


def _plain_mappings(value):
    """A spec field as TF prints it: its mappings as dicts."""
    if isinstance(value, tuple):
        return tuple(_plain_mappings(v) for v in value)
    if isinstance(value, collections.abc.Mapping):
        return {k: _plain_mappings(v) for k, v in value.items()}
    return value


def _spec_of(x):
    if isinstance(x, Tensor):
        return TensorSpec(x.shape, x.dtype)
    if isinstance(x, CompositeTensor):
        return x._type_spec
    return x


# -- the metaclass ---------------------------------------------------------------------------

class ExtensionTypeMetaclass(type):
    """Turns each user subclass of ExtensionType into a typed value class (module doc)."""

    def __init__(cls, name, bases, namespace):
        if not namespace.get("_tf_extension_type_do_not_transform_this_class", False):
            _check_field_annotations(cls)
            if "__init__" in namespace:
                _wrap_user_constructor(cls)
            else:
                _build_constructor(cls)
            _add_type_spec(cls)
        super().__init__(name, bases, namespace)


def _check_field_annotations(cls) -> None:
    annotations = cls.__dict__.get("__annotations__", {})
    for name, value in cls.__dict__.items():
        if name == "Spec":
            if not isinstance(value, type):
                raise ValueError(f"{cls.__qualname__}.Spec must be a nested class; got "
                                 f"{value}.")
            if len(value.__mro__) > 2:
                raise ValueError(f"{cls.__qualname__}.Spec may not have base classes.")
        elif is_reserved_name(name):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field "
                             f"'{name}' is reserved.")
    for name in annotations:
        if is_reserved_name(name):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field "
                             f"'{name}' is reserved.")
    for key, value in cls.__dict__.items():
        if not (key in annotations or callable(value) or key.startswith("_abc_")
                or (key.startswith("__") and key.endswith("__"))
                or isinstance(value, (property, classmethod, staticmethod))):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field "
                             f"{key} is missing a type annotation.")


def _fields_signature(cls) -> inspect.Signature:
    """The generated constructor's signature: fields in order; from the first field without
    a default that follows one with a default, keyword-only (as TF)."""
    fields = cls._tf_extension_type_fields()
    keyword_only_from, got_default = len(fields), False
    for i, f in enumerate(fields):
        if got_default and f.default is NO_DEFAULT:
            keyword_only_from = i
            break
        got_default = got_default or f.default is not NO_DEFAULT
    return inspect.Signature([
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY if i >= keyword_only_from
                          else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=f.value_type,
                          default=inspect.Parameter.empty if f.default is NO_DEFAULT
                          else f.default)
        for i, f in enumerate(fields)])


def _build_constructor(cls) -> None:
    signature = _fields_signature(cls)   # validates the annotations when the class is made

    def __init__(self, *args, **kwargs):  # noqa: N807
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        self.__dict__.update(bound.arguments)
        self._tf_extension_type_convert_fields()
        self.__validate__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = __init__


def _wrap_user_constructor(cls) -> None:
    user_init = cls.__init__

    def __init__(self, *args, **kwargs):  # noqa: N807
        self.__dict__[_IN_CONSTRUCTOR] = True
        try:
            user_init(self, *args, **kwargs)
        finally:
            del self.__dict__[_IN_CONSTRUCTOR]
        self._tf_extension_type_convert_fields()
        self.__validate__()

    __init__.__wrapped__ = user_init
    __init__.__doc__ = user_init.__doc__
    __init__.__qualname__ = user_init.__qualname__
    cls.__init__ = __init__


def _add_type_spec(cls) -> None:
    """The nested `cls.Spec` class, with the user's `Spec` body (methods, properties) in it."""
    qualname = f"{cls.__qualname__}.Spec"
    body = {"value_type": cls, "__module__": cls.__module__}
    user_spec = cls.__dict__.get("Spec")
    if user_spec is not None:
        for name, value in user_spec.__dict__.items():
            if is_reserved_name(name):
                raise ValueError(f"TypeSpec {qualname} uses reserved name '{name}'.")
            if cls._tf_extension_type_has_field(name):
                raise ValueError(f"TypeSpec {qualname} defines a variable '{name}' which "
                                 f"shadows a field in {cls.__qualname__}")
            if name not in ("__module__", "__dict__", "__weakref__"):
                body[name] = value
    base = getattr(cls, "_tf_extension_type_spec_base", ExtensionTypeSpec)  # batchable
    spec = type(f"{cls.__name__}.Spec", (base,), body)
    spec.__qualname__ = qualname
    if "__init__" not in spec.__dict__:
        def __init__(self, *args, **kwargs):  # noqa: N807
            params = [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                      for f in self._tf_extension_type_fields()]
            bound = inspect.Signature(params).bind(*args, **kwargs)
            self.__dict__.update(bound.arguments)
            self._tf_extension_type_convert_fields()
            self.__validate__()
        spec.__init__ = __init__
    else:
        _wrap_user_constructor(spec)
    cls.Spec = spec


# -- the value class ---------------------------------------------------------------------------

@tf_export("experimental.ExtensionType")
class ExtensionType(CompositeTensor, metaclass=ExtensionTypeMetaclass):
    """Base class of user-defined composite values with typed, immutable fields."""

    _tf_extension_type_do_not_transform_this_class = True

    def __init__(self, *args, **kwargs):
        if type(self) is ExtensionType:
            raise AssertionError("Cannot create an instance of ExtensionType because "
                                 "ExtensionType is an abstract base class.")

    @classmethod
    def _tf_extension_type_fields(cls) -> tuple:
        """The fields, in annotation order (base classes first); cached once every forward
        reference resolves."""
        cached = cls.__dict__.get("_tf_extension_type_cached_fields")
        if cached is not None:
            return cached
        try:
            hints = typing.get_type_hints(cls)
            cache = True
        except (NameError, AttributeError):   # a forward reference not defined yet
            hints = {}
            for base in reversed(cls.__mro__):
                hints.update(base.__dict__.get("__annotations__", {}))
            cache = False
        fields = tuple(make_field(name, t, getattr(cls, name, NO_DEFAULT))
                       for name, t in hints.items())
        if cache:
            type.__setattr__(cls, "_tf_extension_type_cached_fields", fields)
        return fields

    @classmethod
    def _tf_extension_type_has_field(cls, name: str) -> bool:
        return any(f.name == name for f in cls._tf_extension_type_fields())

    def _tf_extension_type_convert_fields(self) -> None:
        convert_fields(self._tf_extension_type_fields(), self.__dict__)

    def __validate__(self):
        """Checks run after construction (override)."""

    def _field_values(self) -> list:
        return [self.__dict__[f.name] for f in self._tf_extension_type_fields()]

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={self.__dict__[f.name]!r}"
                           for f in self._tf_extension_type_fields())
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name, value):
        if name in _MUTABLE or (_IN_CONSTRUCTOR in self.__dict__
                                and self._tf_extension_type_has_field(name)):
            self.__dict__[name] = value
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom "
                                 f"constructor of ExtensionType.")

    def __delattr__(self, name):
        if name in _MUTABLE or (_IN_CONSTRUCTOR in self.__dict__
                                and self._tf_extension_type_has_field(name)):
            del self.__dict__[name]
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom "
                                 f"constructor of ExtensionType.")

    def __eq__(self, other):
        """A scalar bool tensor: same type and spec, and every component tensor of the same
        shape and values (shapes that merely broadcast are not equal)."""
        if type(self) is not type(other) or self._type_spec != other._type_spec:
            return False
        mine, theirs = flatten(self._to_components()), flatten(other._to_components())
        if len(mine) != len(theirs):
            return False
        conditions = []
        for a, b in zip(mine, theirs):
            for x, y in ((array_core.shape(a), array_core.shape(b)), (a, b)):
                same = apply_op(comparison.Equal, [x, y],
                                attrs={"incompatible_shape_error": False}).outputs[0]
                conditions.append(reduction.reduce_all(same))
        return reduction.reduce_all(array_core.stack(conditions))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return comparison.logical_not(eq) if isinstance(eq, Tensor) else not eq

    __hash__ = None

    # -- composite protocol --------------------------------------------------------------------
    @property
    def _type_spec(self) -> ExtensionTypeSpec:
        spec = self.__dict__.get(_SPEC_CACHE)
        if spec is None:
            spec = self.__dict__[_SPEC_CACHE] = self.Spec.from_value(self)
        return spec

    def _to_components(self) -> list:
        return _components(self)

    def _from_components_like(self, components: list):
        fields = _rebuild_fields(self, components)
        if components and all(isinstance(c, (TensorSpec, TypeSpec)) for c in components):
            return _new(self.Spec, fields)
        return _new(type(self), fields)

    def _session_value(self, arrays: list):
        return _new(type(self), _rebuild_fields(self, arrays))

    def _trace_static_key(self):
        return self._type_spec._trace_static_key()


# -- the spec class ----------------------------------------------------------------------------

@tf_export("experimental.ExtensionTypeSpec")
class ExtensionTypeSpec(TypeSpec):
    """Base class of the `Spec` classes of ExtensionTypes: the same fields, with tensors
    given by their specs."""

    value_type = ExtensionType

    @classmethod
    def from_value(cls, value) -> ExtensionTypeSpec:
        cached = value.__dict__.get(_SPEC_CACHE)
        if cached is not None:
            return cached
        fields = {f.name: _map(_spec_of, value.__dict__[f.name])
                  for f in value._tf_extension_type_fields()}
        return _new(cls, fields)

    @classmethod
    def _tf_extension_type_fields(cls) -> tuple:
        return cls.value_type._tf_extension_type_fields()

    @classmethod
    def _tf_extension_type_has_field(cls, name: str) -> bool:
        return any(f.name == name for f in cls._tf_extension_type_fields())

    def _tf_extension_type_convert_fields(self) -> None:
        convert_fields(self._tf_extension_type_fields(), self.__dict__, Context.SPEC)

    def __validate__(self):
        """Checks run after construction (override in a nested `Spec` class)."""

    def _field_values(self) -> list:
        return [self.__dict__[f.name] for f in self._tf_extension_type_fields()]

    def __setattr__(self, name, value):
        if _IN_CONSTRUCTOR in self.__dict__ and self._tf_extension_type_has_field(name):
            self.__dict__[name] = value
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom "
                                 f"constructor of ExtensionTypeSpec.")

    def __delattr__(self, name):
        raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom "
                             f"constructor of ExtensionTypeSpec.")

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={_plain_mappings(self.__dict__[f.name])!r}"
                           for f in self._tf_extension_type_fields())
        return f"{type(self).__qualname__}({fields})"

    def _key(self) -> tuple:
        return (self.value_type, tuple(_hashable(v) for v in self._field_values()))

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _trace_static_key(self):
        """What a trace is keyed on besides the component specs: the type and the static
        (non-tensor) fields."""
        return (self.value_type, tuple(_hashable(_map(lambda x: None if _is_component(x) else x,
                                                      v)) for v in self._field_values()))

    # -- composite protocol --------------------------------------------------------------------
    def _to_components(self) -> list:
        return _components(self)

    def _from_components_like(self, components: list):
        fields = _rebuild_fields(self, components)
        if components and all(isinstance(c, (TensorSpec, TypeSpec)) for c in components):
            return _new(type(self), fields)
        return _new(self.value_type, fields)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value._type_spec if isinstance(spec_or_value, ExtensionType) else \
            spec_or_value
        if type(other) is not type(self):
            return False
        if self._trace_static_key() != other._trace_static_key():
            return False
        return all(a.is_compatible_with(b)
                   for a, b in zip(self._to_components(), other._to_components()))

    def most_specific_common_supertype(self, others):
        parts = [self._to_components()]
        for o in others:
            if type(o) is not type(self) or o._trace_static_key() != self._trace_static_key():
                return None
            parts.append(o._to_components())
        merged = []
        for column in zip(*parts):
            m = column[0].most_specific_common_supertype(list(column[1:]))
            if m is None:
                return None
            merged.append(m)
        return _new(type(self), _rebuild_fields(self, merged))
