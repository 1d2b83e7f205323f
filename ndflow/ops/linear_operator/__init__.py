"""TensorFlow's `tf.linalg.LinearOperator` family on ndflow's ops: the base class (`base`),
one module per operator (or a few small ones), batch slicing (`slicing`) and the
`tf.linalg.*` functions that accept operators (`dispatch`)."""

from ndflow.ops.linear_operator import (  # noqa: F401 - importing a module declares its names
    adjoint_inversion,
    base,
    block_diag,
    block_lower_triangular,
    circulant,
    composite,
    composition,
    diag,
    dispatch,
    full_matrix,
    identity,
    kronecker,
    low_rank_update,
    slicing,
    structured,
    zeros,
)
