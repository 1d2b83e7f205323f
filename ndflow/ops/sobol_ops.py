"""`tf.math.sobol_sample`: TF's SobolSample op, quasi-random points of the Sobol sequence
(Joe-Kuo direction numbers; the kernel is kernels/sobol.py). TF registers no gradient."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.comparison import composite_name
from ndflow.ops.op_def import op_def


def _scalar_dim(ctx, i: int):
    value = ctx.value(i)
    return None if value is None else int(np.reshape(value, -1)[0])


def _sobol_shape(ctx):
    for i in range(3):
        s = ctx.shapes[i]
        if s.rank is not None and s.rank != 0:
            raise ValueError(f"Shape must be rank 0 but is rank {s.rank}")
    return [TensorShape([_scalar_dim(ctx, 1), _scalar_dim(ctx, 0)])]


SobolSample = op_def("SobolSample", inputs=["dim: int32", "num_results: int32", "skip: int32"],
                     outputs=["samples: dtype"], attrs=["dtype: {float, double} = DT_FLOAT"],
                     shape=_sobol_shape, gradient_undefined=True)


@tf_export("math.sobol_sample")
def sobol_sample(dim, num_results, skip=0, dtype=dtypes.float32, name=None) -> Tensor:
    """`tf.math.sobol_sample`: `num_results` points of the `dim`-dimensional Sobol sequence
    after the first `skip` (the all-zero point is never returned), shape [num_results, dim]."""
    with composite_name(name, "sobol"):
        return apply_op(SobolSample, [dim, num_results, skip],
                        {"dtype": dtypes.as_dtype(dtype)}).outputs[0]
