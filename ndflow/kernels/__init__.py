"""Layer 2: ATen kernels, registered per (OpDef, device type), one module per op family."""

from ndflow.kernels import (  # noqa: F401 - importing a module registers its kernels
    array,
    array_fill,
    array_slicing,
    array_split,
    einsum,
    linalg,
    logging_ops,
    math,
    math_cumulative,
    nn_activation,
    nn_conv,
    nn_fused,
    nn_loss,
    nn_norm,
    nn_pool,
    random,
    reduction,
    sort,
    state,
    training,
)
