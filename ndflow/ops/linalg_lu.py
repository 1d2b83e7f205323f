"""The LU decomposition with partial pivoting: the Lu op (`tf.linalg.lu`) and TF's Python
composites on its output, `lu_solve`, `lu_matrix_inverse` and `lu_reconstruct`.

Lu returns `lu` (L below the diagonal, its unit diagonal implied, U on and above) and `p`,
the row permutation as indices: `input[..., p, :] = L @ U`. TF registers no gradient for Lu
(the composites are differentiable in `lower_upper` and `rhs`).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import add
from ndflow.ops.array_builders import eye
from ndflow.ops.array_core import expand_dims
from ndflow.ops.array_fill import ones, zeros_like
from ndflow.ops.array_transpose import invert_permutation
from ndflow.ops.cast import cast
from ndflow.ops.gather_batch import gather
from ndflow.ops.linalg import matmul
from ndflow.ops.linalg_decomp import _square, matrix_triangular_solve
from ndflow.ops.linalg_diag import band_part, matrix_set_diag
from ndflow.ops.op_def import op_def
from ndflow.ops.sort import argsort


def _lu_shape(ctx):
    s = _square(ctx.shapes[0])
    return [s, s[:-1] if s.rank is not None else TensorShape(None)]


Lu = op_def("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
            attrs=["T: {double, float, half}",
                   "output_idx_type: {int32, int64} = DT_INT32"],
            shape=_lu_shape, gradient_undefined=True)


@tf_export("linalg.lu")
def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002 - TF's name
    """`tf.linalg.lu`: (lu, p) of each square matrix; a singular one is an error."""
    op = apply_op(Lu, [input], {"output_idx_type": dtypes.as_dtype(output_idx_type)},
                  name=name)
    return tuple(op.outputs)


def _lu_operands(lower_upper, perm) -> tuple:
    return (convert_to_tensor(lower_upper, dtype_hint=dtypes.float32, name="lower_upper"),
            convert_to_tensor(perm, dtype_hint=dtypes.int32, name="perm"))


def _unit_lower(lower_upper):
    shape = array_core.shape(lower_upper)
    return matrix_set_diag(band_part(lower_upper, -1, 0),
                           ones(shape[:-1], dtype=lower_upper.dtype))


def _permute_rows(x, perm):
    """x[..., perm, :], broadcasting the batch dims of `x` [..., D, M] and `perm` [..., D]."""
    if x.shape.rank == 2 and perm.shape.rank == 1:
        return gather(x, perm, axis=-2)
    if x.shape.rank is None or perm.shape.rank is None:
        raise NotImplementedError("lu_solve needs `rhs` and `perm` of known rank")
    xb, pb = x.shape[:-2], perm.shape[:-1]
    if not (xb.is_fully_defined() and pb.is_fully_defined() and xb == pb):
        # Broadcast the batch dims by adding zeros of the other's shape.
        x = add(x, cast(expand_dims(zeros_like(perm), -1), x.dtype))
        perm = add(perm, cast(zeros_like(x[..., 0]), perm.dtype))
    return gather(x, perm, axis=x.shape.rank - 2, batch_dims=x.shape.rank - 2)


@tf_export("linalg.lu_solve")
def lu_solve(lower_upper, perm, rhs, validate_args: bool = False, name=None) -> Tensor:
    """`tf.linalg.lu_solve`: X with A X = rhs, given A's `lu` and `p`."""
    with name_scope(name or "lu_solve"):
        lower_upper, perm = _lu_operands(lower_upper, perm)
        rhs = convert_to_tensor(rhs, dtype_hint=lower_upper.dtype, name="rhs")
        permuted = _permute_rows(rhs, perm)
        y = matrix_triangular_solve(_unit_lower(lower_upper), permuted)
        return matrix_triangular_solve(lower_upper, y, lower=False)


@tf_export("linalg.lu_matrix_inverse")
def lu_matrix_inverse(lower_upper, perm, validate_args: bool = False, name=None) -> Tensor:
    """`tf.linalg.lu_matrix_inverse`: A^-1 from A's `lu` and `p`."""
    with name_scope(name or "lu_matrix_inverse"):
        lower_upper, perm = _lu_operands(lower_upper, perm)
        shape = array_core.shape(lower_upper)
        identity = eye(shape[-1], batch_shape=shape[:-2], dtype=lower_upper.dtype)
        return lu_solve(lower_upper, perm, rhs=identity)


@tf_export("linalg.lu_reconstruct")
def lu_reconstruct(lower_upper, perm, validate_args: bool = False, name=None) -> Tensor:
    """`tf.linalg.lu_reconstruct`: A = P^-1 L U from A's `lu` and `p`."""
    with name_scope(name or "lu_reconstruct"):
        lower_upper, perm = _lu_operands(lower_upper, perm)
        x = matmul(_unit_lower(lower_upper), band_part(lower_upper, 0, -1))
        rank = lower_upper.shape.rank
        if rank == 2:
            return gather(x, invert_permutation(perm))
        if rank is None:
            raise NotImplementedError("lu_reconstruct needs `lower_upper` of known rank")
        inverse = argsort(perm, axis=-1)  # the inverse of each permutation
        return gather(x, inverse, axis=rank - 2, batch_dims=rank - 2)
