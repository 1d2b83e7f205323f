"""`tf.sets`: size, intersection, union and difference of the sets held along the last
dimension of dense or sparse tensors, as TensorFlow's set ops (SetSize and the
Dense/Sparse-To-Dense/Sparse SetOperation ops; not differentiable). Results are SparseTensors whose
rows list each set's elements in ascending order, the last dimension as long as the largest
set."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue

_T = "T: {int8, int16, int32, int64, uint8, string}"   # TF also has uint16, which ndflow lacks
_SUPPORTED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
              dtypes.string)
_SPARSE_RESULT = ["result_indices: int64", "result_values: T", "result_shape: int64"]


def _sparse_result(ctx):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


SetSize = op_def("SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
                 outputs=["size: int32"], attrs=["validate_indices: bool = true", _T],
                 shape=lambda ctx: [TensorShape(None)], not_differentiable=True)
DenseToDenseSetOperation = op_def(
    "DenseToDenseSetOperation", inputs=["set1: T", "set2: T"], outputs=_SPARSE_RESULT,
    attrs=["set_operation: string", "validate_indices: bool = true", _T],
    shape=_sparse_result, not_differentiable=True)
DenseToSparseSetOperation = op_def(
    "DenseToSparseSetOperation",
    inputs=["set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    outputs=_SPARSE_RESULT, attrs=["set_operation: string", "validate_indices: bool = true", _T],
    shape=_sparse_result, not_differentiable=True)
SparseToSparseSetOperation = op_def(
    "SparseToSparseSetOperation",
    inputs=["set1_indices: int64", "set1_values: T", "set1_shape: int64",
            "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    outputs=_SPARSE_RESULT, attrs=["set_operation: string", "validate_indices: bool = true", _T],
    shape=_sparse_result, not_differentiable=True)


def _as_set_operand(x, name: str):
    if isinstance(x, SparseTensorValue):
        x = SparseTensor(*x)
    if not isinstance(x, SparseTensor):
        x = convert_to_tensor(x, name=name)
    if x.dtype not in _SUPPORTED:
        raise TypeError(f"'{name}' has invalid dtype `{x.dtype!r}` not in supported dtypes: "
                        f"`{frozenset(_SUPPORTED)}`.")
    return x


@tf_export("sets.size", v1=["sets.size", "sets.set_size"])
def set_size(a, validate_indices=True):
    """int32 number of distinct elements of each set of the SparseTensor `a` (its last
    dimension), shaped as `a`'s dense shape without it."""
    if not isinstance(a, (SparseTensor, SparseTensorValue)):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    a = _as_set_operand(a, "a")
    return apply_op(SetSize, [a.indices, a.values, a.dense_shape],
                    {"validate_indices": validate_indices}).outputs[0]


def _set_operation(a, b, operation: str, validate_indices: bool) -> SparseTensor:
    a, b = _as_set_operand(a, "a"), _as_set_operand(b, "b")
    if a.dtype is not b.dtype:
        raise TypeError(f"Types don't match, {a.dtype!r} vs {b.dtype!r}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise ValueError("Sparse `a` must be paired with sparse `b` (swap the operands).")
    attrs = {"set_operation": operation, "validate_indices": validate_indices}
    if isinstance(b, SparseTensor):
        if isinstance(a, SparseTensor):
            op = apply_op(SparseToSparseSetOperation, [a.indices, a.values, a.dense_shape,
                                                       b.indices, b.values, b.dense_shape],
                          attrs)
        else:
            op = apply_op(DenseToSparseSetOperation, [a, b.indices, b.values, b.dense_shape],
                          attrs)
    else:
        op = apply_op(DenseToDenseSetOperation, [a, b], attrs)
    return SparseTensor(*op.outputs)


def _dense_first(a, b, flip_ok: bool):
    """TF swaps a sparse `a` with a dense `b` (for difference, flipping its direction)."""
    sparse = (SparseTensor, SparseTensorValue)
    if isinstance(a, sparse) and not isinstance(b, sparse) and flip_ok:
        return b, a, True
    return a, b, False


_SYMMETRIC_DOC = """The elements {what}, along the last axis.

    Args:
      a: a dense tensor or `tf.SparseTensor` of int or string sets: its last axis holds one set
        per position of the other axes.
      b: the same kind of tensor, with the same leading axes (a dense `b` may go with a sparse
        `a`).
      validate_indices: whether to check that sparse indices are sorted and in range.

    Returns:
      A `tf.SparseTensor` of a's rank whose last axis holds each result set, sorted.

    Example:
      >>> tf.sets.{operation}({a}, {b}).values.numpy()
      array({out}, dtype=int32)
    """


def _symmetric(operation: str, what: str, a: str, b: str, out: str):
    """tf.sets.<operation> (intersection, union), whose operands may come in either order."""
    def set_function(a, b, validate_indices=True) -> SparseTensor:
        a, b, _ = _dense_first(a, b, True)
        return _set_operation(a, b, operation, validate_indices)
    set_function.__name__ = set_function.__qualname__ = f"set_{operation}"
    set_function.__doc__ = _SYMMETRIC_DOC.format(what=what, operation=operation, a=a, b=b,
                                                 out=out)
    return tf_export(f"sets.{operation}", v1=[f"sets.{operation}", f"sets.set_{operation}"])(
        set_function)


set_intersection = _symmetric("intersection", "common to the sets of `a` and `b`",
                              "[[1, 2, 3]]", "[[2, 3, 4]]", "[2, 3]")
set_union = _symmetric("union", "in either set of `a` or `b`", "[[1, 2]]", "[[2, 3]]",
                       "[1, 2, 3]")


@tf_export("sets.difference", v1=["sets.difference", "sets.set_difference"])
def set_difference(a, b, aminusb=True, validate_indices=True) -> SparseTensor:
    """a - b along the last dimension (b - a with `aminusb=False`)."""
    a, b, flipped = _dense_first(a, b, True)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)
