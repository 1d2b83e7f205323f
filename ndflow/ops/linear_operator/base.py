"""`tf.linalg.LinearOperator`: a [batch of] matrices known by what they do (matmul, solve,
determinant, ...) rather than by their entries.

A subclass implements `_shape` (and `_shape_tensor` where its shape can be unknown
statically) and `_matmul`; every other method has a default built on them (`_to_dense` is
the operator applied to the identity, `_solve` a dense LU or Cholesky solve), which a
subclass overrides where its structure gives a cheaper answer. The public methods check
their arguments (dtype, compatible dimensions, the hints that rule a method out), open the
name scope `<operator name>/<method>` and call the underscore method, as TF's
`linear_operator.py` does.

Hints (`is_non_singular`, `is_self_adjoint`, `is_positive_definite`, `is_square`) are
promises, never checked at run time: True/False state the property, None says nothing; a
positive-definite operator is non-singular, and a non-singular or self-adjoint one square.

Operators of operators: `A.matmul(B)` / `A @ B` of two operators is an operator (a
`LinearOperatorComposition`, or a structured type where the pair allows: Diag @ Diag is a
Diag), `A.solve(B)` one too, `A.adjoint()` / `A.H`, `A.inverse()` and `A.cholesky()` are
operators. Those classes live in other modules of this package and register themselves in
`CLASSES`, which the defaults here look them up in.

An operator is a composite tensor (`tf.nest.flatten(op, expand_composites=True)` lists its
tensors, a `tf.function` takes and returns operators) and a `tf.Module` (its variables).
"""

from __future__ import annotations

import abc
import contextlib

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.dimension import Dimension, dimension_at_index, dimension_value
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import check_ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import log
from ndflow.ops.array_builders import eye
from ndflow.ops.array_core import expand_dims, size, squeeze
from ndflow.ops.cast import cast
from ndflow.ops.linalg import matmul as tf_matmul
from ndflow.ops.linalg_decomp import (
    cholesky as tf_cholesky,
)
from ndflow.ops.linalg_decomp import (
    cholesky_solve,
    log_matrix_determinant,
    matrix_determinant,
    self_adjoint_eigvals,
    svd,
)
from ndflow.ops.linalg_diag import adjoint as matrix_adjoint
from ndflow.ops.linalg_diag import matrix_diag_part
from ndflow.ops.linear_operator import composite, util
from ndflow.ops.math import abs as math_abs
from ndflow.ops.math import exp
from ndflow.ops.module import Module
from ndflow.ops.reduction import reduce_max, reduce_min, reduce_sum

__all__ = ["LinearOperator", "CLASSES"]

# Operator classes the defaults build (Composition, Adjoint, Inversion, LowerTriangular),
# registered by their modules.
CLASSES: dict[str, type] = {}


def constructor_parameters(arguments: dict) -> dict:
    """An operator's `parameters`, every argument of its constructor (as TF records them):
    `arguments` is `locals()` taken first thing in `__init__`; `self` is left out."""
    return {k: v for k, v in arguments.items() if k not in ("self", "__class__")}


def register(name: str):
    """Class decorator: an operator class the defaults may build, and a composite tensor."""
    def decorate(cls):
        CLASSES[name] = cls
        return composite.make_composite_tensor(cls)
    return decorate


@tf_export("linalg.LinearOperator")
class LinearOperator(Module, composite.CompositeOperator, metaclass=abc.ABCMeta):
    """Base class of a [batch of] linear operators (see the module docstring)."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None, parameters=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._is_square_set_or_implied_by_hints = is_square
        self._graph_parents = []
        if graph_parents is not None:
            self._set_graph_parents(graph_parents)
        self._dtype = dtypes.as_dtype(dtype).base_dtype if dtype else dtype
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._parameters = dict(parameters) if parameters is not None else {}
        self._name = name or type(self).__name__

    def _init_from_parameters(self, dtype, parameters: dict, **overrides) -> None:
        """`LinearOperator.__init__` with the hints and name the constructor was given (its
        `parameters`), but for the `overrides` (what the structure implies, a derived name)."""
        given = {k: parameters[k] for k in ("is_non_singular", "is_self_adjoint",
                                            "is_positive_definite", "is_square", "name")}
        LinearOperator.__init__(self, dtype=dtype, parameters=parameters,
                                **{**given, **overrides})

    def _set_graph_parents(self, graph_parents):
        for i, t in enumerate(graph_parents):
            if t is None or not (util.is_ref(t) or isinstance(t, Tensor)):
                raise ValueError(f"Graph parent item {i} is not a Tensor; {t}.")
        self._graph_parents = list(graph_parents)

    @contextlib.contextmanager
    def _name_scope(self, name=None):
        full = self.name if name is None else f"{self.name}/{name}"
        with name_scope(full) as scope:
            yield scope

    # -- properties -------------------------------------------------------------------------

    @property
    def parameters(self) -> dict:
        """The arguments this operator was built with."""
        return dict(self._parameters)

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def graph_parents(self) -> list:
        return self._graph_parents

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        """Whether the operator is square: the hint, else its static dimensions."""
        auto = self.domain_dimension == self.range_dimension
        if self._is_square_set_or_implied_by_hints is False and auto:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        if self._is_square_set_or_implied_by_hints is None:
            return auto
        return self._is_square_set_or_implied_by_hints

    # -- shapes -----------------------------------------------------------------------------

    @abc.abstractmethod
    def _shape(self) -> TensorShape:
        raise NotImplementedError("_shape is not implemented.")

    @property
    def shape(self) -> TensorShape:
        """The static `TensorShape` [B1,...,Bb, M, N]."""
        return self._shape()

    def _shape_tensor(self):
        raise NotImplementedError("_shape_tensor is not implemented.")

    def shape_tensor(self, name="shape_tensor"):
        """The shape [B1,...,Bb, M, N] as an int32 tensor, known at run time."""
        with self._name_scope(name):
            if self.shape.is_fully_defined():
                return util.shape_tensor(self.shape.as_list())
            return self._shape_tensor()

    @property
    def batch_shape(self) -> TensorShape:
        return self.shape[:-2]

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            return self._batch_shape_tensor()

    def _batch_shape_tensor(self, shape=None):
        if self.batch_shape.is_fully_defined():
            return util.shape_tensor(self.batch_shape.as_list(), name="batch_shape")
        shape = self.shape_tensor() if shape is None else shape
        return shape[:-2]

    @property
    def tensor_rank(self):
        """b + 2 for a batch shape of rank b (None when unknown)."""
        return self.shape.ndims

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        with self._name_scope(name):
            return self._tensor_rank_tensor()

    def _tensor_rank_tensor(self, shape=None):
        if self.tensor_rank is not None:
            return convert_to_tensor(self.tensor_rank)
        shape = self.shape_tensor() if shape is None else shape
        return size(shape)

    @property
    def domain_dimension(self) -> Dimension:
        """N, the number of columns, as a `Dimension`."""
        if self.shape.rank is None:
            return Dimension(None)
        return Dimension(self.shape[-1])

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        with self._name_scope(name):
            return self._domain_dimension_tensor()

    def _domain_dimension_tensor(self, shape=None):
        value = dimension_value(self.domain_dimension)
        if value is not None:
            return convert_to_tensor(value)
        shape = self.shape_tensor() if shape is None else shape
        return shape[-1]

    @property
    def range_dimension(self) -> Dimension:
        """M, the number of rows, as a `Dimension`."""
        if self.shape.rank:
            return Dimension(self.shape[-2])
        return Dimension(None)

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        with self._name_scope(name):
            return self._range_dimension_tensor()

    def _range_dimension_tensor(self, shape=None):
        value = dimension_value(self.range_dimension)
        if value is not None:
            return convert_to_tensor(value)
        shape = self.shape_tensor() if shape is None else shape
        return shape[-2]

    # -- asserts ----------------------------------------------------------------------------

    def _max_condition_number_to_be_non_singular(self):
        eps = np.finfo(self.dtype.as_numpy_dtype).eps
        n = max(100.0, float(dimension_value(self.range_dimension) or 0),
                float(dimension_value(self.domain_dimension) or 0))
        return convert_to_tensor(1.0 / (n * eps), dtype=self.dtype)

    def _assert_non_singular(self):
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        singular_values = svd(self.to_dense(), compute_uv=False)
        cond = reduce_max(singular_values, axis=-1) / reduce_min(singular_values, axis=-1)
        # (TF compares in the operator's dtype, which fails for complex operators)
        return check_ops.assert_less(cast(cond, self.dtype),
                                     self._max_condition_number_to_be_non_singular(),
                                     message="Singular matrix up to precision epsilon.")

    def assert_non_singular(self, name="assert_non_singular"):
        """An op that raises (at run time) unless the operator is non-singular."""
        with self._name_scope(name):
            return self._assert_non_singular()

    def _assert_positive_definite(self):
        if self.is_self_adjoint:
            return check_ops.assert_positive(
                matrix_diag_part(tf_cholesky(self.to_dense())),
                message="Matrix was not positive definite.")
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_positive_definite(self, name="assert_positive_definite"):
        with self._name_scope(name):
            return self._assert_positive_definite()

    def _assert_self_adjoint(self):
        dense = self.to_dense()
        return check_ops.assert_equal(dense, matrix_adjoint(dense),
                                      message="Matrix was not equal to its adjoint.")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        with self._name_scope(name):
            return self._assert_self_adjoint()

    # -- matmul -----------------------------------------------------------------------------

    def _check_input_dtype(self, arg):
        if arg.dtype.base_dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype}.  Found: "
                            f"{arg.dtype} in tensor {arg}")

    def _convert_arg(self, x, name):
        x = convert_to_tensor(x, name=name) if not isinstance(x, Tensor) else x
        self._check_input_dtype(x)
        return x

    @abc.abstractmethod
    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        raise NotImplementedError("_matmul is not implemented.")

    def _operator_pair(self, other, adjoint, adjoint_arg, what):
        left = self.adjoint() if adjoint else self
        right = other.adjoint() if adjoint_arg else other
        r, d = dimension_value(right.range_dimension), dimension_value(left.domain_dimension)
        if r is not None and d is not None and r != d:
            raise ValueError(f"Operators are incompatible. Expected `{what}` to have "
                             f"dimension {left.domain_dimension} but got "
                             f"{right.range_dimension}.")
        return left, right

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """`A x` (A^H with `adjoint`, x^H with `adjoint_arg`); `x` a [batch] matrix
        [..., N, R] or an operator (then the product is an operator)."""
        if isinstance(x, LinearOperator):
            left, right = self._operator_pair(x, adjoint, adjoint_arg, "x")
            with self._name_scope(name):
                return self._linop_matmul(left, right)
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            dimension_at_index(self.shape, -2 if adjoint else -1).assert_is_compatible_with(
                x.shape[-1 if adjoint_arg else -2])
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_matmul(self, left, right):
        if hasattr(right, "_ones_diag") and not hasattr(right, "multiplier"):
            return left   # right is the identity
        if hasattr(right, "_zeros_diag"):
            if not right.is_square or not left.is_square:
                raise ValueError("Matmul with non-square `LinearOperator`s or non-square "
                                 "`LinearOperatorZeros` not supported at this time.")
            return right
        hints = _product_hints(left, right)
        return CLASSES["Composition"](operators=[left, right], **hints)

    def __matmul__(self, other):
        return self.matmul(other)

    def _matvec(self, x, adjoint=False):
        return squeeze(self.matmul(expand_dims(x, -1), adjoint=adjoint), -1)

    def matvec(self, x, adjoint=False, name="matvec"):
        """`A x` for a [batch] vector x [..., N]."""
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            dimension_at_index(self.shape, -2 if adjoint else -1).assert_is_compatible_with(
                x.shape[-1])
            return self._matvec(x, adjoint=adjoint)

    # -- determinants -----------------------------------------------------------------------

    def _determinant(self):
        if self._can_use_cholesky():
            return exp(self.log_abs_determinant())
        return matrix_determinant(self.to_dense())

    def determinant(self, name="det"):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._name_scope(name):
            return self._determinant()

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            diag = matrix_diag_part(tf_cholesky(self.to_dense()))
            return 2 * reduce_sum(log(diag), axis=[-1])
        _, log_abs_det = log_matrix_determinant(self.to_dense())
        return log_abs_det

    def log_abs_determinant(self, name="log_abs_det"):
        if self.is_square is False:
            raise NotImplementedError("Determinant not implemented for an operator that is "
                                      "expected to not be square.")
        with self._name_scope(name):
            return self._log_abs_determinant()

    # -- solve ------------------------------------------------------------------------------

    def _dense_solve(self, rhs, adjoint=False, adjoint_arg=False):
        if self.is_square is False:
            raise NotImplementedError("Solve is not yet implemented for non-square operators.")
        rhs = util.adjoint_if(rhs, adjoint_arg)
        if self._can_use_cholesky():
            return cholesky_solve(tf_cholesky(self.to_dense()), rhs)
        return util.matrix_solve_with_broadcast(self.to_dense(), rhs, adjoint=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _check_solvable(self):
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to not be square.")

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """X with `A X = rhs` (A^H with `adjoint`, rhs^H with `adjoint_arg`); `rhs` a
        [batch] matrix or an operator (then X is an operator)."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left, right = self._operator_pair(rhs, adjoint, adjoint_arg, "rhs")
            with self._name_scope(name):
                return self._linop_solve(left, right)
        with self._name_scope(name):
            rhs = self._convert_arg(rhs, "rhs")
            dimension_at_index(self.shape, -1 if adjoint else -2).assert_is_compatible_with(
                rhs.shape[-1 if adjoint_arg else -2])
            return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _linop_solve(self, left, right):
        if hasattr(right, "_ones_diag") and not hasattr(right, "multiplier"):
            return left.inverse()
        hints = _product_hints(left, right)
        return CLASSES["Composition"](
            operators=[CLASSES["Inversion"](left), right], **hints)

    def _solvevec(self, rhs, adjoint=False):
        return squeeze(self.solve(expand_dims(rhs, -1), adjoint=adjoint), -1)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """x with `A x = rhs` for a [batch] vector rhs [..., M]."""
        with self._name_scope(name):
            rhs = self._convert_arg(rhs, "rhs")
            dimension_at_index(self.shape, -1 if adjoint else -2).assert_is_compatible_with(
                rhs.shape[-1])
            return self._solvevec(rhs, adjoint=adjoint)

    # -- derived operators ------------------------------------------------------------------

    def adjoint(self, name="adjoint"):
        """The adjoint A^H as an operator (this one when it is self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        with self._name_scope(name):
            return self._linop_adjoint()

    H = property(adjoint, None)

    def _linop_adjoint(self):
        return CLASSES["Adjoint"](self, is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite,
                                  is_square=self.is_square)

    def inverse(self, name="inverse"):
        """A^{-1} as an operator."""
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square "
                             "matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular "
                             "matrix.")
        with self._name_scope(name):
            return self._linop_inverse()

    def _linop_inverse(self):
        return CLASSES["Inversion"](self, is_non_singular=self.is_non_singular,
                                    is_self_adjoint=self.is_self_adjoint,
                                    is_positive_definite=self.is_positive_definite,
                                    is_square=self.is_square)

    def cholesky(self, name="cholesky"):
        """The lower-triangular L with A = L L^H, as an operator."""
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive definite "
                             "self adjoint matrix.")
        with self._name_scope(name):
            return self._linop_cholesky()

    def _linop_cholesky(self):
        return CLASSES["LowerTriangular"](tf_cholesky(self.to_dense()), is_non_singular=True,
                                          is_self_adjoint=False, is_square=True)

    # -- dense views ------------------------------------------------------------------------

    def _to_dense(self):
        batch = self.batch_shape
        batch = batch.as_list() if batch.is_fully_defined() else self.batch_shape_tensor()
        n = dimension_value(self.domain_dimension)
        if n is None:
            n = self.domain_dimension_tensor()
        return self.matmul(eye(num_rows=n, batch_shape=batch, dtype=self.dtype))

    def to_dense(self, name="to_dense"):
        """The matrix [B1,...,Bb, M, N] as a tensor."""
        with self._name_scope(name):
            return self._to_dense()

    def _diag_part(self):
        return matrix_diag_part(self.to_dense())

    def diag_part(self, name="diag_part"):
        with self._name_scope(name):
            return self._diag_part()

    def _trace(self):
        return reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name="trace"):
        with self._name_scope(name):
            return self._trace()

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def add_to_tensor(self, x, name="add_to_tensor"):
        """`A + x` for a [batch] matrix x."""
        with self._name_scope(name):
            x = self._convert_arg(x, "x")
            return self._add_to_tensor(x)

    def _eigvals(self):
        return self_adjoint_eigvals(self.to_dense())

    def eigvals(self, name="eigvals"):
        """The eigenvalues (self-adjoint operators only)."""
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        with self._name_scope(name):
            return self._eigvals()

    def _cond(self):
        if not self.is_self_adjoint:
            vals = svd(self.to_dense(), compute_uv=False)
        else:
            vals = math_abs(self._eigvals())
        return reduce_max(vals, axis=-1) / reduce_min(vals, axis=-1)

    def cond(self, name="cond"):
        """The condition number (largest over smallest singular value)."""
        with self._name_scope(name):
            return self._cond()

    def _can_use_cholesky(self):
        return self.is_self_adjoint and self.is_positive_definite

    # -- slicing ----------------------------------------------------------------------------

    def __getitem__(self, slices):
        return CLASSES["batch_slice"](self, {}, slices)

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        """Parameter name -> how many trailing dimensions of it are not batch dimensions
        (what batch slicing slices). A subclass that slices defines it (the base's empty
        tuple fails slicing as TF's does)."""
        return ()


def _product_hints(left, right) -> dict:
    """The hints of the composition left @ right (TF's default product hints)."""
    square = util.is_square(left, right)
    hints = dict(is_non_singular=None, is_self_adjoint=None, is_positive_definite=None,
                 is_square=square)
    if square:
        hints["is_non_singular"] = util.combined_non_singular_hint(left, right)
    elif square is False:
        hints.update(is_non_singular=False, is_self_adjoint=False, is_positive_definite=False)
    return hints


def matmul(a, b, adjoint_a=False, adjoint_b=False):
    return tf_matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
