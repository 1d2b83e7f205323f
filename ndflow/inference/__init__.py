"""Inference export: TF-TRT's converter API (`tf.experimental.tensorrt.Converter`) with ONNX
Runtime as the engine (TensorRT through onnxruntime's provider when present).

converter.py converts a SavedModel; freeze.py turns variables into constants;
batch_norm_folding.py folds batch norms into convolutions; segmenter.py cuts the graph into
engine segments; engine_op.py is the OnnxEngineOp that runs one (its kernel holds the ONNX
Runtime session); conversion_params.py is TF-TRT's ConversionParams and precision modes.
The ONNX exporter is onnx_export/ (public as `ndflow.onnx.export`).
"""

from ndflow.inference import conversion_params, converter, engine_op  # noqa: F401 - exports
