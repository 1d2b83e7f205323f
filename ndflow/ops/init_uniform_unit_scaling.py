"""`tf.compat.v1.uniform_unit_scaling_initializer` (`initializers.uniform_unit_scaling`):
uniform values in [-max, max), max = sqrt(3 / input_size) * factor with input_size the
product of all dimensions but the last (a partitioned variable's full shape), drawn by the
seeded RandomUniform op as TF's, so a seed gives TF's values."""

from __future__ import annotations

import math

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops import random as random_ops
from ndflow.ops.init_ops import Initializer


def _assert_float_dtype(dtype):
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: "
                         f"{dtype}.")
    return dtype


@tf_export(v1=["initializers.uniform_unit_scaling", "uniform_unit_scaling_initializer"])
class UniformUnitScaling(Initializer):
    """Keeps the scale of a linear layer's output at its input's (Sussillo & Abbott)."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(_assert_float_dtype(dtypes.as_dtype(dtype)))
        self.factor = factor
        self.seed = seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        scale_shape = shape if partition_info is None else partition_info.full_shape
        input_size = 1.0
        for dim in list(scale_shape)[:-1]:
            input_size *= float(dim)
        max_val = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(shape, -max_val, max_val, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


uniform_unit_scaling_initializer = UniformUnitScaling
