"""TF1's `tf.compat.v1.string_split`: the StringSplit op (a split at every byte of
`delimiter`, default " "; each byte when it is empty; empty pieces dropped unless
`skip_empty=False`) as a SparseTensor, or a RaggedTensor with `result_type="RaggedTensor"`."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.ragged_array_ops import from_sparse
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.string_ops import StringSplit


@tf_export(v1=["string_split"])
def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None):
    """The strings of the vector `source` split at any byte of `delimiter` (`sep`)."""
    delimiter = deprecated_argument_lookup("sep", sep, "delimiter", delimiter)
    if delimiter is None:
        delimiter = " "
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")
    with name_scope(name, "StringSplit"):
        source = convert_to_tensor(source, dtypes.string)
        delimiter = convert_to_tensor(delimiter, dtypes.string)
        indices, values, shape = apply_op(StringSplit, [source, delimiter],
                                          {"skip_empty": bool(skip_empty)}).outputs
        sparse = SparseTensor(indices, values, shape)
        return sparse if result_type == "SparseTensor" else from_sparse(RaggedTensor, sparse)
