"""`ndflow.onnx.export`: a traced ndflow function or Keras model as a standard ONNX model.

    import ndflow.onnx
    model_proto = ndflow.onnx.export(model, "model.onnx", opset=17)

A thin public module over ndflow/inference/onnx_export (which the inference converter also
uses): `import ndflow` does not import it, so `import ndflow.onnx` makes `ndflow.onnx` an
attribute as usual. Needs the `onnx` package (`pip install 'ndflow[inference]'`).
"""

from ndflow.inference.onnx_export import DEFAULT_OPSET, UnsupportedOpError, export

__all__ = ["export", "UnsupportedOpError", "DEFAULT_OPSET"]
