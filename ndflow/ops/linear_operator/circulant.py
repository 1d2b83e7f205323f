"""`tf.linalg.LinearOperatorCirculant` (and its 2-D and 3-D block forms) and
`tf.linalg.LinearOperatorToeplitz`.

A circulant operator is given by its `spectrum` H = DFT(h) of its convolution kernel h:
A x = IDFT(H * DFT(x)), so matmul and solve are FFTs (O(N log N) per column) and the
eigenvalues are the spectrum. The 2-D/3-D forms are block-circulant with circulant blocks
(spectrum [..., N0, N1(, N2)], x reshaped to those axes, multi-dimensional FFTs).
Arguments and results have `input_output_dtype` (complex64 by default; a real dtype casts
the result's real part). A Toeplitz matrix of size N is applied by embedding it in a
circulant one of size 2N."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops import check_ops
from ndflow.ops.arithmetic import floormod, log
from ndflow.ops.array_core import expand_dims, reshape, shape
from ndflow.ops.array_fill import broadcast_to, ones, zeros_like
from ndflow.ops.array_misc import broadcast_dynamic_shape
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.array_reorder import reverse
from ndflow.ops.array_slicing import concat
from ndflow.ops.cast import cast
from ndflow.ops.complex_ops import complex as tf_complex
from ndflow.ops.complex_ops import conj, imag, real
from ndflow.ops.gather_batch import gather
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.linear_operator import base, util
from ndflow.ops.math import abs as math_abs
from ndflow.ops.reduction import reduce_max, reduce_min, reduce_prod, reduce_sum
from ndflow.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d

__all__ = ["LinearOperatorCirculant", "LinearOperatorCirculant2D",
           "LinearOperatorCirculant3D", "LinearOperatorToeplitz"]

_FFT = {1: fft, 2: fft2d, 3: fft3d}
_IFFT = {1: ifft, 2: ifft2d, 3: ifft3d}


def _as_complex(x):
    """Complex inputs as they are, float64 as complex128, anything else complex64."""
    if x.dtype.is_complex:
        return x
    return cast(x, dtypes.complex128 if x.dtype == dtypes.float64 else dtypes.complex64)


class _BaseLinearOperatorCirculant(base.LinearOperator):
    """Circulant operators of block depth 1, 2 or 3."""

    _block_depth = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant"):
        parameters = base.constructor_parameters(locals())
        self._spectrum = util.convert_nonref_to_tensor(spectrum, name="spectrum")
        rank = self._spectrum.shape.ndims
        if rank is not None and rank < self.block_depth:
            raise ValueError(f"Argument `spectrum` must have at least {self.block_depth} "
                             f"dimensions. Received: {self._spectrum}.")
        if not self._spectrum.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(f"A real spectrum always corresponds to a self-adjoint "
                                 f"operator. Expected argument `is_self_adjoint` to be True "
                                 f"when `spectrum.dtype.is_complex` = True. Received: "
                                 f"{is_self_adjoint}.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError(f"A [[nested] block] circulant operator is always square. "
                             f"Expected argument `is_square` to be True. Received: "
                             f"{is_square}.")
        self._init_from_parameters(dtypes.as_dtype(input_output_dtype), parameters,
                                   is_self_adjoint=is_self_adjoint, is_square=True)

    @property
    def block_depth(self) -> int:
        return self._block_depth

    @property
    def spectrum(self):
        return self._spectrum

    def _s(self):
        return util.as_tensor(self._spectrum)

    @property
    def block_shape(self) -> TensorShape:
        return self._spectrum.shape[-self.block_depth:]

    def block_shape_tensor(self):
        return self._block_shape_tensor()

    def _block_shape_tensor(self, spectrum_shape=None):
        if self.block_shape.is_fully_defined():
            return util.shape_tensor(self.block_shape.as_list(), name="block_shape")
        spectrum_shape = shape(self._s()) if spectrum_shape is None else spectrum_shape
        return spectrum_shape[-self.block_depth:]

    def _block_axes(self):
        return [-(i + 1) for i in range(self.block_depth)]

    # -- operators of operators (a circulant's adjoint, inverse and products are too) ------

    def _linop_adjoint(self):
        s = self._s()
        return type(self)(spectrum=conj(s) if s.dtype.is_complex else s,
                          is_non_singular=self.is_non_singular,
                          is_self_adjoint=self.is_self_adjoint,
                          is_positive_definite=self.is_positive_definite, is_square=True)

    def _linop_inverse(self):
        return type(self)(spectrum=1.0 / self._s(), is_non_singular=self.is_non_singular,
                          is_self_adjoint=self.is_self_adjoint,
                          is_positive_definite=self.is_positive_definite, is_square=True,
                          input_output_dtype=self.dtype)

    def _product_hints(self, left, right):
        return dict(
            is_non_singular=util.combined_non_singular_hint(left, right),
            is_self_adjoint=util.combined_commuting_self_adjoint_hint(left, right),
            is_positive_definite=util.combined_commuting_positive_definite_hint(left, right),
            is_square=True)

    def _linop_matmul(self, left, right):
        if not isinstance(right, type(self)) or not isinstance(left, type(right)):
            return super()._linop_matmul(left, right)
        return type(self)(spectrum=left.spectrum * right.spectrum,
                          **self._product_hints(left, right))

    def _linop_solve(self, left, right):
        if not isinstance(right, type(self)):
            return super()._linop_solve(left, right)
        return type(self)(spectrum=right.spectrum / left.spectrum,
                          **self._product_hints(left, right))

    # -- shapes -----------------------------------------------------------------------------

    def _shape(self):
        s = self._spectrum.shape
        if s.rank is None:
            return TensorShape(None)
        trailing = s[-self.block_depth:]
        n = int(np.prod(trailing.as_list())) if trailing.is_fully_defined() else None
        return s[:-self.block_depth].concatenate(TensorShape([n, n]))

    def _shape_tensor(self, spectrum=None):
        s = shape(self._s() if spectrum is None else spectrum)
        n = reduce_prod(s[-self.block_depth:])
        return concat((s[:-self.block_depth], [n, n]), 0)

    # -- the FFT path -----------------------------------------------------------------------

    def _apply_spectrum(self, x, divide: bool, adjoint: bool):
        """IDFT(H * DFT(x)) (or / H) along the block axes, for x [..., N, R]."""
        spectrum = _as_complex(self._s())
        if adjoint:
            spectrum = conj(spectrum)
        x = cast(x, spectrum.dtype)
        block = self.block_shape.as_list() if self.block_shape.is_fully_defined() \
            else self._block_shape_tensor()
        xt = matrix_transpose(x)                        # [..., R, N]
        lead = shape(xt)[:-1]
        blocks = reshape(xt, concat([lead, block], 0))  # [..., R, *block]
        spec = expand_dims(spectrum, -self.block_depth - 1)
        f = _FFT[self.block_depth](blocks)
        y = _IFFT[self.block_depth](f / spec if divide else spec * f)
        y = reshape(y, concat([shape(y)[:-self.block_depth], [-1]], 0))
        return cast(matrix_transpose(y), self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(util.adjoint_if(x, adjoint_arg), False, adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._apply_spectrum(util.adjoint_if(rhs, adjoint_arg), True, adjoint)

    def convolution_kernel(self, name="convolution_kernel"):
        """h = IDFT(spectrum), cast to the operator's dtype."""
        with self._name_scope(name):
            return cast(_IFFT[self.block_depth](_as_complex(self._s())), self.dtype)

    def assert_hermitian_spectrum(self, name="assert_hermitian_spectrum"):
        """An op raising unless the spectrum is Hermitian (the kernel is real)."""
        eps = np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps
        with self._name_scope(name):
            max_err = eps * cast(self.domain_dimension_tensor(), self.dtype.real_dtype)
            imag_kernel = imag(self.convolution_kernel())
            return check_ops.assert_less(math_abs(imag_kernel), max_err,
                                         message="Spectrum was not Hermitian")

    def _assert_non_singular(self):
        return util.assert_no_entries_with_modulus_zero(
            self._s(), message="Singular operator:  Spectrum contained zero values.")

    def _assert_positive_definite(self):
        return check_ops.assert_positive(real(self._s()), message="Not positive definite:  "
                                         "Real part of spectrum was not all positive.")

    def _assert_self_adjoint(self):
        return util.assert_zero_imag_part(self._s(), message="Not self-adjoint:  The spectrum "
                                          "contained non-zero imaginary part.")

    def _flat_spectrum(self):
        s = self._s()
        return reshape(s, concat([shape(s)[:-self.block_depth], [-1]], 0))

    def _cond(self):
        a = math_abs(self._flat_spectrum())
        return reduce_max(a, axis=-1) / reduce_min(a, axis=-1)

    def _eigvals(self):
        return self._flat_spectrum()

    def _determinant(self):
        return cast(reduce_prod(self._s(), axis=self._block_axes()), self.dtype)

    def _log_abs_determinant(self):
        lad = reduce_sum(log(math_abs(self._s())), axis=self._block_axes())
        return cast(lad, self.dtype)

    def _diag_part(self):
        if self.shape.is_fully_defined():
            diag_shape, n = self.shape[:-1].as_list(), self.shape[-1]
        else:
            diag_shape, n = self.shape_tensor()[:-1], self.domain_dimension_tensor()
        value = self.trace() / cast(n, self.dtype)
        return expand_dims(value, -1) * ones(diag_shape, dtype=self.dtype)

    def _trace(self):
        s = self._s()
        re = reduce_sum(real(s), axis=self._block_axes())
        if not self.dtype.is_complex:
            return cast(re, self.dtype)
        im = re * 0 if self.is_self_adjoint else reduce_sum(imag(s), axis=self._block_axes())
        return cast(tf_complex(re, im), self.dtype)

    @property
    def _composite_tensor_fields(self):
        return ("spectrum", "input_output_dtype")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"spectrum": self.block_depth}


@tf_export("linalg.LinearOperatorCirculant")
@base.register("Circulant")
class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """A [batch] circulant matrix given by its spectrum [B1,...,Bb, N]."""

    _block_depth = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


@tf_export("linalg.LinearOperatorCirculant2D")
@base.register("Circulant2D")
class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """A [batch] block-circulant matrix with circulant blocks, spectrum [..., N0, N1]."""

    _block_depth = 2

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant2D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


@tf_export("linalg.LinearOperatorCirculant3D")
@base.register("Circulant3D")
class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """Circulant blocks nested three deep, spectrum [..., N0, N1, N2]."""

    _block_depth = 3

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True,
                 name="LinearOperatorCirculant3D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name)


def _toeplitz_complex(x):
    return cast(x, dtypes.complex128 if x.dtype in (dtypes.float64, dtypes.complex128)
                else dtypes.complex64)


@tf_export("linalg.LinearOperatorToeplitz")
@base.register("Toeplitz")
class LinearOperatorToeplitz(base.LinearOperator):
    """The [batch] Toeplitz matrix with first column `col` and first row `row` (row[0] is
    ignored: the diagonal is col[0]). Matmul embeds it in a circulant matrix of twice its
    size (O(N log N)); solve is dense."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        parameters = base.constructor_parameters(locals())
        self._row = util.convert_nonref_to_tensor(row, name="row")
        self._col = util.convert_nonref_to_tensor(col, name="col")
        for arg, t in (("row", self._row), ("col", self._col)):
            if t.shape.ndims is not None and t.shape.ndims < 1:
                raise ValueError(f"Argument {arg} must have at least 1 dimension.  Found: {t}")
        r, c = self._row.shape[-1], self._col.shape[-1]
        if r is not None and c is not None and r != c:
            raise ValueError("Expected square matrix, got row and col with mismatched "
                             "dimensions.")
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        self._init_from_parameters(self._row.dtype, parameters, is_square=True)

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        v = broadcast_shapes(self.row.shape, self.col.shape)
        return v.concatenate(v[-1:])

    def _shape_tensor(self, row=None, col=None):
        row = util.as_tensor(self.row) if row is None else row
        col = util.as_tensor(self.col) if col is None else col
        v = broadcast_dynamic_shape(shape(row), shape(col))
        return concat((v, [v[-1]]), 0)

    def _assert_self_adjoint(self):
        return check_ops.assert_equal(self.row, self.col, message="row and col are not the "
                                      "same, and so this operator is not self-adjoint.")

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = util.adjoint_if(x, adjoint_arg)
        expanded = concat([x, zeros_like(x)], axis=-2)
        col, row = util.as_tensor(self.col), util.as_tensor(self.row)
        circulant_col = concat([col, zeros_like(col[..., 0:1]),
                                reverse(row[..., 1:], axis=[-1])], axis=-1)
        circulant = LinearOperatorCirculant(fft(_toeplitz_complex(circulant_col)),
                                            input_output_dtype=row.dtype)
        result = circulant.matmul(expanded, adjoint=adjoint, adjoint_arg=False)
        n = self._domain_dimension_tensor(shape=self._shape_tensor(row=row, col=col))
        return cast(result[..., :n, :], self.dtype)

    def _trace(self):
        return cast(self.domain_dimension_tensor(), self.dtype) * util.as_tensor(
            self.col)[..., 0]

    def _diag_part(self):
        return util.as_tensor(self.col)[..., 0:1] * ones([self.domain_dimension_tensor()],
                                                         self.dtype)

    def _to_dense(self):
        row, col = util.as_tensor(self.row), util.as_tensor(self.col)
        total = broadcast_dynamic_shape(shape(row), shape(col))
        n = shape(row)[-1]
        row, col = broadcast_to(row, total), broadcast_to(col, total)
        elements = concat([reverse(col, axis=[-1]), row[..., 1:]], axis=-1)
        indices = floormod(tf_range(0, n) + tf_range(n - 1, -1, -1)[..., None], 2 * n - 1)
        return gather(elements, indices, axis=-1, batch_dims=0)

    @property
    def _composite_tensor_fields(self):
        return ("col", "row")

    @property
    def _experimental_parameter_ndims_to_matrix_ndims(self):
        return {"col": 1, "row": 1}
