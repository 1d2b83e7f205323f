"""Layer 2: ATen kernels, registered per (OpDef, device type)."""

from ndflow.kernels import array, math, nn, nn_fused, random, state, training  # noqa: F401 - registers the kernels
