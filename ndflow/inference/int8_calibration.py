"""INT8 engines from calibration data, as TF-TRT calibrates: the calibration inputs run
through the frozen graph, the values reaching each segment's inputs are collected, and ONNX
Runtime's static quantization (per-channel int8 weights, uint8 activations, QDQ format, which
its CPU kernels run as int8 convolutions and matrix products) rewrites the segment from the
ranges it observes. A segment that does not quantize keeps FP32, with a log line.
"""

from __future__ import annotations

import contextlib
import logging as py_logging
import os
import tempfile

import numpy as np

from ndflow.core import logging
from ndflow.inference.onnx_export import backend


def _as_call(fn, inputs):
    if isinstance(inputs, dict):
        return fn(**inputs)
    if isinstance(inputs, (list, tuple)):
        return fn(*inputs)
    return fn(inputs)


def collect_segment_inputs(probe, calibration_input_fn, segments: list) -> list:
    """Per segment, one feed dict (`input_i` -> array) per calibration batch; `probe` maps the
    signature's inputs to every segment input, in segment order."""
    feeds = [[] for _ in segments]
    for inputs in calibration_input_fn():
        values = [v.numpy() for v in _as_call(probe, inputs)]
        k = 0
        for seg, seg_feeds in zip(segments, feeds):
            n = len(seg.inputs)
            seg_feeds.append({f"input_{i}": values[k + i] for i in range(n)})
            k += n
    return feeds


class _Reader:
    """onnxruntime.quantization's CalibrationDataReader protocol over a list of feeds."""

    def __init__(self, feeds: list):
        self._it = iter(feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):  # noqa: D401 - part of the protocol in newer onnxruntime releases
        pass


@contextlib.contextmanager
def _quiet_python_warnings():
    """ORT's quantizer advises on the root Python logger ("consider pre-processing"): not the
    user's concern here."""
    previous = py_logging.root.manager.disable
    py_logging.disable(py_logging.WARNING)
    try:
        yield
    finally:
        py_logging.disable(previous)


def quantize_segments(segments: list, feeds: list) -> int:
    """Replaces each segment's model by its int8 version; returns how many were quantized."""
    quantization = backend._require("onnxruntime.quantization", "INT8 calibration")
    onnx = backend.onnx()
    done = 0
    with tempfile.TemporaryDirectory(prefix="ndflow-int8-") as tmp:
        for seg, seg_feeds in zip(segments, feeds):
            if not seg_feeds or any(f[k].dtype != np.float32 for f in seg_feeds for k in f):
                logging.warning(f"{seg.name}: INT8 calibration needs float32 inputs; the "
                                "segment keeps FP32")
                continue
            src = os.path.join(tmp, f"{seg.name}.onnx")
            dst = os.path.join(tmp, f"{seg.name}.int8.onnx")
            onnx.save(seg.model, src)
            try:
                with _quiet_python_warnings():
                    quantization.quantize_static(
                        src, dst, _Reader(seg_feeds),
                        quant_format=quantization.QuantFormat.QDQ, per_channel=True,
                        weight_type=quantization.QuantType.QInt8,
                        activation_type=quantization.QuantType.QUInt8)
                seg.model = onnx.load(dst)
                done += 1
            except Exception as e:  # ORT's quantizer raises assorted types: keep FP32
                logging.warning(f"{seg.name}: INT8 quantization failed ({type(e).__name__}: "
                                f"{e}); the segment keeps FP32")
    return done
