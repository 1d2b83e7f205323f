"""The ONNX exporter behind `ndflow.onnx.export`: a traced ndflow function or Keras model as
a standard ONNX model.

    import ndflow.onnx
    model_proto = ndflow.onnx.export(model, "model.onnx", opset=17)

The graph is converted op by op from TensorFlow's op set (exporter.py, convert_nn.py,
convert_array.py); variables become initializers with their current values; unknown
dimensions (the batch) stay symbolic; the `onnx` checker validates the result before it is
written (atomically). An op without a conversion raises UnsupportedOpError naming the op and
its type. `onnx` is imported on first use (backend.py).
"""

from __future__ import annotations

import os

from ndflow.inference.onnx_export.builder import UnsupportedOpError
from ndflow.inference.onnx_export.exporter import (
    DEFAULT_OPSET,
    check_model,
    graph_to_onnx,
    is_convertible,
    save_model_atomic,
)
from ndflow.inference.onnx_export.graph_source import (
    concrete_function_of,
    frozen_variable_values,
    function_inputs,
    output_names,
)

# isort: split
# After graph_source, which freeze imports from this package.
from ndflow.inference.freeze import freeze  # noqa: E402

__all__ = ["export", "UnsupportedOpError", "DEFAULT_OPSET", "graph_to_onnx", "is_convertible",
           "concrete_function_of"]


def export(concrete_function_or_keras_model, path=None, opset: int = DEFAULT_OPSET,
           input_signature=None):
    """Exports a ConcreteFunction, `tf.function`, SavedModel signature or Keras model to ONNX;
    writes it to `path` (when given) and returns the ModelProto."""
    cf = concrete_function_of(concrete_function_or_keras_model, input_signature)
    inputs = function_inputs(cf)
    outputs = list(cf.graph.outputs)
    in_names = [t.op.name for t in inputs]
    constants = frozen_variable_values(cf)
    if any(cf.graph.get_tensor_by_name(name).shape.rank is None for name in constants):
        # A function restored from a SavedModel reads variables whose shapes its graph does
        # not know, so the shapes after them are unknown too (a convolution's channels):
        # freeze the reads into constants and export the re-imported graph, which has them.
        _, inputs, outputs = freeze(cf)
        constants = {}
    model = graph_to_onnx(inputs, outputs, constants, in_names,
                          output_names(cf, len(outputs)), opset=opset,
                          graph_name=getattr(cf, "name", "ndflow") or "ndflow")
    check_model(model)
    if path is not None:
        save_model_atomic(model, os.fspath(path))
    return model
