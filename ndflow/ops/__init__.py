"""Layer 1: OpDefs (TensorFlow op names, attrs, shape rules, gradients), one file per family."""

from ndflow.ops import (  # noqa: F401 - registers the OpDefs
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
