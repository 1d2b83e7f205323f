"""ATen kernels for neural-network ops (one module per family, registered on import)."""

from ndflow.kernels import nn_activation, nn_conv, nn_loss, nn_norm, nn_pool  # noqa: F401 - registers the kernels
