"""`tf.sparse.bincount`: counts (or summed weights) of each value, per row with axis=-1, as a
SparseTensor holding only the values seen (TensorFlow's DenseCountSparseOutput and
SparseCountSparseOutput; kernels in kernels/sparse_reductions.py)."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.op_def import op_def
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.sparse_tensor import SparseTensor

_ATTRS = ["T: {int32, int64}", "minlength: int >= -1 = -1", "maxlength: int >= -1 = -1",
          "binary_output: bool", "output_type: {int32, int64, float, double}"]
_OUT = ["output_indices: int64", "output_values: output_type", "output_dense_shape: int64"]
_SHAPES = (lambda ctx: [TensorShape([None, None]), TensorShape([None]), TensorShape([None])])

DenseCountSparseOutput = op_def(
    "DenseCountSparseOutput", inputs=["values: T", "weights: output_type"], outputs=_OUT,
    attrs=_ATTRS, shape=_SHAPES, gradient_undefined=True)

SparseCountSparseOutput = op_def(
    "SparseCountSparseOutput", inputs=["indices: int64", "values: T", "dense_shape: int64",
                                       "weights: output_type"],
    outputs=_OUT, attrs=_ATTRS, shape=_SHAPES, gradient_undefined=True)


@tf_export("sparse.bincount")
def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None):
    """How often each value occurs in `values` (dense, SparseTensor or RaggedTensor; per row
    when axis=-1), or the sum of its `weights`, as a SparseTensor of the values seen."""
    if weights is not None and binary_output:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. "
                         "Please specify only one.")
    axis = 0 if axis is None else axis
    if axis not in (0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                         "currently supported.")
    with name_scope(name, "count"):
        if isinstance(values, RaggedTensor):   # its rows as a SparseTensor's (same order)
            values = values.to_sparse()
        if isinstance(weights, RaggedTensor):
            weights = weights.flat_values
        if not isinstance(values, SparseTensor):
            values = convert_to_tensor(values, name="values")
        if weights is not None and not isinstance(weights, CompositeTensor):
            weights = convert_to_tensor(weights, name="weights")
        weights = weights.values if isinstance(weights, SparseTensor) else weights
        if axis == 0:
            if isinstance(values, SparseTensor):
                values = values.values
            else:
                values = reshape(values, [-1])
                weights = None if weights is None else reshape(weights, [-1])
        value_dtype = values.dtype
        if weights is None:
            weights = convert_to_tensor([], value_dtype)
        attrs = {"minlength": -1 if minlength is None else int(minlength),
                 "maxlength": -1 if maxlength is None else int(maxlength),
                 "binary_output": bool(binary_output)}
        if isinstance(values, SparseTensor):
            out = apply_op(SparseCountSparseOutput, [values.indices, values.values,
                                                     values.dense_shape, weights], attrs)
        else:
            out = apply_op(DenseCountSparseOutput, [values, weights], attrs)
        return SparseTensor(*out.outputs)
