"""TensorFlow's `ScalarSummary` op (tags, values -> a serialized Summary of simple_values),
registered so that GraphDefs / meta graphs written by TensorFlow import and run: TF1 input
pipelines carry one per queue (`fraction_of_32_full`). ndflow's own
`tf.compat.v1.summary.scalar` builds its Summary differently (summary/v1_summary_ops.py).
Kernel: kernels/summary_v1_kernels.py."""

from __future__ import annotations

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def

ScalarSummary = op_def(
    "ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
    attrs=["T: {float, double, int32, uint8, int16, int8, int64, bfloat16, half}"],
    shape=lambda ctx: [TensorShape([])], not_differentiable=True,
    doc="A Summary protocol buffer with a simple_value per tag.")
