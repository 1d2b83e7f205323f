"""A `keras.ops` call on a functional model's KerasTensors as a step of the model: one
`KerasOpLayer` per call, holding the op's name and its non-tensor arguments (the KerasTensor
positions marked), so the model replays the op on real tensors, and saves and loads it
(its config is JSON: numbers, strings, lists, dtypes by name)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.tensor import Tensor
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers.base_layer import Layer, unique_name
from ndflow.keras.ops import operation_nodes, symbolic

_SLOT = "__keras_tensor__"


def _encode(value, tensors: list):
    """`value` with each KerasTensor replaced by {_SLOT: its index in `tensors`}."""
    if isinstance(value, KerasTensor):
        tensors.append(value)
        return {_SLOT: len(tensors) - 1}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v, tensors) for k, v in value.items()}
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, Tensor) and hasattr(value, "numpy"):   # an eager constant
        value = value.numpy()
    if isinstance(value, np.ndarray):
        return {"__array__": value.tolist(), "dtype": value.dtype.name}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode(value, tensors):
    if isinstance(value, dict):
        if _SLOT in value:
            return tensors[value[_SLOT]]
        if "__tuple__" in value:
            return tuple(_decode(v, tensors) for v in value["__tuple__"])
        if "__array__" in value:
            return np.asarray(value["__array__"], dtype=value["dtype"])
        return {k: _decode(v, tensors) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    return value


class KerasOpLayer(Layer):
    """`keras.ops.<function>(*args, **kwargs)` with the model's tensors in the marked slots."""

    _allow_non_tensor_positional_args = True   # Keras Operations: constants too

    def __init__(self, function, arguments, **kwargs):
        if function not in symbolic.OPS:
            raise ValueError(f"Unknown keras.ops function: {function}")
        kwargs.setdefault("name", unique_name(function))
        super().__init__(autocast=False, **kwargs)
        self.function, self.arguments = function, arguments
        self.supports_masking = True   # (the mask is dropped: compute_mask)

    def call(self, inputs):
        tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        args = _decode(self.arguments["args"], tensors)
        kwargs = _decode(self.arguments["kwargs"], tensors)
        out = symbolic.OPS[self.function](*args, **kwargs)
        # a tuple subclass (top_k's result) as a plain tuple: what the model's nests rebuild
        return tuple(out) if isinstance(out, tuple) and type(out) is not tuple else out

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "function": self.function,
                "arguments": self.arguments}


def apply_symbolic(function: str, args, kwargs):
    node = operation_nodes.make_node(function, args, kwargs)
    if node is not None:   # the node Keras itself writes for this op
        layer, call_args, call_kwargs = node
        return layer(*call_args, **call_kwargs)
    tensors: list = []
    arguments = {"args": _encode(list(args), tensors), "kwargs": _encode(dict(kwargs), tensors)}
    layer = KerasOpLayer(function, arguments)
    return layer(tensors)


symbolic.register_symbolic(apply_symbolic)
