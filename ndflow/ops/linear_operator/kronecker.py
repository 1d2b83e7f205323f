"""`tf.linalg.LinearOperatorKronecker`: A1 (x) A2 (x) ... (x) An, applied factor by factor
(the vec trick: each factor multiplies, or solves, one axis of the reshaped argument), so
the product of the sizes is never materialized as a matrix."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import dimension_value
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops.apply import constant_value
from ndflow.ops.array_core import group, reshape, shape
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import conj
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.linear_operator import base
from ndflow.ops.linear_operator.composition import (
    FactorwiseOperator,
    all_hints,
    checked_operators,
    product,
)

__all__ = ["LinearOperatorKronecker"]


def _dims(x):
    """x's shape as a list of ints when fully known, else its shape tensor."""
    return x.shape.as_list() if x.shape.is_fully_defined() else shape(x)


def _with_matrix(batch, rows, cols):
    """batch + [rows, cols], static where everything is."""
    if isinstance(batch, list) and not any(hasattr(v, "dtype") for v in (rows, cols)):
        return batch + [rows, cols]
    return concat([batch, [rows, cols]], 0)


def _static_int(t):
    v = constant_value(t) if hasattr(t, "dtype") else t
    return None if v is None else int(v)


@tf_export("linalg.LinearOperatorKronecker")
@base.register("Kronecker")
class LinearOperatorKronecker(FactorwiseOperator):
    """The Kronecker product of `operators` (batch shapes broadcast)."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        parameters = base.constructor_parameters(locals())
        operators, dtype = checked_operators(
            operators, "Argument `operators` must be a list of >=1 operators. Received: {}.",
            lambda names: f"Expected every operation in argument `operators` to have the same "
            f"dtype. Received {names}.")
        self._operators = operators
        hints = all_hints(
            operators, "The Kronecker product of {what} operators is always {what}. Expected "
            "argument `{hint}` to be True. Received: {value}.", parameters,
            words=(("is_non_singular", "non-singular"), ("is_self_adjoint", "self-adjoint"),
                   ("is_positive_definite", "positive-definite")))
        name = "_x_".join(o.name for o in operators) if name is None else name
        self._init_from_parameters(dtype, parameters, name=name, **hints)

    def _shape(self):
        domain = self.operators[0].domain_dimension
        rng = self.operators[0].range_dimension
        batch = self.operators[0].batch_shape
        for o in self.operators[1:]:
            domain = domain * o.domain_dimension
            rng = rng * o.range_dimension
            batch = broadcast_shapes(batch, o.batch_shape)
        return batch.concatenate(TensorShape([dimension_value(rng),
                                              dimension_value(domain)]))

    def _shape_tensor(self):
        domain = self.operators[0].domain_dimension_tensor()
        rng = self.operators[0].range_dimension_tensor()
        batch = self.operators[0].batch_shape_tensor()
        for o in self.operators[1:]:
            domain = domain * o.domain_dimension_tensor()
            rng = rng * o.range_dimension_tensor()
            batch = broadcast_dynamic_shape(batch, o.batch_shape_tensor())
        return concat((batch, [rng, domain]), 0)

    def _apply(self, x, fn, adjoint=False, adjoint_arg=False):
        """(A1 (x) ... (x) An)^{(H)} x through `fn(factor, y)` = factor^{(H)} y^H.

        y starts as x^T ([..., R, N]); each factor, last first, takes y's last axis (its
        domain size) as the columns of y^H and puts its range first, so after all factors
        the rows are in the product's order."""
        complex_ = self.dtype.is_complex
        out = conj(x) if adjoint_arg and complex_ else x if adjoint_arg else \
            matrix_transpose(x)
        for o in reversed(self.operators):
            n = o.range_dimension_tensor() if adjoint else o.domain_dimension_tensor()
            n_static = _static_int(n)
            dims = _dims(out)
            if n_static is not None and isinstance(dims, list):
                rows = dims[-2] * dims[-1] // n_static
                out = reshape(out, _with_matrix(dims[:-2], rows, n_static))
            else:
                rows = cast(dims[-2] * dims[-1] // n, dtypes.int32)
                out = reshape(out, concat([dims[:-2], [rows, n]], 0))
            if complex_:
                out = conj(out)
            out = fn(o, out, adjoint)
        cols = _dims(x)[-2 if adjoint_arg else -1]
        rows = self.domain_dimension_tensor() if adjoint else self.range_dimension_tensor()
        rows_static = _static_int(rows)
        dims = _dims(out)
        if rows_static is not None and isinstance(dims, list) and not hasattr(cols, "dtype"):
            return reshape(out, dims[:-2] + [rows_static, cols])
        return reshape(out, concat([dims[:-2] if not isinstance(dims, list) else dims[:-2],
                                    [rows, cols]], 0))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply(x, lambda o, y, a: o.matmul(y, adjoint=a, adjoint_arg=True),
                           adjoint, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply(rhs, lambda o, y, a: o.solve(y, adjoint=a, adjoint_arg=True),
                           adjoint, adjoint_arg)

    def _determinant(self):
        total = self.domain_dimension_tensor()
        det = 1.0
        for o in self.operators:
            det = det * o.determinant() ** cast(total / o.domain_dimension_tensor(), o.dtype)
        return det

    def _log_abs_determinant(self):
        total = self.domain_dimension_tensor()
        result = 0.0
        for o in self.operators:
            result = result + o.log_abs_determinant() * cast(
                total / o.domain_dimension_tensor(), o.dtype)
        return result

    def _trace(self):
        return product([1.0] + [o.trace() for o in self.operators])

    def _outer_flat(self, parts):
        """The flattened outer product of the [batch] vectors `parts`."""
        result = parts[0]
        for p in parts[1:]:
            result = result[..., :, None] * p[..., None, :]
            result = reshape(result, concat([shape(result)[:-2], [-1]], 0))
        return result

    def _diag_part(self):
        return self._outer_flat([o.diag_part() for o in self.operators])

    def _to_dense(self):
        product = self.operators[0].to_dense()
        for o in self.operators[1:]:
            product = product[..., :, None, :, None] * o.to_dense()[..., None, :, None, :]
            s = shape(product)
            product = reshape(product, concat([s[:-4], [s[-4] * s[-3], s[-2] * s[-1]]], 0))
        if self.shape.is_fully_defined() and product.shape != self.shape:
            product = reshape(product, self.shape.as_list())
        return product

    def _eigvals(self):
        return self._outer_flat([o.eigvals() for o in self.operators])

    def _all_square_or_raise(self):
        if not all(o.is_square for o in self.operators):
            raise InvalidArgumentError(
                None, None, "All Kronecker factors must be square for the product to be "
                            "invertible. Expected hint `is_square` to be True for every "
                            "operator in argument `operators`.")

    def _assert_non_singular(self):
        self._all_square_or_raise()
        return group([o.assert_non_singular() for o in self.operators])

    def _assert_self_adjoint(self):
        self._all_square_or_raise()
        return group([o.assert_self_adjoint() for o in self.operators])
