"""TensorFlow's TF1 summary ops: each turns its inputs into one serialized `Summary` proto
(a scalar string) as TF's CPU kernels do: ScalarSummary (simple_values), HistogramSummary,
ImageSummary (PNGs), AudioSummaryV2 / AudioSummary (WAVs), TensorSummaryV2 (the tensor with
SummaryMetadata) and MergeSummary (their union). `tf.compat.v1.summary.*` builds them
(summary/v1_summary_ops.py), and GraphDefs / meta graphs written by TensorFlow with them
import and run. Kernels: kernels/summary_v1_kernels.py."""

from __future__ import annotations

import numpy as np

from ndflow.ops.op_def import op_def, scalar_output

_REAL = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"



ScalarSummary = op_def(
    "ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
    attrs=[f"T: {_REAL}"], shape=scalar_output, not_differentiable=True,
    doc="A Summary protocol buffer with a simple_value per tag.")

HistogramSummary = op_def(
    "HistogramSummary", inputs=["tag: string", "values: T"], outputs=["summary: string"],
    attrs=[f"T: {_REAL} = float"], shape=scalar_output, not_differentiable=True,
    doc="A Summary protocol buffer with a histogram of `values`.")

ImageSummary = op_def(
    "ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
    attrs=["max_images: int >= 1 = 3", "T: {uint8, float, half, double} = float",
           "bad_color: tensor"],
    shape=scalar_output, not_differentiable=True,
    doc="A Summary protocol buffer with up to `max_images` PNG images.")
# TF's default: opaque red, the color of images' non-finite pixels.
ImageSummary.attrs["bad_color"].default = np.array([255, 0, 0, 255], np.uint8)
ImageSummary.attrs["bad_color"].has_default = True

AudioSummaryV2 = op_def(
    "AudioSummaryV2", inputs=["tag: string", "tensor: float", "sample_rate: float"],
    outputs=["summary: string"], attrs=["max_outputs: int >= 1 = 3"], shape=scalar_output,
    not_differentiable=True, doc="A Summary protocol buffer with up to `max_outputs` WAVs.")

AudioSummary = op_def(
    "AudioSummary", inputs=["tag: string", "tensor: float"], outputs=["summary: string"],
    attrs=["sample_rate: float", "max_outputs: int >= 1 = 3"], shape=scalar_output,
    not_differentiable=True, doc="AudioSummaryV2 with the sample rate as an attr.")

TensorSummaryV2 = op_def(
    "TensorSummaryV2", inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
    outputs=["summary: string"], attrs=["T: type"], shape=scalar_output, not_differentiable=True,
    doc="A Summary protocol buffer holding `tensor` and its SummaryMetadata.")

MergeSummary = op_def(
    "MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"],
    attrs=["N: int >= 1"], shape=scalar_output, not_differentiable=True,
    doc="The union of the serialized Summary protocol buffers `inputs`.")
