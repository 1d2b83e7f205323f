"""`tf.linalg.expm`: the matrix exponential by scaling and squaring with Padé approximants,
the method of TF's Python composite (Higham 2005): the degree (3/5/7 for single precision,
3/5/7/9/13 for double) is chosen per matrix from its 1-norm, the matrix is scaled by 2^-s for
the largest degree, and the solution of (V - U) X = V + U is squared s times.

The coefficients come from the formula b_j = (2m - j)! / (j! (m - j)!) (the [m/m] Padé
approximant of exp, scaled so b_m = 1). TF squares in a while loop; the ops layer has none,
so eagerly the loop runs in Python for the largest s of the batch, and in a graph it is
unrolled `_GRAPH_SQUARINGS` times (matrices needing more squarings, a 1-norm above
~2^64, give NaN). It is differentiable through its ops, as TF's is.
"""

from __future__ import annotations

import math as _math

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add, log, maximum, multiply, pow, select_v2, subtract, truediv
from ndflow.ops.array_builders import eye
from ndflow.ops.array_fill import fill, zeros_like
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.comparison import is_finite, less
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_decomp import matrix_solve
from ndflow.ops.math import abs as abs_
from ndflow.ops.math import floor
from ndflow.ops.reduction import reduce_max, reduce_sum

_GRAPH_SQUARINGS = 64
# (degree thresholds on the 1-norm, degrees, max norm for the top degree) per precision
_SINGLE = ((4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7), 3.925724783138660)
_DOUBLE = ((1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
            2.097847961257068e+000), (3, 5, 7, 9, 13), 5.371920351148152)


def _pade_coefficients(m: int) -> list:
    f = _math.factorial
    return [float(f(2 * m - j) // (f(j) * f(m - j))) for j in range(m + 1)]


def _pade(matrix: Tensor, m: int) -> tuple:
    """(U, V): the odd and even parts of the degree-m Padé numerator at `matrix`."""
    b = _pade_coefficients(m)
    s = array_core.shape(matrix)
    powers = {0: eye(s[-2], batch_shape=s[:-2], dtype=matrix.dtype), 2: matmul(matrix, matrix)}
    for p in range(4, min(m - 1, 6) + 1, 2):
        powers[p] = matmul(powers[p - 2], powers[2])

    def lin(js, shift=0):
        """sum of b_j A^(j - shift), the leading coefficient (1) not multiplied."""
        total = None
        for j in js:
            term = powers[j - shift] if b[j] == 1.0 else multiply(b[j], powers[j - shift])
            total = term if total is None else add(total, term)
        return total
    if m < 13:
        if m == 9:
            powers[8] = matmul(powers[6], powers[2])
        return (matmul(matrix, lin(range(m, 0, -2), shift=1)), lin(range(m - 1, -1, -2)))
    a6 = powers[6]
    high_u = matmul(a6, add(a6, add(multiply(b[11], powers[4]), multiply(b[9], powers[2]))))
    u = matmul(matrix, add(high_u, add(multiply(b[7], a6), add(
        multiply(b[5], powers[4]), add(multiply(b[3], powers[2]), multiply(b[1], powers[0]))))))
    high_v = matmul(a6, add(multiply(b[12], a6), add(multiply(b[10], powers[4]),
                                                       multiply(b[8], powers[2]))))
    v = add(high_v, lin((6, 4, 2, 0)))
    return u, v


def _nest_where(norm, bounds, cases):
    if len(bounds) == 1:
        return select_v2(less(norm, bounds[0]), cases[0], cases[1])
    return select_v2(less(norm, bounds[0]), cases[0], _nest_where(norm, bounds[1:], cases[1:]))


@tf_export("linalg.expm")
def matrix_exponential(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.linalg.expm`: exp of each square matrix of `input` [..., N, N]."""
    with name_scope(name, "matrix_exponential"):
        matrix = convert_to_tensor(input, name="input")
        if matrix.shape.rank is not None and matrix.shape[-2:].as_list() == [0, 0]:
            return matrix
        if matrix.dtype in (dtypes.float16, dtypes.float32):
            bounds, degrees, maxnorm = _SINGLE
        elif matrix.dtype is dtypes.float64:
            bounds, degrees, maxnorm = _DOUBLE
        else:
            raise ValueError(f"tf.linalg.expm does not support matrices of type {matrix.dtype}")
        in_shape = array_core.shape(matrix)
        flat = array_core.reshape(matrix, concat([[-1], in_shape[-2:]], 0))
        norm = reduce_max(reduce_sum(abs_(flat), axis=-2), axis=-1)[..., None, None]
        finite = is_finite(reduce_max(norm))
        safe = select_v2(finite, flat, zeros_like(flat))
        norm = select_v2(finite, norm, zeros_like(norm))
        squarings = maximum(floor(truediv(log(truediv(norm, maxnorm)), np.log(2.0))), 0.0)
        pairs = [_pade(safe, m) for m in degrees[:-1]]
        pairs.append(_pade(truediv(safe, cast(pow(2.0, squarings), safe.dtype)), degrees[-1]))
        u = _nest_where(norm, bounds, [p[0] for p in pairs])
        v = _nest_where(norm, bounds, [p[1] for p in pairs])
        result = matrix_solve(subtract(v, u), add(u, v))
        eager = context.executing_eagerly()
        if eager:  # an empty batch's max is -inf
            steps = int(np.nan_to_num(reduce_max(squarings).numpy(), neginf=0.0))
        else:
            steps = _GRAPH_SQUARINGS
        for i in range(steps):
            result = select_v2(less(float(i), squarings), matmul(result, result), result)
        ok = finite
        if not eager:  # more squarings than unrolled: NaN, not a wrong value
            most = reduce_max(select_v2(finite, squarings, np.inf))
            ok = less(most, _GRAPH_SQUARINGS + 0.5)
        nan = fill(array_core.shape(result), np.array(np.nan, matrix.dtype.np_dtype))
        return array_core.reshape(select_v2(ok, result, nan), in_shape)
