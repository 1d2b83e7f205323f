"""`tf.linalg.LinearOperatorBlockLowerTriangular`: a square block lower-triangular operator
given by its rows of blocks, `[[A11], [A21, A22], ..., [An1, ..., Ann]]`; matmul row by
row, solve by forward (backward for the adjoint) substitution, determinants from the
diagonal blocks. Its inverse is block lower-triangular too, its blocks summed by
`add_operators` (TF's `linear_operator_addition`: Identity + ScaledIdentity stays scaled,
diagonals stay diagonal, triangles triangular, anything else a full matrix)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import dimension_value
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import group, shape, stack
from ndflow.ops.array_fill import ones, zeros
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.linalg_diag import adjoint as matrix_adjoint
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.block_diag import BlockArgs
from ndflow.ops.linear_operator.composition import OperatorsOperator, product, total
from ndflow.ops.linear_operator.diag import LinearOperatorDiag
from ndflow.ops.linear_operator.full_matrix import (
    LinearOperatorFullMatrix,
    LinearOperatorLowerTriangular,
)
from ndflow.ops.linear_operator.identity import (
    LinearOperatorIdentity,
    LinearOperatorScaledIdentity,
)
from ndflow.ops.math import exp

__all__ = ["LinearOperatorBlockLowerTriangular", "add_operators"]

# -- sums of operators (TF's linear_operator_addition) --------------------------------------------

_SUPPORTED = (LinearOperatorDiag, LinearOperatorLowerTriangular, LinearOperatorFullMatrix,
              LinearOperatorIdentity, LinearOperatorScaledIdentity)
_IDENTITY_FAMILY = (LinearOperatorIdentity, LinearOperatorScaledIdentity)
_DIAG_LIKE = (LinearOperatorDiag,) + _IDENTITY_FAMILY


def _sum_hints(op1, op2) -> dict:
    is_self_adjoint = op1.is_self_adjoint and op2.is_self_adjoint
    is_positive_definite = op1.is_positive_definite and op2.is_positive_definite
    return dict(is_non_singular=True if is_positive_definite else None,
                is_self_adjoint=is_self_adjoint, is_positive_definite=is_positive_definite)


def _multiplier(op):
    if isinstance(op, LinearOperatorScaledIdentity):
        return op.multiplier
    return ones(op.batch_shape_tensor(), dtype=op.dtype)


def _add_dense(op1, op2, cls, name, hints):
    first, other = (op1, op2) if isinstance(op1, _DIAG_LIKE) else (op2, op1)
    return cls(first.add_to_tensor(other.to_dense()), name=name, **hints)


# (can the pair be added at this tier, how) per tier, tried in order.
_TIERS = [
    (lambda a, b: isinstance(a, _IDENTITY_FAMILY) and isinstance(b, _IDENTITY_FAMILY),
     lambda a, b, name, hints: LinearOperatorScaledIdentity(
         num_rows=a.range_dimension_tensor(), multiplier=_multiplier(a) + _multiplier(b),
         name=name, **hints)),
    (lambda a, b: isinstance(a, _DIAG_LIKE) and isinstance(b, _DIAG_LIKE),
     lambda a, b, name, hints: LinearOperatorDiag(diag=a.diag_part() + b.diag_part(),
                                                  name=name, **hints)),
    (lambda a, b: all(isinstance(o, _DIAG_LIKE + (LinearOperatorLowerTriangular,))
                      for o in (a, b)),
     lambda a, b, name, hints: _add_dense(a, b, LinearOperatorLowerTriangular, name, hints)),
    (lambda a, b: True,
     lambda a, b, name, hints: _add_dense(a, b, LinearOperatorFullMatrix, name, hints)),
]


def add_operators(operators, operator_name=None):
    """The sum of `operators` as few operators as the tiers allow (one, with the default
    tiers, whose last adds anything as a full matrix)."""
    check_ops.assert_proper_iterable(operators)
    operators = list(reversed(operators))
    if not operators:
        raise ValueError(f"Argument `operators` must contain at least one operator. "
                         f"Received: {operators}.")
    if not all(isinstance(o, base.LinearOperator) for o in operators):
        raise TypeError(f"Argument `operators` must contain only LinearOperator instances. "
                        f"Received: {operators}.")
    for attr, label in (("domain_dimension", "All `operators` must have the same "
                                             "`domain_dimension`"),
                        ("range_dimension", "All operators must have the same "
                                            "`range_dimension`")):
        dims = [(o.name, dimension_value(getattr(o, attr))) for o in operators
                if dimension_value(getattr(o, attr)) is not None]
        if len({d for _, d in dims}) > 1:
            raise ValueError(f"{label}. Received: {dims}.")
    batch = operators[0].batch_shape
    for o in operators[1:]:
        batch = broadcast_shapes(batch, o.batch_shape)
    pending = operators
    for can_add, add in _TIERS:
        here, pending = pending, []
        while here:
            op1 = here.pop()
            for i in range(1, len(here) + 1):
                if can_add(op1, here[-i]):
                    op2 = here.pop(-i)
                    name = operator_name or f"Add/{op1.name}__{op2.name}/"
                    here.append(add(op1, op2, name, _sum_hints(op1, op2)))
                    break
            else:
                pending.append(op1)
    return pending


@tf_export("linalg.LinearOperatorBlockLowerTriangular")
@base.register("BlockLowerTriangular")
class LinearOperatorBlockLowerTriangular(BlockArgs, OperatorsOperator):
    """Rows of blocks, row i holding i + 1 operators; the last of each row is a (square)
    diagonal block."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorBlockLowerTriangular"):
        parameters = base.constructor_parameters(locals())
        check_ops.assert_proper_iterable(operators)
        for row in operators:
            check_ops.assert_proper_iterable(row)
        operators = [list(row) for row in operators]
        if not operators:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. "
                             f"Received: {operators}.")
        self._operators = operators
        self._diagonal_operators = [row[-1] for row in operators]
        dtype = operators[0][0].dtype
        for i, row in enumerate(operators):
            for o in row:
                if o.dtype != dtype:
                    names = (str((x.name, x.dtype)) for x in row)
                    raise TypeError(f"Expected all operators to have the same dtype.  Found "
                                    f"{names} in row {i} and {dtype} in row 0.")
        is_non_singular = self._validate_non_singular(is_non_singular)
        for i, row in enumerate(operators):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` blocks. "
                                 f"Received: {len(row)} blocks.")
        self._validate_operator_dimensions()
        if is_square is False:
            raise ValueError(f"`LinearOperatorBlockLowerTriangular` must be square. Expected "
                             f"argument `is_square` to be True. Received: {is_square}.")
        for i, o in enumerate(self._diagonal_operators):
            if o.is_square is False:
                raise ValueError(
                    f"Matrices on the diagonal (the final elements of each row-partition in "
                    f"the `operators` list) must be square. Expected argument "
                    f"`operators[{i}][-1].is_square` to be True. Received: {o.is_square}.")
        self._init_from_parameters(dtype, parameters, is_non_singular=is_non_singular,
                                   is_square=True)

    def _validate_operator_dimensions(self):
        ops = self.operators
        for i in range(1, len(ops)):
            for j in range(i):
                op, above, right = ops[i][j], ops[i - 1][j], ops[i][j + 1]
                d, d_above = (dimension_value(o.domain_dimension) for o in (op, above))
                if d is not None and d_above is not None and d != d_above:
                    raise ValueError(
                        f"Argument `operators[{i}][{j}].domain_dimension` "
                        f"({op.domain_dimension}) must be the same as "
                        f"`operators[{i - 1}][{j}].domain_dimension` "
                        f"({above.domain_dimension}).")
                r, r_right = (dimension_value(o.range_dimension) for o in (op, right))
                if r is not None and r_right is not None and r != r_right:
                    raise ValueError(
                        f"Argument `operators[{i}][{j}].range_dimension` "
                        f"({op.range_dimension}) must be the same as "
                        f"`operators[{i}][{j + 1}].range_dimension` ({right.range_dimension}).")

    def _validate_non_singular(self, is_non_singular):
        if all(o.is_non_singular for o in self._diagonal_operators):
            if is_non_singular is False:
                raise ValueError(
                    f"A blockwise lower-triangular operator with non-singular operators on "
                    f"the main diagonal is always non-singular. Expected argument "
                    f"`is_non_singular` to be True. Received: {is_non_singular}.")
            return True
        if any(o.is_non_singular is False for o in self._diagonal_operators):
            if is_non_singular is True:
                raise ValueError(
                    f"A blockwise lower-triangular operator with a singular operator on the "
                    f"main diagonal is always singular. Expected argument `is_non_singular` "
                    f"to be True. Received: {is_non_singular}.")
            return False
        return None

    def _all_operators(self):
        return [o for row in self.operators for o in row]

    def _shape(self):
        # TF lists the domain before the range here; the operator is square, so equal.
        domain = sum(self._block_domain_dimensions())
        rng = sum(self._block_range_dimensions())
        batch = self.operators[0][0].batch_shape
        for o in self._all_operators()[1:]:
            batch = broadcast_shapes(batch, o.batch_shape)
        return batch.concatenate(TensorShape([dimension_value(domain),
                                              dimension_value(rng)]))

    def _shape_tensor(self):
        if self.shape.is_fully_defined():
            return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32, name="shape")
        matrix_shape = stack([sum(self._block_domain_dimension_tensors()),
                              sum(self._block_range_dimension_tensors())])
        batch = self.operators[0][0].batch_shape_tensor()
        for o in self._all_operators()[1:]:
            batch = broadcast_dynamic_shape(batch, o.batch_shape_tensor())
        return concat((batch, matrix_shape), 0)

    def _linop_inverse(self):
        """Blockwise: [[A, 0], [C, D]]^{-1} = [[A^{-1}, 0], [-D^{-1} C A^{-1}, D^{-1}]],
        recursively on the leading rows."""
        hints = dict(is_non_singular=self.is_non_singular,
                     is_self_adjoint=self.is_self_adjoint,
                     is_positive_definite=self.is_positive_definite, is_square=True)
        if len(self.operators) == 1:
            return LinearOperatorBlockLowerTriangular([[self.operators[0][0].inverse()]],
                                                      **hints)
        n = len(self.operators)
        upper_left_inverse = LinearOperatorBlockLowerTriangular(self.operators[:-1]).inverse()
        bottom_row = self.operators[-1]
        bottom_right_inverse = bottom_row[-1].inverse()
        inverse_bottom_row = []
        for i in range(n - 1):
            blocks = []
            for j in range(i, n - 1):
                result = bottom_row[j].matmul(upper_left_inverse.operators[j][i])
                if not isinstance(result, _SUPPORTED):
                    result = LinearOperatorFullMatrix(result.to_dense())
                blocks.append(result)
            summed = add_operators(blocks)
            assert len(summed) == 1
            block = bottom_right_inverse.matmul(summed[0])
            block = LinearOperatorScaledIdentity(
                num_rows=bottom_right_inverse.domain_dimension_tensor(),
                multiplier=cast(-1, dtype=block.dtype)).matmul(block)
            inverse_bottom_row.append(block)
        inverse_bottom_row.append(bottom_right_inverse)
        return LinearOperatorBlockLowerTriangular(
            upper_left_inverse.operators + [inverse_bottom_row], **hints)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        arg_dim = -1 if adjoint_arg else -2
        dims = self._block_range_dimensions() if adjoint else self._block_domain_dimensions()
        blockwise = util.arg_is_blockwise(dims, x, arg_dim)
        split_x = x if blockwise else util.split_arg_into_blocks(
            self._block_domain_dimensions(), self._block_domain_dimension_tensors, x,
            axis=arg_dim)
        ops, out = self.operators, []
        if adjoint:   # column `index` of the blocks, adjointed
            for index in range(len(ops)):
                result = ops[index][index].matmul(split_x[index], adjoint=True,
                                                  adjoint_arg=adjoint_arg)
                for j in range(index + 1, len(ops)):
                    result = result + ops[j][index].matmul(split_x[j], adjoint=True,
                                                           adjoint_arg=adjoint_arg)
                out.append(result)
        else:
            for row in ops:
                result = row[0].matmul(split_x[0], adjoint_arg=adjoint_arg)
                for j, o in enumerate(row[1:]):
                    result = result + o.matmul(split_x[j + 1], adjoint_arg=adjoint_arg)
                out.append(result)
        return out if blockwise else self._concat_rows(out)

    def _determinant(self):
        if all(o.is_positive_definite for o in self._diagonal_operators):
            return exp(self._log_abs_determinant())
        return product([o.determinant() for o in self._diagonal_operators])

    def _log_abs_determinant(self):
        return total([o.log_abs_determinant() for o in self._diagonal_operators])

    def _solve_blocks(self, rhs, dims, arg_dim, adjoint, adjoint_arg):
        """By block substitution."""
        blockwise = util.arg_is_blockwise(dims, rhs, arg_dim)
        if blockwise:
            rhs = self._convert_blocks(rhs, dims, arg_dim)
            split_rhs = [matrix_adjoint(y) for y in rhs] if adjoint_arg else rhs
        else:
            rhs = self._convert_whole(rhs, "rhs", self.domain_dimension if adjoint
                                      else self.range_dimension, arg_dim)
            rhs = util.adjoint_if(rhs, adjoint_arg)
            split_rhs = util.split_arg_into_blocks(
                self._block_domain_dimensions(), self._block_domain_dimension_tensors,
                rhs, axis=-2)
        ops, n = self.operators, len(self.operators)
        solution = []
        if adjoint:
            for index in reversed(range(n)):
                y = split_rhs[index]
                for j in reversed(range(index + 1, n)):
                    y = y - ops[j][index].matmul(solution[n - 1 - j], adjoint=True)
                solution.append(self._diagonal_operators[index].solve(y, adjoint=True))
            solution.reverse()
        else:
            for row, y in zip(ops, split_rhs):
                for i, o in enumerate(row[:-1]):
                    y = y - o.matmul(solution[i])
                solution.append(row[-1].solve(y))
        return solution if blockwise else self._concat_rows(solution)

    def _diag_part(self):
        return self._concat_vectors([o.diag_part() for o in self._diagonal_operators])

    def _trace(self):
        return total([o.trace() for o in self._diagonal_operators])

    def _to_dense(self):
        flat = util.broadcast_matrix_batch_dims([o.to_dense() for o in self._all_operators()])
        total = self.domain_dimension_tensor()
        rows, num_cols = [], 0
        for i in range(len(self.operators)):
            blocks = flat[i * (i + 1) // 2:(i + 1) * (i + 2) // 2]
            batch_row = shape(blocks[0])[:-1]
            num_cols = num_cols + shape(blocks[-1])[-1]
            blocks.append(zeros(concat([batch_row, [total - num_cols]], -1), dtype=self.dtype))
            rows.append(concat(blocks, axis=-1))
        return concat(rows, axis=-2)

    def _assert_non_singular(self):
        return group([o.assert_non_singular() for o in self._diagonal_operators])

    def _eigvals(self):
        return self._concat_vectors([o.eigvals() for o in self._diagonal_operators])

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"operators": [[0] * len(row) for row in self.operators]}
