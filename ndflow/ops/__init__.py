"""Layer 1: OpDefs (TensorFlow op names, attrs, shape rules), one module per op family, and
their gradients, one module per family of gradients (TF's math_grad.py / array_grad.py /
nn_grad.py pattern).

Every family is imported first, then every gradient module, so a gradient can use any op.
"""

from ndflow.ops import (  # noqa: F401 - importing a family registers its OpDefs  # noqa: F401 - importing a gradient module registers its gradients
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    array_grad,
    array_mask,
    array_range,
    array_slicing,
    array_split,
    array_transpose,
    cast,
    comparison,
    control_flow,
    einsum,
    linalg,
    linalg_extra,
    linalg_grad,
    logging_ops,
    math,
    math_cumulative,
    math_grad,
    nn_activation,
    nn_conv,
    nn_dropout,
    nn_fused,
    nn_grad,
    nn_loss,
    nn_norm,
    nn_pool,
    norms,
    random,
    reduction,
    sort,
    state,
    training,
)
