"""`tf.linalg.LinearOperatorBlockDiag`: the direct sum of operators, diag(A1, ..., An).

Block operators also take and give arguments blockwise: `matmul([x1, ..., xn])` returns
`[A1 x1, ..., An xn]` (the `BlockArgs` mixin, shared with
`LinearOperatorBlockLowerTriangular`)."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import dimension_value
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, group, shape, squeeze, stack
from ndflow.ops.array_fill import zeros
from ndflow.ops.array_slicing import concat
from ndflow.ops.linear_operator import base, util
from ndflow.ops.linear_operator.composition import (
    FactorwiseOperator,
    all_hints,
    batch_shape_of,
    batch_shape_tensor_of,
    checked_operators,
    product,
    total,
)

__all__ = ["LinearOperatorBlockDiag"]


def _check_agree(right, left, message):
    r, d = dimension_value(right.range_dimension), dimension_value(left.domain_dimension)
    if r is not None and d is not None and r != d:
        raise ValueError(message)


class BlockArgs:
    """Blockwise arguments of matmul/matvec/solve/solvevec for operators with diagonal
    blocks `_diagonal_operators`."""

    # the name of `solve`'s argument in its operator errors
    _solve_arg_name = "rhs"

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """`A x`; `x` a tensor, a list of one tensor per block (row), or an operator."""
        if isinstance(x, base.LinearOperator):
            left, right = self._operator_pair(x, adjoint, adjoint_arg, "x")
            self._check_block_pair(left, right, x, "matmul")
            with self._name_scope(name):
                return self._linop_matmul(left, right)
        with self._name_scope(name):
            x = self._block_matmul_args(x, adjoint, adjoint_arg)
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """X with `A X = rhs`; `rhs` a tensor, a list of one per block (row), or an
        operator."""
        self._check_solvable()
        if isinstance(rhs, base.LinearOperator):
            left, right = self._operator_pair(rhs, adjoint, adjoint_arg, self._solve_arg_name)
            self._check_block_pair(left, right, right, "solve")
            with self._name_scope(name):
                return self._linop_solve(left, right)
        with self._name_scope(name):
            dims = self._block_domain_dimensions() if adjoint else \
                self._block_range_dimensions()
            return self._solve_blocks(rhs, dims, -1 if adjoint_arg else -2, adjoint,
                                      adjoint_arg)

    def _check_block_pair(self, left, right, other, operation):
        """Raises where `left` and `right` (the operands of "matmul" or "solve") cannot go
        blockwise."""

    def _block_range_dimensions(self):
        return [op.range_dimension for op in self._diagonal_operators]

    def _block_domain_dimensions(self):
        return [op.domain_dimension for op in self._diagonal_operators]

    def _block_range_dimension_tensors(self):
        return [op.range_dimension_tensor() for op in self._diagonal_operators]

    def _block_domain_dimension_tensors(self):
        return [op.domain_dimension_tensor() for op in self._diagonal_operators]

    def _convert_blocks(self, blocks, block_dimensions, arg_dim):
        """The blocks converted and checked, in place (as TF's, which edits the list)."""
        for i, block in enumerate(blocks):
            if not isinstance(block, base.LinearOperator):
                block = convert_to_tensor(block)
                self._check_input_dtype(block)
                block_dimensions[i].assert_is_compatible_with(block.shape[arg_dim])
                blocks[i] = block
        return blocks

    def _convert_whole(self, x, name, op_dimension, arg_dim):
        x = convert_to_tensor(x, name=name)
        self._check_input_dtype(x)
        op_dimension.assert_is_compatible_with(x.shape[arg_dim])
        return x

    def _block_matmul_args(self, x, adjoint, adjoint_arg):
        arg_dim = -1 if adjoint_arg else -2
        dims = self._block_range_dimensions() if adjoint else self._block_domain_dimensions()
        if util.arg_is_blockwise(dims, x, arg_dim):
            return self._convert_blocks(x, dims, arg_dim)
        return self._convert_whole(x, "x", self.range_dimension if adjoint
                                   else self.domain_dimension, arg_dim)

    def matvec(self, x, adjoint=False, name="matvec"):
        with self._name_scope(name):
            dims = self._block_range_dimensions() if adjoint else \
                self._block_domain_dimensions()
            if util.arg_is_blockwise(dims, x, -1):
                x = self._convert_blocks(x, dims, -1)
                y = self.matmul([expand_dims(b, -1) for b in x], adjoint=adjoint)
                return [squeeze(b, -1) for b in y]
            x = self._convert_whole(x, "x", self.range_dimension if adjoint
                                    else self.domain_dimension, -1)
            return squeeze(self.matmul(expand_dims(x, -1), adjoint=adjoint), -1)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        with self._name_scope(name):
            dims = self._block_domain_dimensions() if adjoint else \
                self._block_range_dimensions()
            if util.arg_is_blockwise(dims, rhs, -1):
                rhs = self._convert_blocks(rhs, dims, -1)
                x = self.solve([expand_dims(b, -1) for b in rhs], adjoint=adjoint)
                return [squeeze(b, -1) for b in x]
            rhs = self._convert_whole(rhs, "rhs", self.domain_dimension if adjoint
                                      else self.range_dimension, -1)
            return squeeze(self.solve(expand_dims(rhs, -1), adjoint=adjoint), -1)

    def _block_shape(self, batch):
        domain = sum(self._block_domain_dimensions())
        rng = sum(self._block_range_dimensions())
        return batch, dimension_value(rng), dimension_value(domain)

    def _concat_rows(self, blocks):
        return concat(util.broadcast_matrix_batch_dims(blocks), axis=-2)

    def _concat_vectors(self, vectors):
        cols = util.broadcast_matrix_batch_dims([expand_dims(v, -1) for v in vectors])
        return squeeze(concat(cols, axis=-2), -1)


@tf_export("linalg.LinearOperatorBlockDiag")
@base.register("BlockDiag")
class LinearOperatorBlockDiag(BlockArgs, FactorwiseOperator):
    """diag(A1, ..., An) of operators (batch shapes broadcast; blocks may be non-square)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        parameters = base.constructor_parameters(locals())
        operators, dtype = checked_operators(operators)
        self._operators = operators
        self._diagonal_operators = operators
        hints = all_hints(operators, "The direct sum of {what} operators is always {what}.",
                          parameters)
        name = "_ds_".join(o.name for o in operators) if name is None else name
        self._init_from_parameters(dtype, parameters, name=name, **hints)

    def _shape(self):
        batch, rng, domain = self._block_shape(batch_shape_of(self.operators))
        return batch.concatenate(TensorShape([rng, domain]))

    def _shape_tensor(self):
        if self.shape.is_fully_defined():
            return convert_to_tensor(self.shape.as_list(), dtype=dtypes.int32, name="shape")
        matrix_shape = stack([sum(self._block_range_dimension_tensors()),
                              sum(self._block_domain_dimension_tensors())])
        return concat((batch_shape_tensor_of(self.operators), matrix_shape), 0)

    def _linop_matmul(self, left, right):
        if isinstance(right, LinearOperatorBlockDiag):
            return LinearOperatorBlockDiag(
                operators=[a.matmul(b) for a, b in zip(left.operators, right.operators)],
                is_non_singular=util.combined_non_singular_hint(left, right),
                is_self_adjoint=None, is_positive_definite=None, is_square=True)
        return super()._linop_matmul(left, right)

    def _linop_solve(self, left, right):
        if isinstance(right, LinearOperatorBlockDiag):
            return LinearOperatorBlockDiag(
                operators=[a.solve(b) for a, b in zip(left.operators, right.operators)],
                is_non_singular=util.combined_non_singular_hint(left, right),
                is_self_adjoint=None, is_positive_definite=None, is_square=True)
        return super()._linop_solve(left, right)

    _solve_arg_name = "x"   # (TF's words)

    def _check_block_pair(self, left, right, other, operation):
        verb = "multiply two `LinearOperatorBlockDiag`s together" if operation == "matmul" \
            else "solve `LinearOperatorBlockDiag`"
        if isinstance(other, LinearOperatorBlockDiag):
            if len(left.operators) != len(right.operators):
                raise ValueError(f"Can not efficiently {verb} when number of blocks differ.")
            for a, b in zip(left.operators, right.operators):
                _check_agree(b, a, f"Blocks are incompatible. Expected `x` to have dimension "
                                   f"{a.domain_dimension} but got {b.range_dimension}.")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        arg_dim = -1 if adjoint_arg else -2
        dims = self._block_range_dimensions() if adjoint else self._block_domain_dimensions()
        dims_fn = self._block_range_dimension_tensors if adjoint \
            else self._block_domain_dimension_tensors
        blockwise = util.arg_is_blockwise(dims, x, arg_dim)
        split_x = x if blockwise else util.split_arg_into_blocks(dims, dims_fn, x,
                                                                 axis=arg_dim)
        out = [o.matmul(b, adjoint=adjoint, adjoint_arg=adjoint_arg)
               for o, b in zip(self.operators, split_x)]
        return out if blockwise else self._concat_rows(out)

    def _solve_blocks(self, rhs, dims, arg_dim, adjoint, adjoint_arg):
        blockwise = util.arg_is_blockwise(dims, rhs, arg_dim)
        if blockwise:
            split_rhs = self._convert_blocks(rhs, dims, arg_dim)
        else:
            rhs = self._convert_whole(rhs, "rhs", self.domain_dimension if adjoint
                                      else self.range_dimension, arg_dim)
            split_rhs = util.split_arg_into_blocks(
                self._block_domain_dimensions(), self._block_domain_dimension_tensors,
                rhs, axis=arg_dim)
        out = [o.solve(b, adjoint=adjoint, adjoint_arg=adjoint_arg)
               for o, b in zip(self.operators, split_rhs)]
        return out if blockwise else self._concat_rows(out)

    def _determinant(self):
        return product([o.determinant() for o in self.operators])

    def _log_abs_determinant(self):
        return total([o.log_abs_determinant() for o in self.operators])

    def _require_square_blocks(self, what):
        if not all(o.is_square for o in self.operators):
            raise NotImplementedError(f"`{what}` not implemented for an operator whose blocks "
                                      f"are not square.")

    def _diag_part(self):
        self._require_square_blocks("diag_part")
        return self._concat_vectors([o.diag_part() for o in self.operators])

    def _trace(self):
        self._require_square_blocks("trace")
        return total([o.trace() for o in self.operators])

    def _to_dense(self):
        blocks = util.broadcast_matrix_batch_dims([o.to_dense() for o in self.operators])
        total = self.domain_dimension_tensor()
        rows, num_cols = [], 0
        for block in blocks:
            batch_row = shape(block)[:-1]
            before = zeros(concat([batch_row, [num_cols]], -1), dtype=block.dtype)
            num_cols = num_cols + shape(block)[-1]
            after = zeros(concat([batch_row, [total - num_cols]], -1), dtype=block.dtype)
            rows.append(concat([before, block, after], axis=-1))
        return concat(rows, axis=-2)

    def _assert_non_singular(self):
        return group([o.assert_non_singular() for o in self.operators])

    def _assert_self_adjoint(self):
        return group([o.assert_self_adjoint() for o in self.operators])

    def _assert_positive_definite(self):
        return group([o.assert_positive_definite() for o in self.operators])

    def _eigvals(self):
        self._require_square_blocks("eigvals")
        return self._concat_vectors([o.eigvals() for o in self.operators])
