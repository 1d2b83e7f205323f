"""`tf.compat.v1.summary.get_summary_description`: the SummaryDescription (JSON in the
node's `description` attr) of a TensorSummary node."""

from __future__ import annotations

from google.protobuf import json_format
from tensorboard.compat.proto.summary_pb2 import SummaryDescription

from ndflow.core.api_export import tf_export


@tf_export(v1=["summary.get_summary_description"])
def get_summary_description(node_def):
    """The SummaryDescription of a TensorSummary NodeDef; ValueError for another op."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = node_def.attr["description"].s
    if isinstance(description, bytes):
        description = description.decode("utf-8")
    out = SummaryDescription()
    json_format.Parse(description, out)
    return out
