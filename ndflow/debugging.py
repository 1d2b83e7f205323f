"""`tf.debugging`: numeric checks."""

from ndflow.ops.math import check_numerics, is_finite, is_inf, is_nan  # noqa: F401
