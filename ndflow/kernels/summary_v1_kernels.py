"""Kernel of TensorFlow's ScalarSummary op (ops/summary_v1_ops.py), with TF's error."""

from __future__ import annotations

import numpy as np
import torch
from tensorboard.compat.proto import summary_pb2

from ndflow.core.errors import InvalidArgumentError
from ndflow.kernels.registry import host_kernel
from ndflow.ops.summary_v1_ops import ScalarSummary


@host_kernel(ScalarSummary)
def _scalar_summary(node):
    def run(tags, values):
        tags = np.asarray(tags, dtype=object)
        values = values.detach().cpu().double().numpy() if isinstance(values, torch.Tensor) \
            else np.asarray(values, dtype=np.float64)
        if tags.shape != values.shape:
            raise InvalidArgumentError(None, None, f"tags and values are not the same shape: "
                                       f"{list(tags.shape)} != {list(values.shape)}")
        summary = summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag=t.decode("utf-8", "replace") if isinstance(
                t, bytes) else str(t), simple_value=float(v))
            for t, v in zip(tags.reshape(-1), values.reshape(-1))])
        return np.array(summary.SerializeToString(), dtype=object)
    return run
