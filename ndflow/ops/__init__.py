"""Layer 1: OpDefs (TensorFlow op names, attrs, shape rules, gradients), one file per family."""

from ndflow.ops import array, math, nn, nn_fused, random, state, training  # noqa: F401 - registers the OpDefs
