"""`tf.linalg`: matrix products."""

from ndflow.ops.einsum import einsum  # noqa: F401
from ndflow.ops.math import matmul  # noqa: F401
