"""Norms and moments as TF composes them: `tf.math.reduce_variance`, `tf.math.reduce_std`,
`tf.norm` (`tf.linalg.norm`), `tf.nn.l2_normalize`, `tf.math.reduce_euclidean_norm` and
`tf.math.log_sigmoid` (math_ops.py, linalg_ops.py and nn_impl.py, op for op)."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.tensor import Tensor
from ndflow.ops import (
    arithmetic,
    array_core,
    array_transpose,
    linalg_decomp,
    math,
    norms_docs,
    reduction,
)
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name
from ndflow.ops.complex_ops import conj
from ndflow.ops.nn_activation import softplus


@tf_export("math.reduce_variance")
def reduce_variance(input_tensor, axis=None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """`tf.math.reduce_variance`: mean of squared deviations from the mean."""
    with name_scope(name or "reduce_variance"):
        x = convert_to_tensor(input_tensor)
        means = reduction.reduce_mean(x, axis=axis, keepdims=True)
        if not (means.dtype.is_floating or means.dtype.is_complex):
            raise TypeError(f"Input must be either real or complex. Received integer type "
                            f"{means.dtype}.")
        diff = x - means
        # a complex deviation counts by its modulus (a real variance)
        squared_deviations = math.square(math.abs(diff) if diff.dtype.is_complex else diff)
        return reduction.reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


@tf_export("math.reduce_std")
def reduce_std(input_tensor, axis=None, keepdims: bool = False,
               name: str | None = None) -> Tensor:
    """`tf.math.reduce_std`: square root of `reduce_variance`."""
    with name_scope(name or "reduce_std"):
        x = convert_to_tensor(input_tensor)
        return math.sqrt(reduce_variance(x, axis=axis, keepdims=keepdims))


@tf_export("math.reduce_euclidean_norm")
def reduce_euclidean_norm(input_tensor, axis=None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """`tf.math.reduce_euclidean_norm`, composed as sqrt(sum(x * x)) (TF has a fused
    EuclideanNorm op; the composite has the same values and TF's gradient)."""
    with name_scope(name, "EuclideanNorm"):
        x = convert_to_tensor(input_tensor)
        return math.sqrt(reduction.reduce_sum(x * conj(x), axis, keepdims=keepdims))


def _check_norm_args(ord, axis) -> tuple:  # noqa: A002 - TF's name
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
        return True, axis
    if not (isinstance(axis, int) or axis is None):
        raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis}")
    supported = ["euclidean", 1, 2, np.inf]
    if (isinstance(ord, str) or not np.isreal(ord) or ord <= 0) and ord not in supported:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False, (None if axis is None else (axis,))


@tf_export("linalg.norm", "norm")
def norm(tensor, ord="euclidean", axis=None, keepdims=None,  # noqa: A002 - TF's name
         name: str | None = None, keep_dims=None) -> Tensor:
    """`tf.norm` / `tf.linalg.norm`: vector p-norms, Frobenius and matrix 1/2/inf norms."""
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    is_matrix, axis = _check_norm_args(ord, axis)
    with name_scope(name, "norm"):
        x = convert_to_tensor(tensor)
        axes = None if axis is None else list(axis)
        if is_matrix and ord in (2, 2.0):
            result = _spectral_norm(x, axes)
        elif ord in ("fro", "euclidean", 2, 2.0):
            result = math.sqrt(reduction.reduce_sum(x * conj(x), axes, keepdims=True))
        else:
            result = math.abs(x)
            if ord == 1:
                result = reduction.reduce_sum(result, None if axis is None else axis[0],
                                             keepdims=True)
                if is_matrix:
                    result = reduction.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix:
                    result = reduction.reduce_sum(result, axis[1], keepdims=True)
                result = reduction.reduce_max(result, None if axis is None else axis[0],
                                             keepdims=True)
            else:
                result = arithmetic.pow(
                    reduction.reduce_sum(arithmetic.pow(result, ord), axes, keepdims=True),
                    1.0 / ord)
        if not keepdims:
            result = array_core.squeeze(result, axes)
        return result


def _spectral_norm(x, axes: list) -> Tensor:
    """The matrix 2-norm over `axes` (kept, size 1): the largest singular value of each
    matrix, the two axes moved last for the Svd and back."""
    r = x.shape.rank
    if r is None:
        raise NotImplementedError("the matrix 2-norm needs a tensor of known rank")
    pos = [a % r for a in axes]
    perm = [d for d in range(r) if d not in pos] + pos
    singular = linalg_decomp.svd(array_transpose.transpose(x, perm), compute_uv=False)
    top = reduction.reduce_max(math.abs(singular), -1, keepdims=True)
    kept = array_core.expand_dims(top, -1)
    return array_transpose.transpose(kept, np.argsort(perm).astype(np.int32))


@tf_export("linalg.l2_normalize", "math.l2_normalize", "nn.l2_normalize")
def l2_normalize(x, axis=None, epsilon: float = 1e-12, name: str | None = None,
                 dim=None) -> Tensor:
    """`tf.math.l2_normalize` / `tf.nn.l2_normalize`: x * rsqrt(max(sum(x**2), epsilon))."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with composite_name(name, "l2_normalize") as final:
        x = convert_to_tensor(x, name="x")
        square_sum = reduction.reduce_sum(math.square(x), axis, keepdims=True)
        x_inv_norm = math.rsqrt(arithmetic.maximum(square_sum, epsilon))
    return arithmetic.multiply(x, x_inv_norm, name=final)


@tf_export("math.log_sigmoid", v1=["log_sigmoid", "math.log_sigmoid"])
def log_sigmoid(x, name: str | None = None) -> Tensor:
    """`tf.math.log_sigmoid`: -softplus(-x), stable for large |x|."""
    with composite_name(name, "LogSigmoid") as final:
        x = convert_to_tensor(x, name="x")
        sp = softplus(arithmetic.negative(x))
    return arithmetic.negative(sp, name=final)


@tf_export("linalg.normalize")
def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002 - TF's name
    """`tf.linalg.normalize`: (tensor / its norm, the norm), the norm kept as dims of size 1."""
    with name_scope(name, "normalize"):
        tensor = convert_to_tensor(tensor)
        length = cast(norm(tensor, ord, axis, keepdims=True), tensor.dtype)
        return tensor / length, length


attach(globals(), norms_docs.DOCS)
