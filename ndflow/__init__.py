"""ndflow: TensorFlow's dataflow graphs rebuilt in Python on ATen kernels.

    import ndflow as tf
"""

from ndflow import kernels, ops, runtime  # noqa: F401 - registration side effects
from ndflow.core.dtypes import (  # noqa: F401
    DType, as_dtype, bfloat16, bool, double, float16, float32, float64, half, int8, int16,
    int32, int64, string, uint8,
)
from ndflow.core.tensor import Tensor  # noqa: F401
from ndflow.ops.apply import convert_to_tensor  # noqa: F401
from ndflow.ops.array import constant, identity  # noqa: F401
from ndflow.ops.math import add, matmul  # noqa: F401

__version__ = "0.1.0"
