"""Layer 1: OpDefs (TensorFlow op names, attrs, shape rules), one module per op family, and
their gradients, one module per family of gradients (TF's math_grad.py / array_grad.py /
nn_grad.py pattern).

The families are imported first, then the public names built on them, then every gradient
module, so a gradient can use any op.
"""

from ndflow.ops import (  # noqa: F401 - importing a family registers its OpDefs
    arithmetic,
    array_core,
    array_fill,
    array_gather,
    array_mask,
    array_nd,
    array_range,
    array_reorder,
    array_search,
    array_slicing,
    array_split,
    array_transpose,
    candidate_sampling,
    cast,
    comparison,
    complex_ops,
    constant_op,
    control_flow,
    data_flow,
    einsum,
    histogram,
    linalg,
    linalg_decomp,
    linalg_diag,
    linalg_expm,
    linalg_extra,
    linalg_lu,
    linalg_tridiag,
    list_ops,
    logging_ops,
    math,
    math_cumulative,
    math_special,
    math_trig,
    nn_activation,
    nn_conv,
    nn_dropout,
    nn_fused,
    nn_loss,
    nn_norm,
    nn_pool,
    norms,
    random,
    reduction,
    segment,
    sort,
    spectral_ops,
    state,
    stateless_random,
    training,
)

# isort: split
from ndflow.ops import (  # noqa: F401 - public names built on the ops
    array_builders,
    clip_ops,
    confusion_matrix,
    embedding_ops,
    gather_batch,
    importer,
    init_ops,
    losses_impl,
    module,
    nn_activation_composite,
    nn_sampled_loss,
    random_generator,
    signal,
    tensor_array_ops,
    variable_scope,
    variables,
)

# isort: split
from ndflow.ops import (  # noqa: F401 - importing a gradient module registers its gradients
    array_grad,
    complex_ops_grad,
    data_flow_grad,
    linalg_grad,
    list_ops_grad,
    math_grad,
    math_special_grad,
    nn_grad,
    segment_grad,
    spectral_ops_grad,
)
