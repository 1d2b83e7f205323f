"""Diagonals and bands of batched matrices: MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3
and MatrixBandPart, with `tf.linalg.diag`/`diag_part`/`set_diag`/`band_part`/`trace`/`adjoint`.

`k` is one diagonal (scalar) or a band `[low, high]`; a band's diagonals are stacked from
`high` down to `low` and padded to the longest one, aligned as `align` says (superdiagonals
first, subdiagonals second). Gradients are in linalg_grad.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import linalg_diag_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.comparison import composite_name
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_sum

_ALIGN = "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'"


def diag_range(k, eager: bool) -> tuple:
    """(low, high) from a `k` value (scalar or pair), with TF's checks (its kernel's wording
    when `eager`, its shape function's otherwise)."""
    k = np.asarray(k).reshape(-1).tolist()
    if not 1 <= len(k) <= 2:
        raise ValueError(
            f"diag_index must have only one or two elements, received {len(k)} elements."
            if eager else
            f"diag_index must be a vector with one or two elements. It has {len(k)} elements.")
    lo, hi = int(k[0]), int(k[-1])
    if lo > hi:
        raise ValueError(f"lower_diag_index must not be larger than upper_diag_index: {lo} > "
                         f"{hi}" if eager else "lower_diag_index is greater than upper_diag_index")
    return lo, hi


def check_diag_bounds(lo: int, hi: int, rows: int, cols: int, eager: bool) -> None:
    for which, d, dot in (("lower", lo, "."), ("upper", hi, "")):
        if d != 0 and not -rows < d < cols:
            raise ValueError(f"{which}_diag_index is out of bound: {d}{dot} It must be between "
                             f"{-rows} and {cols}" if eager else
                             f"{which}_diag_index is out of bound.")


def max_diag_len(rows: int, cols: int, lo: int, hi: int) -> int:
    return min(rows + min(0, hi), cols - max(0, lo))


def _at_least_2(s: TensorShape) -> None:
    if s.rank is not None and s.rank < 2:
        if context.executing_eagerly():
            raise ValueError(f"input must be at least 2-dim, received shape: {fmt(s)}")
        raise ValueError(f"Shape must be at least rank 2 but is rank {s.rank}")


def _diag_part_shape(ctx):
    s = ctx.shapes[0]
    _at_least_2(s)
    k = ctx.value(1)
    if s.rank is None or k is None:
        return [TensorShape(None)]
    eager = context.executing_eagerly()
    lo, hi = diag_range(k, eager)
    rows, cols = s[-2], s[-1]
    if rows is not None and cols is not None:
        check_diag_bounds(lo, hi, rows, cols, eager)
    length = None if rows is None or cols is None else max_diag_len(rows, cols, lo, hi)
    tail = [length] if lo == hi else [hi - lo + 1, length]
    return [s[:-2].concatenate(tail)]


NUM_DIAGS_EAGER = ("The number of diagonals provided in the input does not match the "
                   "lower_diag_index and upper_diag_index range.")


def _diag_shape(ctx):
    s = ctx.shapes[0]
    k, rows, cols = ctx.value(1), ctx.value(2), ctx.value(3)
    if s.rank is not None and s.rank < 1:
        raise ValueError(f"diagonal must be at least 1-dim, received shape: {fmt(s)}"
                         if context.executing_eagerly() else
                         f"Shape must be at least rank 1 but is rank {s.rank}")
    if s.rank is None or k is None or rows is None or cols is None:
        return [TensorShape(None)]
    eager = context.executing_eagerly()
    lo, hi = diag_range(k, eager)
    if lo != hi:
        _at_least_2(s)
        if s[-2] is not None and s[-2] != hi - lo + 1:
            raise ValueError(NUM_DIAGS_EAGER if eager else
                             "The number of rows of `diagonal` doesn't match the number of "
                             f"diagonals implied from `d_lower` and `d_upper`.\nnum_diags = "
                             f"{s[-2]}, d_lower = {lo}, d_upper = {hi} {s.rank} {s[-1]}")
    batch = s[:-1] if lo == hi else s[:-2]
    length = s[-1]
    if length is None:
        return [batch.concatenate([None, None])]
    rows, cols = diag_output_dims(length, lo, hi, int(rows), int(cols), eager)
    return [batch.concatenate([rows, cols])]


def diag_output_dims(length: int, lo: int, hi: int, rows: int, cols: int,
                     eager: bool) -> tuple:
    """MatrixDiagV3's output [rows, cols]: square when neither is given, else the smallest."""
    min_rows, min_cols = length - min(hi, 0), length + max(lo, 0)
    if rows != -1 and rows < min_rows:
        raise ValueError("The number of rows is too small." if eager else
                         "num_rows is too small")
    if cols != -1 and cols < min_cols:
        raise ValueError("The number of columns is too small." if eager else
                         "num_cols is too small")
    if rows == -1 and cols == -1:
        return max(min_rows, min_cols), max(min_rows, min_cols)
    return (min_rows if rows == -1 else rows), (min_cols if cols == -1 else cols)


def _set_diag_shape(ctx):
    s = ctx.shapes[0]
    _at_least_2(s)
    return [s]


def _band_shape(ctx):
    s = ctx.shapes[0]
    _at_least_2(s)
    return [s]


MatrixDiagV3 = op_def(
    "MatrixDiagV3", inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
                            "padding_value: T"],
    outputs=["output: T"], attrs=["T: type", _ALIGN], shape=_diag_shape)
MatrixDiagPartV3 = op_def(
    "MatrixDiagPartV3", inputs=["input: T", "k: int32", "padding_value: T"],
    outputs=["diagonal: T"], attrs=["T: type", _ALIGN], shape=_diag_part_shape)
MatrixSetDiagV3 = op_def(
    "MatrixSetDiagV3", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
    attrs=["T: type", _ALIGN], shape=_set_diag_shape)
MatrixBandPart = op_def(
    "MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
    outputs=["band: T"], attrs=["T: type", "Tindex: {int32, int64} = DT_INT64"],
    shape=_band_shape)

# The earlier versions, for graphs that hold them (tf.raw_ops, imported GraphDefs): V2 is V3
# with its diagonals packed LEFT_LEFT; V1 has the main diagonal only.
MatrixDiagV2 = op_def(
    "MatrixDiagV2", inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32",
                            "padding_value: T"],
    outputs=["output: T"], attrs=["T: type"], shape=_diag_shape)
MatrixDiagPartV2 = op_def(
    "MatrixDiagPartV2", inputs=["input: T", "k: int32", "padding_value: T"],
    outputs=["diagonal: T"], attrs=["T: type"], shape=_diag_part_shape)
MatrixSetDiagV2 = op_def(
    "MatrixSetDiagV2", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
    attrs=["T: type"], shape=_set_diag_shape)


def _diag_v1_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is not None and s.rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {s.rank}")
    return [s.concatenate([s[-1]]) if s.rank is not None else TensorShape(None)]


def _diag_part_v1_shape(ctx):
    s = ctx.shapes[0]
    _at_least_2(s)
    if s.rank is None:
        return [s]
    rows, cols = s[-2], s[-1]
    return [s[:-2].concatenate([None if rows is None or cols is None else min(rows, cols)])]


MatrixDiag = op_def("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"],
                    attrs=["T: type"], shape=_diag_v1_shape)
MatrixDiagPart = op_def("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                        attrs=["T: type"], shape=_diag_part_v1_shape)
MatrixSetDiag = op_def("MatrixSetDiag", inputs=["input: T", "diagonal: T"],
                       outputs=["output: T"], attrs=["T: type"], shape=_set_diag_shape)


def _k(k):
    return convert_to_tensor(k, dtype=dtypes.int32, name="k")


@tf_export("linalg.diag", v1=["linalg.diag", "matrix_diag"])
def matrix_diag(diagonal, name: str = "diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align: str = "RIGHT_LEFT") -> Tensor:
    """`tf.linalg.diag`: batched (band-)diagonal matrices from their diagonals."""
    with composite_name(name, "diag") as final:
        diagonal = convert_to_tensor(diagonal, name="diagonal")
        args = [diagonal, _k(k),
                convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows"),
                convert_to_tensor(num_cols, dtype=dtypes.int32, name="num_cols"),
                convert_to_tensor(padding_value, dtype=diagonal.dtype, name="padding_value")]
    return apply_op(MatrixDiagV3, args, {"align": align}, name=final).outputs[0]


@tf_export("linalg.diag_part", v1=["linalg.diag_part", "matrix_diag_part"])
def matrix_diag_part(input, name: str = "diag_part", k=0, padding_value=0,  # noqa: A002
                     align: str = "RIGHT_LEFT") -> Tensor:
    """`tf.linalg.diag_part`: the (band of) diagonals of batched matrices."""
    with composite_name(name, "diag_part") as final:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        args = [input, _k(k),
                convert_to_tensor(padding_value, dtype=input.dtype, name="padding_value")]
    return apply_op(MatrixDiagPartV3, args, {"align": align}, name=final).outputs[0]


@tf_export("linalg.set_diag", v1=["linalg.set_diag", "matrix_set_diag"])
def matrix_set_diag(input, diagonal, name: str = "set_diag", k=0,  # noqa: A002
                    align: str = "RIGHT_LEFT") -> Tensor:
    """`tf.linalg.set_diag`: batched matrices with their (band of) diagonals replaced."""
    with composite_name(name, "set_diag") as final:
        k = _k(k)
    return apply_op(MatrixSetDiagV3, [input, diagonal, k], {"align": align},
                    name=final).outputs[0]


@tf_export("linalg.band_part", v1=["linalg.band_part", "matrix_band_part"])
def band_part(input, num_lower, num_upper, name=None) -> Tensor:  # noqa: A002
    """`tf.linalg.band_part`: zeroes entries outside `num_lower` below, `num_upper` above."""
    with composite_name(name, "MatrixBandPart") as final:
        lower = convert_to_tensor(num_lower, dtype_hint=dtypes.int32, name="num_lower")
        upper = convert_to_tensor(num_upper, dtype_hint=lower.dtype, name="num_upper")
    return apply_op(MatrixBandPart, [input, lower, upper], name=final).outputs[0]


@tf_export("linalg.trace", v1=["linalg.trace", "trace"])
def trace(x, name=None) -> Tensor:
    """`tf.linalg.trace`: the sum of each matrix's main diagonal."""
    with composite_name(name, "Trace") as final:
        x = convert_to_tensor(x, name="x")
        diag = matrix_diag_part(x)
    return reduce_sum(diag, [-1], name=final)


@tf_export("linalg.adjoint")
def adjoint(matrix, name=None) -> Tensor:
    """`tf.linalg.adjoint`: the conjugate transpose of each matrix."""
    with name_scope(name, "adjoint"):
        matrix = convert_to_tensor(matrix, name="matrix")
        return matrix_transpose(matrix, conjugate=True)


attach(globals(), linalg_diag_docs.DOCS)
