"""`tf.debugging`: numeric checks."""

from ndflow.ops.math import check_numerics
from ndflow.ops.comparison import is_finite, is_inf, is_nan
