"""TF1's `tf.compat.v1.string_split`: the StringSplit op (a split at every byte of
`delimiter`, default " "; each byte when it is empty; empty pieces dropped unless
`skip_empty=False`) as a SparseTensor, or a RaggedTensor with `result_type="RaggedTensor"`;
and TF1's `tf.compat.v1.strings.split`: `tf.strings.split` with the same `result_type`."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.deprecation import deprecated_argument_lookup
from ndflow.core.scopes import name_scope
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import expand_dims
from ndflow.ops.ragged_array_ops import from_sparse
from ndflow.ops.ragged_tensor import RaggedTensor
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.string_ops import StringSplit, split

_RESULT_TYPES = ("SparseTensor", "RaggedTensor")


@tf_export(v1=["string_split"])
def string_split(source, sep=None, skip_empty=True, delimiter=None,
                 result_type="SparseTensor", name=None):
    """The strings of the vector `source` split at any byte of `delimiter` (`sep`)."""
    delimiter = deprecated_argument_lookup("sep", sep, "delimiter", delimiter)
    if delimiter is None:
        delimiter = " "
    if result_type not in _RESULT_TYPES:
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")
    with name_scope(name, "StringSplit"):
        source = convert_to_tensor(source, dtypes.string)
        delimiter = convert_to_tensor(delimiter, dtypes.string)
        indices, values, shape = apply_op(StringSplit, [source, delimiter],
                                          {"skip_empty": bool(skip_empty)}).outputs
        sparse = SparseTensor(indices, values, shape)
        return sparse if result_type == "SparseTensor" else from_sparse(RaggedTensor, sparse)


@tf_export(v1=["strings.split"])
def split_v1(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None,  # noqa: A002
             name=None):
    """Splits strings on a separator (TF1 signature), as a SparseTensor by default.

    Args:
      input: a string tensor or RaggedTensor; a scalar is taken as a vector of one string.
      sep: the separator; None splits on whitespace runs (dropping empty pieces).
      maxsplit: the most splits per string (-1: no limit).
      result_type: "SparseTensor" (TF1's default) or "RaggedTensor".
      source: the deprecated name of `input`.
      name: optional name for the operation.

    Returns:
      A SparseTensor (int64 indices [N, rank + 1]) or a RaggedTensor of rank `rank + 1`
      (`rank` of the input, at least 1): the pieces of each string in its own row.

    Raises:
      ValueError: for another `result_type`, or both `input` and `source`.

    Example:
      >>> tf.compat.v1.strings.split(['a b', 'c']).indices.numpy().tolist()
      [[0, 0], [0, 1], [1, 0]]
      >>> tf.compat.v1.strings.split('a b', result_type='RaggedTensor').to_list()
      [[b'a', b'b']]
    """
    input = deprecated_argument_lookup("input", input, "source", source)  # noqa: A001
    with name_scope(name, "StringSplit"):
        if not isinstance(input, RaggedTensor):
            input = convert_to_tensor(input, dtypes.string)  # noqa: A001
            if input.shape.rank == 0:
                input = expand_dims(input, 0)  # noqa: A001
        if result_type not in _RESULT_TYPES:
            raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")
        pieces = split(input, sep, maxsplit)
        return pieces if result_type == "RaggedTensor" else pieces.to_sparse()
