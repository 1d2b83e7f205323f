"""`tf.experimental.tensorrt.Converter` (TF-TRT's TrtGraphConverterV2), on ONNX Runtime.

    converter = tf.experimental.tensorrt.Converter(input_saved_model_dir="sm",
                                                   precision_mode="FP32")
    converter.convert()            # -> the converted ConcreteFunction
    converter.build(input_fn)      # optional: build the engines before the first call
    converter.save("sm_converted") # a SavedModel tf.saved_model.load runs

convert() loads the SavedModel, freezes the signature's variables into constants
(freeze.py), runs the inference passes (pruning, constant folding, arithmetic
simplifications with Identity removal, then batch-norm folding into convolutions), cuts the
graph into segments the ONNX exporter can take (segmenter.py) and replaces each with an
OnnxEngineOp (engine_op.py), which runs it in ONNX Runtime — TensorRT's execution provider
when onnxruntime has it, else the CPU. Unsupported ops stay ndflow ops, with a log line
naming them, as TF-TRT leaves them to TensorFlow.

Precision: INT8 runs the calibration data through the frozen graph and quantizes each
segment statically from the ranges it sees (int8_calibration.py: ONNX Runtime's QDQ int8
kernels); FP16 keeps FP32 engines (logged). Unlike TF-TRT, conversion needs no GPU.
"""

from __future__ import annotations

import inspect
import os

from ndflow.core import logging
from ndflow.core.api_export import tf_export
from ndflow.core.errors import NotFoundError
from ndflow.core.nest import flatten
from ndflow.core.tensor_spec import TensorSpec
from ndflow.inference import engine_op
from ndflow.inference.batch_norm_folding import fold_batch_norms
from ndflow.inference.conversion_params import (
    DEFAULT_TRT_MAX_WORKSPACE_SIZE_BYTES,
    TrtConversionParams,
    TrtPrecisionMode,
    check_conversion_params,
    precision_of,
)
from ndflow.inference.freeze import freeze, import_frozen
from ndflow.inference.int8_calibration import collect_segment_inputs, quantize_segments
from ndflow.inference.onnx_export import DEFAULT_OPSET
from ndflow.inference.segmenter import converted_graph_def, find_segments
from ndflow.ops.importer import import_graph_def
from ndflow.ops.module import Module
from ndflow.passes.arithmetic_optimizer import arithmetic_optimizer
from ndflow.passes.constant_folding import constant_folding
from ndflow.passes.pass_context import PassContext
from ndflow.passes.prune import prune
from ndflow.runtime.function import function
from ndflow.saved_model import load_api, saving

_SERVING_TAG = "serve"
_DEFAULT_SIGNATURE = "serving_default"


def _optimize(graph, inputs: list, outputs: list) -> tuple:
    """The inference passes; returns (graph, inputs, outputs) in the optimized graph."""
    ctx = PassContext(feeds=[t.name for t in inputs], fetches=[t.name for t in outputs])
    for graph_pass in (prune, constant_folding, arithmetic_optimizer):
        graph = graph_pass(graph, ctx)
    find = lambda t: graph.get_tensor_by_name(ctx.current_name(t.name))
    inputs, outputs = [find(t) for t in inputs], [find(t) for t in outputs]
    keep = {t.op.name for t in inputs + outputs}
    gd, folds = fold_batch_norms(graph.as_graph_def(), keep)
    if folds:
        graph = import_frozen(gd)
        inputs = [graph.get_tensor_by_name(t.name) for t in inputs]
        outputs = [graph.get_tensor_by_name(t.name) for t in outputs]
    logging.vlog("converter", 1, f"batch norms folded into convolutions: {folds}")
    return graph, inputs, outputs


def _log_left_in_ndflow(left: list) -> None:
    if not left:
        return
    types = sorted({op.type for op in left})
    counts = ", ".join(f"{t}({sum(op.type == t for op in left)})" for t in types)
    logging.warning(f"There are {len(left)} ops of {len(types)} different types in the graph "
                    f"that are not converted to the inference engine: {counts}; they run in "
                    f"ndflow: {', '.join(op.name for op in left)}")


def _converted_function(gd, inputs: list, specs: list, output_keys, out_names: list):
    """A traced function running the converted GraphDef: signature inputs in, the
    signature's output structure (a dict) out."""
    in_names = [t.name for t in inputs]

    def converted(*args):
        outs = import_graph_def(gd, input_map=dict(zip(in_names, args)),
                                return_elements=out_names, name="converted")
        if output_keys is None:
            return outs[0] if len(outs) == 1 else list(outs)
        return dict(zip(output_keys, outs))

    converted.__signature__ = inspect.Signature(
        [inspect.Parameter(s.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for s in specs])
    return function(converted, input_signature=specs, autograph=False)


@tf_export("experimental.tensorrt.Converter", v1=[])
class TrtGraphConverterV2:
    """Converts a SavedModel's signature for inference (see the module docstring)."""

    def __init__(self, input_saved_model_dir=None, input_saved_model_tags=None,
                 input_saved_model_signature_key=None, use_dynamic_shape=None,
                 dynamic_shape_profile_strategy=None,
                 max_workspace_size_bytes=DEFAULT_TRT_MAX_WORKSPACE_SIZE_BYTES,
                 precision_mode=TrtPrecisionMode.FP32, minimum_segment_size=3,
                 maximum_cached_engines=1, use_calibration=True, allow_build_at_runtime=True,
                 conversion_params=None):
        if conversion_params is None:
            conversion_params = TrtConversionParams(
                max_workspace_size_bytes=max_workspace_size_bytes,
                precision_mode=precision_mode, minimum_segment_size=minimum_segment_size,
                maximum_cached_engines=maximum_cached_engines, use_calibration=use_calibration,
                allow_build_at_runtime=allow_build_at_runtime)
        check_conversion_params(conversion_params)
        if input_saved_model_dir is None:
            raise ValueError("input_saved_model_dir is required")
        self._conversion_params = conversion_params
        self._input_saved_model_dir = os.fspath(input_saved_model_dir)
        self._input_saved_model_tags = input_saved_model_tags or [_SERVING_TAG]
        self._input_saved_model_signature_key = (input_saved_model_signature_key or
                                                 _DEFAULT_SIGNATURE)
        self._use_dynamic_shape = bool(use_dynamic_shape)
        self._need_calibration = (precision_of(conversion_params) == TrtPrecisionMode.INT8
                                  and conversion_params.use_calibration)
        self._converted = False
        self._calibrated = False
        self._build_called_once = False
        self._converted_function = None
        self._converted_func = None
        self.segments: list = []
        self.ops_left_in_ndflow: list = []

    # -- convert -------------------------------------------------------------------------------
    def _load_signature(self):
        path = self._input_saved_model_dir
        if not os.path.isdir(path):
            raise NotFoundError(None, None, f"SavedModel directory does not exist or is not "
                                            f"readable: {path}")
        loaded = load_api.load(path, tags=self._input_saved_model_tags)
        signatures = getattr(loaded, "signatures", {}) or {}
        key = self._input_saved_model_signature_key
        if key not in signatures:
            raise ValueError(f"The SavedModel at {path} has no signature '{key}' (it has: "
                             f"{sorted(signatures)})")
        return loaded, signatures[key]

    def convert(self, calibration_input_fn=None):
        """Converts the signature; returns the converted ConcreteFunction."""
        if self._converted:
            raise RuntimeError("convert() was already called on this converter")
        if self._need_calibration and not calibration_input_fn:
            raise ValueError("Should specify calibration_input_fn because INT8 "
                             "calibration is needed")
        if not self._need_calibration and calibration_input_fn:
            raise ValueError("Should not specify calibration_input_fn because INT8 "
                             "calibration is not needed")
        self._saved_model, signature = self._load_signature()
        traced = signature.concrete.traced()
        graph, inputs, outputs = freeze(traced)
        graph, inputs, outputs = _optimize(graph, inputs, outputs)
        params = self._conversion_params
        self.segments, self.ops_left_in_ndflow = find_segments(
            graph, outputs, params.minimum_segment_size, DEFAULT_OPSET)
        precision = precision_of(params)
        logging.info(f"Number of inference engine segments: {len(self.segments)} "
                     f"(engine: ONNX Runtime, providers {engine_op.available_providers()})")
        _log_left_in_ndflow(self.ops_left_in_ndflow)
        specs = self._input_specs(signature, inputs)
        if precision == TrtPrecisionMode.FP16:
            logging.warning("precision_mode FP16: ONNX Runtime's engines keep FP32 arithmetic "
                            "(no float16 segment conversion yet)")
        if self._need_calibration:
            self._calibrate(graph, inputs, specs, calibration_input_fn)
        gd, moved = converted_graph_def(graph, self.segments, precision)
        out_names = [moved.get(t.name, t.name) for t in outputs]
        structure = signature.structured_outputs
        keys = sorted(structure) if isinstance(structure, dict) else None
        self._converted_function = _converted_function(gd, inputs, specs, keys, out_names)
        self._converted_func = self._converted_function.get_concrete_function()
        self._converted = True
        return self._converted_func

    def _calibrate(self, graph, inputs: list, specs: list, calibration_input_fn) -> None:
        """Runs the calibration data through the frozen graph and quantizes each segment
        from the ranges reaching it (int8_calibration.py)."""
        seg_inputs = [t.name for seg in self.segments for t in seg.inputs]
        probe = _converted_function(graph.as_graph_def(), inputs, specs, None, seg_inputs)
        if not seg_inputs:
            self._calibrated = True
            return
        flat_probe = lambda *a, **k: (lambda r: r if isinstance(r, list) else [r])(
            probe(*a, **k))
        feeds = collect_segment_inputs(flat_probe, calibration_input_fn, self.segments)
        quantized = quantize_segments(self.segments, feeds)
        logging.info(f"INT8 calibration: {quantized} of {len(self.segments)} segments "
                     f"quantized from {len(feeds[0]) if feeds else 0} calibration batches")
        self._calibrated = True

    @staticmethod
    def _input_specs(signature, inputs: list) -> list:
        args, kwargs = signature.structured_input_signature
        flat = [s for s in flatten((args, kwargs)) if isinstance(s, TensorSpec)]
        names = sorted(kwargs) if kwargs and not args else [s.name for s in flat]
        return [TensorSpec(s.shape, s.dtype, name=n) for s, n in zip(flat, names)]

    # -- build / save --------------------------------------------------------------------------
    def _run(self, input_fn, what: str) -> None:
        for inputs in input_fn():
            if isinstance(inputs, dict):
                self._converted_func(**inputs)
            elif isinstance(inputs, (list, tuple)):
                self._converted_func(*inputs)
            else:
                self._converted_func(inputs)

    def build(self, input_fn):
        """Runs the converted function on `input_fn()`'s inputs, building every engine."""
        if self._build_called_once:
            raise NotImplementedError("build() is already called. It is not supported to "
                                      "call build() more than once.")
        if not input_fn:
            raise RuntimeError("input_fn is None. Method build() needs input_fn to be "
                               "specified in order to build TensorRT engines")
        if not self._converted:
            raise RuntimeError("Need to call convert() before build()")
        self._run(input_fn, "input_fn")
        self._build_called_once = True

    def save(self, output_saved_model_dir, save_gpu_specific_engines=True, options=None):
        """Writes the converted signature as a SavedModel (atomically, as saving does)."""
        if not self._converted:
            raise RuntimeError("Need to call convert() before save()")
        if self._need_calibration and not self._calibrated:
            raise RuntimeError("A model that requires INT8 calibration has to be built "
                               "before saving it. Call build() to build and calibrate the "
                               "TensorRT engines.")
        root = Module()
        root.converted = self._converted_function
        saving.save(root, os.fspath(output_saved_model_dir),
                    signatures={self._input_saved_model_signature_key: self._converted_func},
                    options=options)

    def summary(self, line_length=160, detailed=True, print_fn=None):
        """Prints the engine segments (TF-TRT prints its TRTEngineOps)."""
        if not self._converted:
            raise RuntimeError("summary() needs convert() to be called first")
        print_fn = print_fn or print
        print_fn(f"Number of engine segments: {len(self.segments)}")
        for seg in self.segments:
            types = sorted({op.type for op in seg.ops})
            print_fn(f"{seg.name}: {len(seg.ops)} ops, {len(seg.inputs)} inputs, "
                     f"{len(seg.outputs)} outputs" + (f" [{', '.join(types)}]" if detailed
                                                      else ""))
        if self.ops_left_in_ndflow:
            print_fn("Ops left in ndflow: " + ", ".join(
                f"{op.name} ({op.type})" for op in self.ops_left_in_ndflow))
