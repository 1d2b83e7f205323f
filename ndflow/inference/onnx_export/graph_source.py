"""What the exporters read: a traced function graph, its inputs and outputs, and the
values of the variables it reads, frozen at export time.

`concrete_function_of` accepts what `ndflow.onnx.export` and the inference converter take:
a ConcreteFunction, a `tf.function` (traced with `input_signature`), a loaded SavedModel's
signature (`tf.saved_model.load(path).signatures[key]`), or a Keras model
(duck-typed: an object with `inputs` and `__call__`; it is traced with `training=False`, so
Dropout and BatchNormalization run their inference branches).
"""

from __future__ import annotations

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.core.tensor_spec import TensorSpec
from ndflow.runtime.concrete_function import ConcreteFunction
from ndflow.runtime.function import Function, function


def _keras_signature(model) -> list:
    """The model's inputs as specs, named as the user named the Input layers; an automatic
    name (keras_tensor_<n>) becomes "inputs" (inputs_<i> for several), as in the serving
    signature TensorFlow saves for a Keras model."""
    specs = []
    many = len(model.inputs) > 1
    for i, t in enumerate(model.inputs):
        name = getattr(t, "name", None) or ""
        if not name or name.startswith("keras_tensor"):
            name = f"inputs_{i}" if many else "inputs"
        specs.append(TensorSpec(tuple(t.shape), dtypes.as_dtype(t.dtype), name=name))
    return specs


def concrete_function_of(fn_or_model, input_signature=None) -> ConcreteFunction:
    """The ConcreteFunction to export for a ConcreteFunction, tf.function or Keras model."""
    if isinstance(fn_or_model, ConcreteFunction):
        return fn_or_model
    restored = getattr(fn_or_model, "concrete", fn_or_model)
    if callable(getattr(restored, "traced", None)):
        # a loaded SavedModel's signature (`loaded.signatures[key]`) or saved function: TF's
        # signatures are ConcreteFunctions, which tf2onnx exports
        return restored.traced()
    if isinstance(fn_or_model, Function):
        if input_signature is not None:
            return fn_or_model.get_concrete_function(*input_signature)
        return fn_or_model.get_concrete_function()
    if getattr(fn_or_model, "inputs", None) is not None and callable(fn_or_model):
        model = fn_or_model
        signature = list(input_signature) if input_signature else _keras_signature(model)
        call = function(lambda *xs: model(xs[0] if len(xs) == 1 else list(xs), training=False),
                        input_signature=signature)
        return call.get_concrete_function()
    if input_signature is not None and callable(fn_or_model):
        return function(fn_or_model, input_signature=list(input_signature)) \
            .get_concrete_function()
    raise TypeError("Expected a ConcreteFunction, a tf.function, a SavedModel signature or "
                    "a Keras model (or a Python function with input_signature), got "
                    f"{type(fn_or_model).__name__}")


def _as_numpy(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def frozen_variable_values(cf: ConcreteFunction) -> dict:
    """Tensor name -> value for every ReadVariableOp output reading a captured variable."""
    resources = {}
    for value, placeholder in cf.graph.captures:
        handle = value.numpy() if hasattr(value, "numpy") else None
        if getattr(handle, "value", None) is not None and hasattr(handle, "shape"):
            resources[placeholder.name] = _as_numpy(handle.value)
    frozen = {}
    for op in cf.graph.get_operations():
        if op.type == "ReadVariableOp" and op.inputs[0].name in resources:
            frozen[op.outputs[0].name] = resources[op.inputs[0].name]
    return frozen


def function_inputs(cf: ConcreteFunction) -> list:
    """The function's argument placeholders (its captured inputs excluded)."""
    captured = {id(p) for _, p in cf.graph.captures}
    return [t for t in cf.graph.inputs if id(t) not in captured]


def output_names(cf: ConcreteFunction, count: int) -> list:
    """ONNX names for the flat outputs: a dict's keys (sorted, as nest flattens), else
    output_0, output_1, ..."""
    structure = cf.structured_outputs
    if isinstance(structure, dict) and len(structure) == count:
        return [str(k) for k in sorted(structure)]
    return [f"output_{i}" for i in range(count)]
