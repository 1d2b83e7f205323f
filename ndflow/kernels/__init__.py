"""Layer 2: ATen kernels, registered per (OpDef, device type)."""

from ndflow.kernels import (  # noqa: F401 - registers the kernels
    array,
    array_split,
    einsum,
    logging_ops,
    math,
    math_cumulative,
    nn,
    nn_fused,
    random,
    sort,
    state,
    training,
)
