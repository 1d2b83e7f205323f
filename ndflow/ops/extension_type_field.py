"""The fields of a `tf.experimental.ExtensionType`: which annotations a field may have, and
how a value given for it is checked and converted (TensorFlow's rules).

    Annotation                     A value is                       A Spec field is
    tf.Tensor                      converted with convert_to_tensor a TensorSpec
    a CompositeTensor subclass     an instance (RaggedTensor, ...)  its TypeSpec
    tf.TensorShape / tf.DType      converted (as_shape / as_dtype)  the same
    int, float, str, bytes, bool,  an instance, unconverted         the same
      None
    Tuple[X, ...] / Tuple[X, Y]    any sequence -> a tuple          the same, of specs
    Mapping[K, V]                  any mapping -> an ImmutableDict  the same, of specs
    Union[X, Y] / Optional[X]      the first option that converts   the same

A value that fits none is a TypeError naming the field path (`values[0]: expected 'int',
got 'str'`).
"""

from __future__ import annotations

import collections.abc
import enum
import types
import typing

from ndflow.core import dtypes
from ndflow.core.composite_tensor import CompositeTensor, TypeSpec
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import convert_to_tensor

# Names a field may not take (they are the ExtensionType / TypeSpec machinery's own).
RESERVED_FIELD_NAMES = frozenset([
    "self", "Spec", "_type_spec", "_shape_invariant_to_type_spec", "_consumers", "value_type",
    "is_compatible_with", "most_specific_compatible_type", "_with_tensor_ranks_only",
    "_to_components", "_from_components", "_component_specs", "_to_tensor_list",
    "_from_tensor_list", "_from_compatible_tensor_list", "_flat_tensor_specs", "_serialize",
    "_deserialize", "_to_legacy_output_types", "_to_legacy_output_shapes",
    "_to_legacy_output_classes", "_keras_mask"])


class _Sentinel:
    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return self._name


NO_DEFAULT = _Sentinel("ExtensionTypeField.NO_DEFAULT")
_NoneType = type(None)
_SCALARS = (int, float, str, bytes, bool, _NoneType)


def is_reserved_name(name: str) -> bool:
    return name in RESERVED_FIELD_NAMES or name.lower().startswith("_tf_extension_type")


class Context(enum.Enum):
    VALUE = 1    # a field of a value
    SPEC = 2     # a field of a Spec: tensors are given as their specs
    DEFAULT = 3  # a default value (tensor defaults stay as given until construction)


class ExtensionTypeField(typing.NamedTuple):
    """One field: its name, its annotation and its default (NO_DEFAULT when it has none)."""

    name: str
    value_type: object
    default: object = NO_DEFAULT


def make_field(name: str, value_type, default=NO_DEFAULT) -> ExtensionTypeField:
    try:
        validate_annotation(value_type, allow_forward_references=True)
    except TypeError as e:
        raise TypeError(f"In field {name!r}: {e}") from e
    if default is not NO_DEFAULT:
        default = convert_value(default, value_type, (f"default value for {name}",),
                                Context.DEFAULT)
    return ExtensionTypeField(name, value_type, default)


# -- annotations -----------------------------------------------------------------------------

def _origin(t):
    return typing.get_origin(t)


def is_tuple(t) -> bool:
    return _origin(t) is tuple


def is_mapping(t) -> bool:
    return _origin(t) in (collections.abc.Mapping, dict)


def is_union(t) -> bool:
    return _origin(t) is typing.Union or isinstance(t, types.UnionType)


def is_list(t) -> bool:
    return _origin(t) in (list, collections.abc.Sequence)


def type_args(t) -> tuple:
    return typing.get_args(t)


def _subclass(t, base) -> bool:
    return isinstance(t, type) and issubclass(t, base)


def validate_annotation(t, in_mapping_key: bool = False,
                        allow_forward_references: bool = False) -> None:
    """TypeError unless `t` is an annotation an ExtensionType field may have."""
    if isinstance(t, (str, typing.ForwardRef)):
        if allow_forward_references:
            return
        raise TypeError(f"Unresolved forward reference {t!r}")
    if t in _SCALARS or t is None or t is dtypes.DType:
        return
    if t is Tensor or t is TensorShape or _subclass(t, CompositeTensor):
        if in_mapping_key:
            raise TypeError(f"Mapping had a key {t.__name__!r} with type {type(t).__name__!r}")
        return
    if is_tuple(t) or is_union(t):
        args = type_args(t)
        if is_tuple(t) and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        for a in args:
            validate_annotation(a, in_mapping_key, allow_forward_references)
        return
    if is_mapping(t):
        key, value = type_args(t)
        validate_annotation(key, True, allow_forward_references)
        validate_annotation(value, in_mapping_key, allow_forward_references)
        return
    name = t.__name__ if isinstance(t, type) else t
    raise TypeError(f"Unsupported type annotation {name!r}")


# -- values ------------------------------------------------------------------------------------

class ImmutableDict(collections.abc.Mapping):
    """The mapping a `Mapping[K, V]` field holds: read-only, in the given key order."""

    def __init__(self, items=()):
        self._dict = dict(items)

    def __getitem__(self, key):
        return self._dict[key]

    def __iter__(self):
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __repr__(self) -> str:
        return f"ImmutableDict({self._dict!r})"

    def __setitem__(self, key, value):
        raise TypeError("'ImmutableDict' object does not support item assignment")

    def __delitem__(self, key):
        raise TypeError("'ImmutableDict' object does not support item deletion")

    __hash__ = None


def _path(path: tuple) -> str:
    return "".join(path)


def convert_value(value, t, path: tuple, context: Context = Context.VALUE):
    """`value` checked against annotation `t` and converted (module docstring)."""
    if t is None:
        t = _NoneType
    if t is Tensor:
        return _convert_tensor(value, path, context)
    if _subclass(t, CompositeTensor):
        return _convert_composite(value, t, path, context)
    if t is TensorShape:
        try:
            return as_shape(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{_path(path)}: expected 'tf.TensorShape', got "
                            f"{type(value).__name__!r}") from e
    if t is dtypes.DType:
        try:
            return dtypes.as_dtype(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{_path(path)}: expected 'tf.DType', got "
                            f"{type(value).__name__!r}") from e
    if t in _SCALARS:
        if not isinstance(value, t):
            raise TypeError(f"{_path(path)}: expected {t.__name__!r}, got "
                            f"{type(value).__name__!r}")
        return value
    if is_tuple(t):
        return _convert_tuple(value, t, path, context)
    if is_mapping(t):
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"{_path(path)}: expected mapping, got {type(value).__name__!r}")
        key_t, value_t = type_args(t)
        return ImmutableDict(
            (convert_value(k, key_t, path + ("[<key>]",), context),
             convert_value(v, value_t, path + (f"[{k!r}]",), context))
            for k, v in value.items())
    if is_union(t):
        for option in type_args(t):
            try:
                return convert_value(value, option, path, context)
            except TypeError:
                pass
        raise TypeError(f"{_path(path)}: expected {t!r}, got {type(value).__name__!r}")
    raise TypeError(f"{_path(path)}: Unsupported type annotation {t!r}")


def _convert_tensor(value, path: tuple, context: Context):
    if context is Context.SPEC:
        if not isinstance(value, TensorSpec):
            raise TypeError(f"{_path(path)}: expected a TensorSpec, got "
                            f"{type(value).__name__!r}")
        return value
    if isinstance(value, Tensor) or context is Context.DEFAULT:
        return value
    try:
        return convert_to_tensor(value)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{_path(path)}: expected a Tensor, got {type(value).__name__!r}") \
            from e


def _convert_composite(value, t, path: tuple, context: Context):
    if context is Context.SPEC:
        if not (isinstance(value, TypeSpec) and _subclass(value.value_type, t)):
            raise TypeError(f"{_path(path)}: expected a TypeSpec for {t.__name__!r}, got "
                            f"{type(value).__name__!r}")
        return value
    if not isinstance(value, t):
        raise TypeError(f"{_path(path)}: expected {t.__name__!r}, got "
                        f"{type(value).__name__!r}")
    return value


def _convert_tuple(value, t, path: tuple, context: Context) -> tuple:
    if not isinstance(value, collections.abc.Sequence) or isinstance(value, (str, bytes)):
        raise TypeError(f"{_path(path)}: expected tuple, got {type(value).__name__!r}")
    args = type_args(t)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(convert_value(v, args[0], path + (f"[{i}]",), context)
                     for i, v in enumerate(value))
    if len(value) != len(args):
        raise TypeError(f"{_path(path)}: expected tuple with length {len(args)}, got "
                        f"{type(value).__name__!r})")
    return tuple(convert_value(v, a, path + (f"[{i}]",), context)
                 for i, (v, a) in enumerate(zip(value, args)))


def convert_fields(fields, values: dict, context: Context = Context.VALUE) -> None:
    """Checks and converts `values` (field name -> value) in place; ValueError names the
    missing or unexpected fields."""
    names = {f.name for f in fields}
    extra = set(values) - names
    if extra:
        raise ValueError(f"Got unexpected fields: {extra}")
    missing = names - set(values)
    if missing:
        raise ValueError(f"Missing required fields: {missing}")
    for f in fields:
        values[f.name] = convert_value(values[f.name], f.value_type, (f.name,), context)
