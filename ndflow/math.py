"""`tf.math`: the public math namespace (TensorFlow's names for the math family's wrappers)."""

from ndflow.ops.math import abs, count_nonzero, erf, exp, floordiv, log1p, mod, reduce_logsumexp, rsqrt, scalar_mul, sigmoid, sign, sqrt, square, tanh
from ndflow.ops.math_cumulative import cumprod, cumsum  # noqa: F401
from ndflow.ops.arithmetic import div_no_nan as divide_no_nan  # noqa: F401
from ndflow.ops.nn_activation import softplus  # noqa: F401
from ndflow.ops.norms import (  # noqa: F401
    l2_normalize,
    log_sigmoid,
    reduce_euclidean_norm,
    reduce_std,
    reduce_variance,
)
from ndflow.ops.sort import top_k  # noqa: F401
from ndflow.ops.arithmetic import add, add_n, divide, floormod, log, maximum, minimum, multiply, negative, pow, reciprocal, squared_difference, subtract, truediv
from ndflow.ops.comparison import equal, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, logical_and, logical_not, logical_or, logical_xor, not_equal
from ndflow.ops.reduction import argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum
