"""`tf.random`: random tensors and seeding."""

from ndflow.ops.random import (  # noqa: F401
    normal,
    random_normal,
    random_shuffle,
    random_uniform,
    shuffle,
    truncated_normal,
    uniform,
)
from ndflow.ops.random_seed import get_seed, set_random_seed, set_seed  # noqa: F401

__all__ = ["get_seed", "normal", "set_seed", "shuffle", "truncated_normal", "uniform"]
