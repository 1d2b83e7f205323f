"""RaggedFillEmptyRows / RaggedFillEmptyRowsGrad (`tf.ragged_fill_empty_rows`,
`tf.ragged_fill_empty_rows_grad`): SparseFillEmptyRows (ops/sparse_ops.py) for a ragged
tensor given by its `value_rowids` and `nrows`.

Every row of [0, nrows) without a value gets one `default_value`; the outputs are the new
value_rowids (in row order: values of rows given out of order are moved, stably), the new
values, a bool per row that was empty, and where each input value went (the reverse index
map the gradient reads). The gradient of the values is the output gradient at those places;
that of the default value is the sum of the output gradient everywhere else (TF's
`_ragged_fill_empty_rows_grad` and the RaggedFillEmptyRowsGrad kernel, which sums the
places no input value went to). Kernels: kernels/ragged_fill_empty_rows.py, on the
SparseFillEmptyRows kernel.
"""

from __future__ import annotations

import collections

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.nn_common import check_rank
from ndflow.ops.op_def import op_def


def _merge(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _fill_shape(ctx):
    if context.executing_eagerly():   # (TF's kernel checks the inputs, with its messages)
        return [TensorShape([None])] * 4
    rowids = check_rank(ctx.shapes[0], 1)
    values = check_rank(ctx.shapes[1], 1)
    check_rank(ctx.shapes[2], 0)
    check_rank(ctx.shapes[3], 0)
    n = _merge(rowids[0], values[0])
    return [TensorShape([None])] * 3 + [TensorShape([n])]


def _grad_shape(ctx):
    if context.executing_eagerly():
        return [TensorShape([None]), TensorShape([])]
    reverse = check_rank(ctx.shapes[0], 1)
    check_rank(ctx.shapes[1], 1)
    return [TensorShape([reverse[0]]), TensorShape([])]


RaggedFillEmptyRows = op_def(
    "RaggedFillEmptyRows",
    inputs=["value_rowids: int64", "values: T", "nrows: int64", "default_value: T"],
    outputs=["output_value_rowids: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"],
    attrs=["T: type"], shape=_fill_shape)

RaggedFillEmptyRowsGrad = op_def(
    "RaggedFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=["T: type"], shape=_grad_shape,
    gradient_undefined=True)

# The namedtuples TF's wrappers (and tf.raw_ops) return.
RaggedFillEmptyRowsResult = collections.namedtuple(
    "RaggedFillEmptyRows", ["output_value_rowids", "output_values", "empty_row_indicator",
                            "reverse_index_map"])
RaggedFillEmptyRowsGradResult = collections.namedtuple(
    "RaggedFillEmptyRowsGrad", ["d_values", "d_default_value"])


@tf_export("ragged_fill_empty_rows")
def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """`tf.ragged_fill_empty_rows` (the raw op): (output_value_rowids, output_values,
    empty_row_indicator, reverse_index_map) of the ragged tensor of `values` in rows
    `value_rowids` of `nrows`, each empty row given one `default_value`."""
    return RaggedFillEmptyRowsResult(*apply_op(
        RaggedFillEmptyRows, [value_rowids, values, nrows, default_value], name=name).outputs)


@tf_export("ragged_fill_empty_rows_grad")
def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """`tf.ragged_fill_empty_rows_grad` (the raw op): (d_values, d_default_value), the
    gradients of RaggedFillEmptyRows' values and default value from that of its output
    values."""
    return RaggedFillEmptyRowsGradResult(*apply_op(
        RaggedFillEmptyRowsGrad, [reverse_index_map, grad_values], name=name).outputs)


@RaggedFillEmptyRows.def_grad
def _ragged_fill_empty_rows_grad(op, _rowids, grad_values, _empty, _reverse):
    d_values, d_default = apply_op(RaggedFillEmptyRowsGrad,
                                   [op.outputs[3], grad_values]).outputs
    return [None, d_values, None, d_default]
