"""The ndflow ops TF-NumPy is written on, gathered in one place (TF's math_ops/array_ops)."""

# ruff: noqa: F401
from ndflow.ops.apply import constant_value as get_static_value
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import (
                                   add,
                                   floormod,
                                   log,
                                   maximum,
                                   minimum,
                                   multiply,
                                   negative,
                                   reciprocal,
                                   subtract,
                                   truediv,
                                   where,
)
from ndflow.ops.arithmetic import pow as pow_
from ndflow.ops.array_builders import eye, linspace, meshgrid, repeat
from ndflow.ops.array_core import (
                                   constant,
                                   expand_dims,
                                   identity,
                                   rank,
                                   reshape,
                                   shape,
                                   size,
                                   squeeze,
                                   stack,
                                   unstack,
)
from ndflow.ops.array_fill import broadcast_to, fill, ones, ones_like, pad, tile, zeros, zeros_like
from ndflow.ops.array_mask import boolean_mask
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_nd import gather_nd, scatter_nd, tensor_scatter_nd_update
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_reorder import reverse, roll
from ndflow.ops.array_slicing import concat, strided_slice
from ndflow.ops.array_split import split
from ndflow.ops.array_transpose import transpose
from ndflow.ops.bitwise import bitwise_and, bitwise_or, bitwise_xor, invert
from ndflow.ops.cast import cast
from ndflow.ops.comparison import (
                                   equal,
                                   greater,
                                   greater_equal,
                                   is_finite,
                                   is_inf,
                                   is_nan,
                                   less,
                                   less_equal,
                                   logical_and,
                                   logical_not,
                                   logical_or,
                                   logical_xor,
                                   not_equal,
)
from ndflow.ops.complex_ops import angle, conj, imag, real
from ndflow.ops.cross_product import cross
from ndflow.ops.einsum import einsum
from ndflow.ops.gather_batch import gather
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_diag import band_part, matrix_diag, matrix_diag_part, trace
from ndflow.ops.linalg_extra import tensordot
from ndflow.ops.math import abs as abs_
from ndflow.ops.math import (
                                   ceil,
                                   clip_by_value,
                                   count_nonzero,
                                   exp,
                                   expm1,
                                   floor,
                                   floordiv,
                                   log1p,
                                   polyval,
                                   sign,
                                   sqrt,
                                   square,
                                   tanh,
)
from ndflow.ops.math import round as round_
from ndflow.ops.math_cumulative import cumprod, cumsum
from ndflow.ops.math_special import nextafter
from ndflow.ops.math_trig import (
                                   acos,
                                   acosh,
                                   asin,
                                   asinh,
                                   atan,
                                   atan2,
                                   atanh,
                                   cos,
                                   cosh,
                                   sin,
                                   sinh,
                                   tan,
)
from ndflow.ops.nn_activation import relu
from ndflow.ops.norms import reduce_std, reduce_variance
from ndflow.ops.random import random_normal, random_uniform
from ndflow.ops.random_gamma_poisson import random_poisson_v2 as random_poisson
from ndflow.ops.random_seed import set_seed
from ndflow.ops.reduction import (
                                   argmax,
                                   argmin,
                                   reduce_all,
                                   reduce_any,
                                   reduce_max,
                                   reduce_mean,
                                   reduce_min,
                                   reduce_prod,
                                   reduce_sum,
)
from ndflow.ops.sort import argsort, sort
