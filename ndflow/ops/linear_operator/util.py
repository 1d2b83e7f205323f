"""Helpers shared by the `tf.linalg.LinearOperator` family (TF's `linear_operator_util.py`
and `property_hint_util.py`): argument conversion that keeps variables as they are, batch
broadcasting of matrices, the solve that broadcasts, how hints combine, and the blockwise
arguments of the block operators."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.dimension import dimension_value
from ndflow.core.scopes import control_dependencies
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.core.tensor import Tensor
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import identity, no_op, reshape, shape
from ndflow.ops.array_fill import broadcast_to
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_slicing import concat
from ndflow.ops.array_split import split
from ndflow.ops.array_transpose import transpose
from ndflow.ops.complex_ops import imag
from ndflow.ops.linalg_decomp import matrix_solve
from ndflow.ops.linalg_diag import adjoint as matrix_adjoint
from ndflow.ops.math import abs as math_abs
from ndflow.ops.module import Module
from ndflow.ops.variables import Variable

# -- arguments ------------------------------------------------------------------------------------

def is_ref(x) -> bool:
    """A variable (or a module that acts as one): kept as it is, read at each use."""
    return isinstance(x, Variable) or (
        isinstance(x, Module) and hasattr(x, "dtype") and hasattr(x, "shape"))


def convert_nonref_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """`value` as a tensor, a variable left as it is (its dtype checked against `dtype`)."""
    if value is None:
        return None
    if is_ref(value):
        if dtype is not None and dtypes.as_dtype(dtype).base_dtype != value.dtype.base_dtype:
            raise TypeError(f"Argument `value` must be of dtype `{dtypes.as_dtype(dtype).name}` "
                            f"Received: `{value.dtype.base_dtype.name}`.")
        return value
    return convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint, name=name)


def as_tensor(x):
    """A parameter (tensor or variable) as a tensor for computing with it."""
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def assert_not_ref_type(x, arg_name: str) -> None:
    if is_ref(x):
        raise TypeError(f"Argument {arg_name} cannot be reference type. Found: {type(x)}.")


def shape_tensor(shape_value, name=None):
    """A shape as an int tensor (int32 for an empty list, as TF's)."""
    if isinstance(shape_value, TensorShape):
        shape_value = shape_value.as_list()
    dtype = dtypes.int32 if isinstance(shape_value, (tuple, list)) and not shape_value \
        else None
    return convert_to_tensor(shape_value, dtype=dtype, name=name)


# -- runtime checks -------------------------------------------------------------------------------

def with_dependencies(deps, t):
    """`t`, after `deps` (eager asserts have already run)."""
    deps = [d for d in deps if d is not None]
    if not deps:
        return t
    with control_dependencies(deps):
        return identity(t)


def assert_no_entries_with_modulus_zero(x, message=None):
    x = as_tensor(x)
    zero = convert_to_tensor(0, dtype=x.dtype.real_dtype)
    return check_ops.assert_less(zero, math_abs(x), message=message)


def assert_zero_imag_part(x, message=None):
    x = as_tensor(x)
    if x.dtype.is_floating:
        return no_op()
    zero = convert_to_tensor(0, dtype=x.dtype.real_dtype)
    return check_ops.assert_equal(zero, imag(x), message=message)


def assert_compatible_matrix_dimensions(operator, x):
    return check_ops.assert_equal(shape(x)[-2], operator.domain_dimension_tensor(),
                                  message="Dimensions are not compatible.  shape[-2] of "
                                          "argument to be the same as this operator")


# -- broadcasting ---------------------------------------------------------------------------------

def assert_is_batch_matrix(x) -> None:
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"Expected [batch] matrix to have at least two dimensions. "
                         f"Found: {x}.")


def broadcast_matrix_batch_dims(batch_matrices):
    """The matrices with their batch dimensions broadcast against each other."""
    mats = [as_tensor(m) for m in batch_matrices]
    for m in mats:
        assert_is_batch_matrix(m)
    if len(mats) < 2:
        return mats
    batch = mats[0].shape[:-2]
    for m in mats[1:]:
        batch = broadcast_shapes(batch, m.shape[:-2])
    if batch.is_fully_defined():
        return [m if m.shape[:-2] == batch else
                broadcast_to(m, concat([batch.as_list(), shape(m)[-2:]], 0)) for m in mats]
    dyn = shape(mats[0])[:-2]
    for m in mats[1:]:
        dyn = broadcast_dynamic_shape(dyn, shape(m)[:-2])
    return [broadcast_to(m, concat([dyn, shape(m)[-2:]], 0)) for m in mats]


def matrix_solve_with_broadcast(matrix, rhs, adjoint: bool = False):
    """`matrix^{-1} rhs` (or `matrix^{-H} rhs`) with the batch dimensions broadcast. Extra
    leading dimensions of `rhs` become columns, so the matrix is never copied per batch."""
    matrix = as_tensor(matrix)
    rhs = convert_to_tensor(rhs, dtype=matrix.dtype)
    a_rank, b_rank = matrix.shape.rank, rhs.shape.rank
    extra = None if a_rank is None or b_rank is None else b_rank - a_rank
    if extra and extra > 0 and rhs.shape.is_fully_defined():
        head = rhs.shape.as_list()[:extra]
        main = rhs.shape.as_list()[extra:]
        if int(np.prod(head)) >= 2 and (matrix.shape[-1] or 0) > main[-1]:
            perm = list(range(extra, b_rank)) + list(range(extra))
            folded = reshape(transpose(rhs, perm), main[:-1] + [-1])
            matrix, folded = broadcast_matrix_batch_dims([matrix, folded])
            out = matrix_solve(matrix, folded, adjoint=adjoint)
            out = reshape(out, out.shape.as_list()[:-1] + [main[-1]] + head)
            return transpose(out, list(np.argsort(perm)))
    matrix, rhs = broadcast_matrix_batch_dims([matrix, rhs])
    return matrix_solve(matrix, rhs, adjoint=adjoint)


def adjoint_if(x, flag: bool):
    return matrix_adjoint(x) if flag else x


# -- hints ----------------------------------------------------------------------------------------

def combined_commuting_self_adjoint_hint(a, b):
    """A @ B of commuting operators: self-adjoint when both are."""
    if a.is_self_adjoint and b.is_self_adjoint:
        return True
    if (a.is_self_adjoint is True and b.is_self_adjoint is False) or \
            (a.is_self_adjoint is False and b.is_self_adjoint is True):
        return False
    return None


def is_square(a, b):
    """Whether A @ B is square, from the two hints."""
    if a.is_square and b.is_square:
        return True
    if a.is_square is False and b.is_square is False:
        m, n = a.range_dimension, b.domain_dimension
        if dimension_value(m) is not None and dimension_value(n) is not None:
            return m == n
    if a.is_square != b.is_square and a.is_square is not None and b.is_square is not None:
        return False
    return None


def combined_commuting_positive_definite_hint(a, b):
    if a.is_positive_definite is True and a.is_self_adjoint is True and \
            b.is_positive_definite is True and b.is_self_adjoint is True:
        return True
    return None


def combined_non_singular_hint(a, b):
    if a.is_non_singular is False or b.is_non_singular is False:
        return False
    return a.is_non_singular and b.is_non_singular


def use_operator_or_provided_hint_unless_contradicting(operator, hint_attr_name,
                                                       provided_hint_value, message):
    op_hint = getattr(operator, hint_attr_name)
    if (op_hint is False and provided_hint_value) or \
            (op_hint and provided_hint_value is False):
        raise ValueError(message)
    if op_hint or provided_hint_value:
        return True
    if op_hint is False or provided_hint_value is False:
        return False
    return None


def is_adjoint_pair(x, y) -> bool:
    if x is y:
        if x.is_self_adjoint is False:
            return False
        if x.is_self_adjoint:
            return True
    return x.H is y or y.H is x


def is_aat_form(operators) -> bool:
    """Whether the product has the form A1 ... An An^H ... A1^H."""
    operators = list(operators)
    if not operators:
        raise ValueError("AAT form is undefined for empty operators")
    if len(operators) % 2:
        return False
    return all(is_adjoint_pair(operators[i], operators[-1 - i])
               for i in range(len(operators) // 2))


# -- blockwise arguments --------------------------------------------------------------------------

def _is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def arg_is_blockwise(block_dimensions, arg, arg_split_dim) -> bool:
    """Whether `arg` is a list of one tensor per block rather than one tensor."""
    if not (isinstance(arg, (tuple, list)) and len(arg) == len(block_dimensions)):
        return False
    if not any(_is_nested(x) for x in arg):
        return True
    arg_dims = [as_tensor(x).shape[arg_split_dim] for x in arg]
    self_dims = [dimension_value(d) for d in block_dimensions]
    if all(d is None for d in self_dims):
        if len(arg_dims) == 1:
            return False
        if any(d != arg_dims[0] for d in arg_dims):
            return True
        raise ValueError("Parsing of the input structure is ambiguous. Please input a "
                         "blockwise iterable of `Tensor`s or a single `Tensor`.")
    if all(s == a or s is None for s, a in zip(self_dims, arg_dims)):
        return True
    total = sum(s for s in self_dims if s is not None)
    if all(a == arg_dims[0] for a in arg_dims) and arg_dims[0] >= total:
        return False
    raise ValueError("Input dimension does not match operator dimension.")


def split_arg_into_blocks(block_dims, block_dims_fn, arg, axis=-1):
    sizes = [dimension_value(d) for d in block_dims]
    if any(d is None for d in sizes):
        sizes = block_dims_fn()
    return split(arg, sizes, axis=axis)
