"""TF1 array helpers of `tf.compat.v1`: `setdiff1d` (the ListDiff op), `check_pinned`
(CheckPinned), `batch_gather`,
`clip_by_average_norm`, `to_bfloat16`, `convert_to_tensor_or_indexed_slices` and
`convert_to_tensor_or_sparse_tensor`. Kernels: kernels/array_v1_compat.py."""

from __future__ import annotations

import collections

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.arithmetic import minimum, multiply, truediv
from ndflow.ops.array_core import identity, rank, size
from ndflow.ops.array_range import range as range_
from ndflow.ops.cast import cast
from ndflow.ops.comparison import composite_name
from ndflow.ops.gather_batch import gather
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.math import rsqrt
from ndflow.ops.op_def import op_def
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue


def _list_diff_shape(ctx):
    if not context.executing_eagerly():  # eagerly the kernel's "x should be a 1D vector."
        for shape in ctx.shapes:
            if shape.rank not in (None, 1):
                raise ValueError(f"Shape must be rank 1 but is rank {shape.rank}")
    return [TensorShape([None]), TensorShape([None])]


ListDiff = op_def("ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
                  attrs=["T: type", "out_idx: {int32, int64} = DT_INT32"],
                  shape=_list_diff_shape, gradient_undefined=True,
                  doc="The values of x not in y, in x's order, and their positions in x.")

CheckPinned = op_def("CheckPinned", inputs=["tensor: T"], outputs=["output: T"],
                     attrs=["T: type"], shape=lambda ctx: [ctx.shapes[0]],
                     gradient_undefined=True,
                     doc="The tensor, if it lies in host memory pinned for the GPU.")


@tf_export("check_pinned")
def check_pinned(tensor, name=None) -> Tensor:
    """`tf.check_pinned`: `tensor` when it is in pinned host memory; FailedPreconditionError
    without a GPU, InvalidArgumentError when not pinned."""
    return apply_op(CheckPinned, [convert_to_tensor(tensor)], name=name).outputs[0]


ListDiffResult = collections.namedtuple("ListDiff", ["out", "idx"])


@tf_export(v1=["setdiff1d"])
def setdiff1d(x, y, index_dtype=dtypes.int32, name=None) -> ListDiffResult:
    """`tf.compat.v1.setdiff1d`: the entries of 1-D `x` not in `y` (duplicates of `x` kept,
    in order) and their indices in `x`."""
    with composite_name(name, "ListDiff") as final:  # TF's: inputs made in the op's scope
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
    out = apply_op(ListDiff, [x, y], {"out_idx": dtypes.as_dtype(index_dtype)},
                   name=final).outputs
    return ListDiffResult(*out)


@tf_export(v1=["batch_gather"])
def batch_gather(params, indices, name=None) -> Tensor:
    """`tf.compat.v1.batch_gather`: `tf.gather(params, indices, batch_dims=rank(indices)-1)`,
    every leading dimension of `indices` a batch dimension."""
    with scopes.name_scope(name, default_name="BatchGather"):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        if indices.shape.rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        return gather(params, indices, batch_dims=indices.shape.rank - 1)


@tf_export(v1=["clip_by_average_norm"])
def clip_by_average_norm(t, clip_norm, name=None) -> Tensor:
    """`tf.compat.v1.clip_by_average_norm`: `t * clip_norm / max(l2norm(t) / size(t),
    clip_norm)`, TF's formula (with `rsqrt` of the sum of squares)."""
    with composite_name(name, "clip_by_average_norm") as final:
        t = convert_to_tensor(t, name="t")
        n_element = cast(size(t), dtypes.float32)
        l2norm_inv = rsqrt(reduce_sum(multiply(t, t), range_(rank(t))))
        bound = minimum(multiply(l2norm_inv, n_element),
                        truediv(convert_to_tensor(1.0), clip_norm))
        clipped = multiply(multiply(t, clip_norm), bound)
    return identity(clipped, name=final)


@tf_export(v1=["to_bfloat16"])
def to_bfloat16(x, name="ToBFloat16") -> Tensor:
    """`tf.compat.v1.to_bfloat16`: `tf.cast(x, tf.bfloat16)`."""
    if not isinstance(x, (Tensor, CompositeTensor, IndexedSlices)):
        with composite_name(name, "ToBFloat16"):  # TF's cast converts inside its scope
            x = convert_to_tensor(x, name="x")   # (a Python float becomes float32 first)
    return cast(x, dtypes.bfloat16, name=name)


@tf_export(v1=["convert_to_tensor_or_indexed_slices"])
def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """A composite tensor (IndexedSlices, SparseTensor, ...) as it is, anything else through
    `convert_to_tensor`."""
    if isinstance(value, EagerTensor) and not context.executing_eagerly():
        return convert_to_tensor(value, dtype=dtype, name=name)
    if isinstance(value, (CompositeTensor, IndexedSlices)):
        if dtype and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Incompatible tensor conversion requested to `dtype` "
                             f"{dtypes.as_dtype(dtype).name} for `value` ({value}) with dtype "
                             f"{value.dtype.name}.")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


@tf_export(v1=["convert_to_tensor_or_sparse_tensor"])
def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor (or SparseTensorValue, made a SparseTensor) as it is, anything else
    through `convert_to_tensor`."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError(f"Sparse dtype mismatch. Requested: {dtype.name},  Actual: "
                               f"{value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
