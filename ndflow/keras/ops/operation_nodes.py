"""keras.ops calls on KerasTensors as the functional-model nodes Keras 3 itself writes: one
layer class per Keras Operation class (`Sum`, `ExpandDims`, `Matmul`, ... from
keras_op_table.py), configured by the Operation's constructor arguments and called with its
call arguments, serialized with Keras' module (`keras.src.ops.numpy`), class and config. So a
Keras model with keras.ops steps loads in ndflow, and ndflow's loads in Keras.

Fourteen Keras Operation names are also ndflow layer names (Add, Concatenate, Reshape, ...),
and ndflow's loader finds layers by class name alone. Their node classes are made too (with
Keras' module, so they do not take the layers' names) and offered to the loader through
`base_layer.KERAS_OPERATIONS` (a class-name table for configs whose module is
keras.src.ops.*); only when the loader has that table are they used, otherwise those ops
(and calls whose constant arguments are not JSON) keep ndflow's own KerasOpLayer node."""

from __future__ import annotations

import inspect
import json

import numpy as np

from ndflow.core import dtypes
from ndflow.core.tensor import Tensor
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers import base_layer
from ndflow.keras.layers.base_layer import _BUILTIN_LAYERS, Layer, unique_name
from ndflow.keras.ops import symbolic
from ndflow.keras.ops.keras_op_table import TABLE

# Keras' op classes whose names ndflow's layers (or its saving module) already use.
_TAKEN = {"Add", "Any", "Average", "Concatenate", "ConvertToTensor", "Dot", "LogicalOr",
          "Maximum", "Minimum", "Multiply", "NotEqual", "Reshape", "Softmax", "Subtract"}


class KerasOperationNode(Layer):
    """Base of the generated node classes: `function` called with the constructor arguments
    (the config) and the node's call arguments."""

    _allow_non_tensor_positional_args = True   # Keras Operations: constants too

    function = ""
    init_args: tuple = ()
    call_args: tuple = ()

    def __init__(self, name=None, **config):
        unknown = set(config) - set(self.init_args)
        if unknown:
            raise ValueError(f"Unrecognized keyword arguments passed to "
                             f"{type(self).__name__}: {sorted(unknown)}")
        super().__init__(name=name or unique_name(self.function), autocast=False)
        self.op_config = config
        self.supports_masking = True   # (masks are dropped: compute_mask)

    @property
    def _keras_module(self):
        return f"keras.src.ops.{self._keras_ops_module}"

    @property
    def _keras_registered_name(self):
        return type(self).__name__

    def call(self, *args, **kwargs):
        names = [a for a in self.call_args if not a.startswith("*")]
        values = dict(zip(names, args))
        rest = list(args[len(names):])
        values.update(self.op_config)
        values.update(kwargs)
        fn = symbolic.OPS[self.function]
        positional, keywords = [], {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                positional.extend(rest)
            elif p.kind == p.VAR_KEYWORD:
                keywords.update({k: v for k, v in values.items()
                                 if k not in inspect.signature(fn).parameters})
            elif p.name in values:
                if p.kind == p.KEYWORD_ONLY:
                    keywords[p.name] = values[p.name]
                else:
                    positional.append(values[p.name])
        out = fn(*positional, **keywords)
        # a tuple subclass (top_k's result) as a plain tuple: what the model's nests rebuild
        return tuple(out) if isinstance(out, tuple) and type(out) is not tuple else out

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {"name": self.name, **self.op_config}


def _json_value(value):
    """A constant as Keras' config holds it, or raise TypeError when it has no JSON form."""
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, (np.ndarray, Tensor)) or callable(value):
        raise TypeError("not a JSON constant")
    json.dumps(value)
    return value


def _has_constant_arrays(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_has_constant_arrays(v) for v in value)
    if isinstance(value, dict):
        return any(_has_constant_arrays(v) for v in value.values())
    return isinstance(value, (np.ndarray, Tensor)) and not isinstance(value, KerasTensor)


NODE_CLASSES: dict = {}          # function -> node class used for its symbolic calls
OPERATION_CLASSES: dict = {}     # Keras class name -> node class (every one)


def _declare(function, row, taken):
    module, class_name, init_args, call_args = row
    # a taken name: Keras' module, so the class is not registered under the layer's name
    cls = type(class_name, (KerasOperationNode,), {
        "__module__": f"keras.src.ops.{module}" if taken else __name__,
        "__doc__": f"keras.ops.{function} as Keras' {class_name} node.",
        "function": function, "init_args": init_args, "call_args": call_args,
        "_keras_ops_module": module})
    OPERATION_CLASSES.setdefault(class_name, cls)
    return cls


_MODULE_AWARE_LOADER = isinstance(getattr(base_layer, "KERAS_OPERATIONS", None), dict)
for _function, _row in TABLE.items():
    _taken = _row[1] in _TAKEN or _row[1] in _BUILTIN_LAYERS
    _cls = _declare(_function, _row, _taken)
    if not _taken or _MODULE_AWARE_LOADER:
        NODE_CLASSES[_function] = _cls
if _MODULE_AWARE_LOADER:
    base_layer.KERAS_OPERATIONS.update(OPERATION_CLASSES)


def make_node(function, args, kwargs):
    """The Keras-named node layer for `function(*args, **kwargs)` and the arguments to call it
    with, or None where the call has no Keras form (ndflow's own node then)."""
    cls = NODE_CLASSES.get(function)
    if cls is None or function not in symbolic.OPS:
        return None
    sig = inspect.signature(symbolic.OPS[function])
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    values = dict(bound.arguments)
    extra = {}
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            extra = values.pop(p.name, {})
    try:
        config = {k: _json_value(values.pop(k)) for k in cls.init_args if k in values}
    except TypeError:
        return None
    call = []
    for name in cls.call_args:
        key = name.lstrip("*")
        if name.startswith("*"):
            call.extend(values.pop(key, ()))
        elif key in values:
            call.append(values.pop(key))
    if values or _has_constant_arrays(call):
        return None   # arguments Keras' class does not take, or constants without JSON
    return cls(**config), call, extra
