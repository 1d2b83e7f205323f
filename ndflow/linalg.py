"""`tf.linalg`: matrix products."""

from ndflow.ops.math import matmul  # noqa: F401
