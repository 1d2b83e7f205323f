"""`tf.type_spec_from_value`: the TypeSpec of a tensor, composite tensor or array-like.

Declared public by ops/type_specs_extra.py, which registers the converters of the values that
are no composite tensors (so the public name loads them with it)."""

from __future__ import annotations

import numpy as np

from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.tensor import Tensor
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.apply import convert_to_tensor

# (type, converter, allow_subclass): the specs of values that are no composite tensors in
# ndflow (an IndexedSlices, a TensorArray, None: ops/type_specs_extra.py), as TF registers them.
_CONVERTERS: list = []


def register_type_spec_from_value_converter(type_object, converter_fn,
                                            allow_subclass: bool = False) -> None:
    """TF's registration: `type_spec_from_value` gives `converter_fn(value)` for values of
    `type_object` (or of a subclass, with `allow_subclass`)."""
    _CONVERTERS.append((type_object, converter_fn, allow_subclass))


def type_spec_from_value(value):
    """A `TensorSpec` for a tensor (or a value convertible to one), the value's own spec for
    a composite tensor (RaggedTensor, SparseTensor, ExtensionType), the registered spec for
    an IndexedSlices, a TensorArray or None."""
    for type_object, converter, allow_subclass in reversed(_CONVERTERS):
        if type(value) is type_object or (allow_subclass and isinstance(value, type_object)):
            return converter(value)
    if isinstance(value, CompositeTensor):
        return value._type_spec
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    try:
        t = convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        kind = type(value).__name__ if not isinstance(value, np.generic) else "numpy scalar"
        raise TypeError(f"Could not build a TypeSpec for {value!r} with type {kind}") from e
    return TensorSpec(t.shape, t.dtype)
