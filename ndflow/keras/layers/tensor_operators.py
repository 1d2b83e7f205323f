"""Python operators on a functional model's KerasTensors (`inputs / 255.0`, `x + shortcut`,
`x[:, -1]`, `-x`, `a @ b`, comparisons): as in Keras 3, each becomes a step of the model's
graph — here one `TensorOperator` layer per use, holding the operator's name and its constant
operand (a number, list or index), so the model replays, saves and loads it."""

from __future__ import annotations

import operator

import numpy as np

from ndflow.keras import keras_tensor
from ndflow.keras.layers.base_layer import Layer
from ndflow.ops.apply import convert_to_tensor

_BINARY = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
           "true_divide": operator.truediv, "floor_divide": operator.floordiv,
           "mod": operator.mod, "power": operator.pow, "matmul": operator.matmul,
           "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
           "greater_equal": operator.ge, "logical_and": operator.and_,
           "logical_or": operator.or_, "logical_xor": operator.xor}
_UNARY = {"negative": operator.neg, "absolute": operator.abs, "logical_not": operator.invert}


def _encode_key(key):
    """An index (ints, slices, None, Ellipsis, tuples of them) as JSON-friendly data."""
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(k) for k in key]}
    if isinstance(key, slice):
        return {"slice": [key.start, key.stop, key.step]}
    if key is Ellipsis:
        return {"ellipsis": True}
    if isinstance(key, (np.integer,)):
        return int(key)
    return key


def _decode_key(data):
    if isinstance(data, dict):
        if "tuple" in data:
            return tuple(_decode_key(k) for k in data["tuple"])
        if "slice" in data:
            return slice(*data["slice"])
        if data.get("ellipsis"):
            return Ellipsis
    return data


class TensorOperator(Layer):
    """`op` applied to the inputs: one KerasTensor with the constant `other` (on the left
    when `reverse`), two KerasTensors, or an index (`op="getitem"`)."""

    _allow_non_tensor_positional_args = True   # Keras Operations: constants too

    def __init__(self, op, other=None, reverse=False, **kwargs):
        if op not in _BINARY and op not in _UNARY and op != "getitem":
            raise ValueError(f"Unknown tensor operator: {op}")
        super().__init__(**kwargs)
        self.op, self.other, self.reverse = op, other, reverse

    def call(self, inputs):
        if self.op == "getitem":
            return convert_to_tensor(inputs)[_decode_key(self.other)]
        if self.op in _UNARY:
            return _UNARY[self.op](convert_to_tensor(inputs))
        fn = _BINARY[self.op]
        if isinstance(inputs, (list, tuple)):
            return fn(convert_to_tensor(inputs[0]), convert_to_tensor(inputs[1]))
        x = convert_to_tensor(inputs)
        other = convert_to_tensor(np.asarray(self.other), dtype_hint=x.dtype) \
            if isinstance(self.other, (list, np.ndarray)) else self.other
        return fn(other, x) if self.reverse else fn(x, other)

    def get_config(self):
        other = self.other.tolist() if isinstance(self.other, np.ndarray) else self.other
        return {**super().get_config(), "op": self.op, "other": other,
                "reverse": self.reverse}


def apply_operator(op: str, x, other=None, reverse: bool = False):
    """`op` on KerasTensor `x` (and `other`): a TensorOperator layer's output."""
    if op == "getitem":
        return TensorOperator("getitem", _encode_key(other), name=None)(x)
    if op in _UNARY:
        return TensorOperator(op)(x)
    if isinstance(other, keras_tensor.KerasTensor):
        pair = [other, x] if reverse else [x, other]
        return TensorOperator(op)(pair)
    if isinstance(other, np.ndarray):
        other = other.tolist()
    return TensorOperator(op, other, reverse)(x)


keras_tensor.register_operators(apply_operator, list(_BINARY), list(_UNARY))
