"""Const: the op holding a value (TF's constant_op).

At the bottom of the op families because converting any Python or NumPy value to a tensor
while building a graph makes one (`ops/apply.py`); `tf.constant` itself is in array_core.
"""

from __future__ import annotations

import numpy as np

from ndflow.core.shapes import TensorShape
from ndflow.ops.op_def import op_def

Const = op_def("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"],
               shape=lambda ctx: [TensorShape(np.shape(ctx.attrs["value"]))],
               not_differentiable=True, constant_value=lambda t: t.op.attrs["value"])
