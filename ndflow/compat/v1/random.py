"""`tf.compat.v1.random`."""

from ndflow.ops.random import normal, shuffle, truncated_normal, uniform  # noqa: F401
from ndflow.ops.random_seed import get_seed, set_random_seed  # noqa: F401
