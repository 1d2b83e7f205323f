"""`OnnxBuilder`: the ONNX graph being written while an ndflow graph is walked, and the
table of op converters (TensorFlow op type -> a function emitting ONNX nodes).

A converter is `fn(b: OnnxBuilder, op: Operation, inputs: list[str]) -> list[str]`: it gets
the ONNX value names of the op's inputs and returns one ONNX value name per op output
(None for an output it cannot produce; reading one is an error). Constant inputs (Const ops
and frozen variables) are available as NumPy arrays through `b.constant(op.inputs[i])`, so
attributes TF passes as tensors (axes, perms, shapes, paddings) become ONNX attributes or
initializers.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import errors
from ndflow.inference.onnx_export import backend

CONVERTERS: dict = {}


def converter(*op_types: str):
    """Registers a converter for the given TensorFlow op types."""
    def register(fn):
        for t in op_types:
            CONVERTERS[t] = fn
        return fn
    return register


class UnsupportedOpError(errors.UnimplementedError):
    """An op the ONNX exporter has no conversion for (or not with these attributes)."""

    def __init__(self, op, reason: str = ""):
        detail = f": {reason}" if reason else " (no ONNX conversion for this op type)"
        super().__init__(None, op, f"ONNX export: op '{op.name}' of type '{op.type}' is not "
                                   f"supported{detail}")


def onnx_dtype(dtype) -> int:
    """The ONNX TensorProto element type of an ndflow DType."""
    helper = backend.onnx_helper()
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype.as_numpy_dtype))


class OnnxBuilder:
    """Nodes and initializers of the ONNX graph under construction."""

    def __init__(self, opset: int, constants: dict):
        self.opset = opset
        self.helper = backend.onnx_helper()
        self.nodes: list = []
        self.initializers: list = []
        self._constants = constants          # tf tensor name -> np.ndarray (frozen values)
        self._used: set = set()

    # -- names ---------------------------------------------------------------------------------
    def unique(self, base: str) -> str:
        base = base.replace(":", "_")
        name, i = base, 0
        while name in self._used:
            i += 1
            name = f"{base}_{i}"
        self._used.add(name)
        return name

    # -- values --------------------------------------------------------------------------------
    def constant(self, tensor) -> np.ndarray | None:
        """The value of `tensor` when it is known at export time (Const, frozen variable)."""
        value = self._constants.get(tensor.name)
        if value is not None:
            return value
        op = tensor.op
        if op.type == "Const":
            return np.asarray(op.attrs["value"])
        if op.type in ("Identity", "StopGradient") and op.inputs:
            return self.constant(op.inputs[0])
        return None

    def require_constant(self, op, index: int, what: str) -> np.ndarray:
        value = self.constant(op.inputs[index])
        if value is None:
            raise UnsupportedOpError(op, f"its {what} (input {index}) must be a constant")
        return value

    def initializer(self, array, base: str = "const") -> str:
        """Adds `array` as an initializer; returns its name."""
        name = self.unique(base)
        arr = np.array(array, order="C")  # (ascontiguousarray would make a scalar 1-d)
        self.initializers.append(backend.onnx().numpy_helper.from_array(arr, name))
        return name

    def int64s(self, values, base: str = "ints") -> str:
        return self.initializer(np.asarray(values, dtype=np.int64).reshape(-1), base)

    def node(self, op_type: str, inputs: list, base: str, n_out: int = 1, **attrs) -> list:
        """Adds an ONNX node; returns its output names."""
        outs = [self.unique(base if n_out == 1 else f"{base}_{i}") for i in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs,
                                                name=self.unique(f"node/{base}"), **attrs))
        return outs

    def one(self, op_type: str, inputs: list, base: str, **attrs) -> str:
        return self.node(op_type, inputs, base, 1, **attrs)[0]

    # -- layouts -------------------------------------------------------------------------------
    def to_nchw(self, x: str, base: str, rank: int = 4) -> str:
        perm = [0, rank - 1] + list(range(1, rank - 1))
        return self.one("Transpose", [x], f"{base}/to_nchw", perm=perm)

    def to_nhwc(self, x: str, base: str, rank: int = 4) -> str:
        perm = [0] + list(range(2, rank)) + [1]
        return self.one("Transpose", [x], f"{base}/to_nhwc", perm=perm)
