"""TF's linear-algebra composites over MatMul/Transpose/Reshape: `tf.tensordot`,
`tf.linalg.matvec`, `tf.linalg.matrix_transpose` (`tf.linalg.transpose`).

Each follows TF's Python implementation (math_ops.tensordot, math_ops.matvec,
array_ops.matrix_transpose) op for op, so graphs match TF's node by node.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.scopes import name_scope
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops import array_core, array_gather, array_range, array_slicing, array_transpose
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.comparison import composite_name
from ndflow.ops.linalg import matmul
from ndflow.ops.reduction import reduce_prod


def _tensordot_axes(a: Tensor, axes) -> tuple:
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        rank = a.shape.rank
        if rank is None:
            raise ValueError("tensordot with an integer `axes` needs `a` of known rank")
        if axes > rank:
            raise ValueError(f"`axes` must not be larger than the number of dimensions of "
                             f"tensor {a}.  Received {axes}, vs tensor dimensions {rank}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
        a_axes, b_axes = axes
        if isinstance(a_axes, int) and isinstance(b_axes, int):
            a_axes, b_axes = [a_axes], [b_axes]
        a_axes, b_axes = list(a_axes), list(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes `a` and `b`, "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    raise TypeError(f"tensordot `axes` must be an int or a pair of axis lists, got {axes!r}")


def _tensordot_reshape(a: Tensor, axes: list, flipped: bool = False) -> tuple:
    """(a transposed and reshaped to a matrix, free dims (list or tensor), static free dims)."""
    if a.shape.rank is None:
        raise ValueError("tensordot needs operands of known rank")
    shape_a = a.shape.as_list()
    axes = [i if i >= 0 else i + len(shape_a) for i in axes]
    free = [i for i in range(len(shape_a)) if i not in axes]
    free_dims = [shape_a[i] for i in free]
    perm = axes + free if flipped else free + axes
    if a.shape.is_fully_defined():
        prod_free, prod_axes = 1, 1
        for i in free:
            prod_free *= shape_a[i]
        for i in axes:
            prod_axes *= shape_a[i]
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        a_t = array_transpose.transpose(a, perm) if perm != list(range(len(shape_a))) else a
        if a_t.shape.as_list() != new_shape:
            a_t = array_core.reshape(a_t, new_shape)
        return a_t, free_dims, free_dims
    dyn_shape = array_core.shape(a)
    dyn_free = array_gather.gather(dyn_shape, array_core.constant(free, dtypes.int32, name="free"))
    dyn_axes = array_gather.gather(dyn_shape, array_core.constant(axes, dtypes.int32, name="axes"))
    prod_free, prod_axes = reduce_prod(dyn_free), reduce_prod(dyn_axes)
    new_shape = array_core.stack([prod_axes, prod_free] if flipped else [prod_free, prod_axes])
    return array_core.reshape(array_transpose.transpose(a, perm), new_shape), dyn_free, free_dims


@tf_export("linalg.tensordot", "tensordot")
def tensordot(a, b, axes, name: str | None = None) -> Tensor:
    """`tf.tensordot`: contracts `axes` of `a` with those of `b` (Transpose+Reshape+MatMul)."""
    with composite_name(name, "Tensordot") as final:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_mat, a_free, a_static = _tensordot_reshape(a, a_axes)
        b_mat, b_free, b_static = _tensordot_reshape(b, b_axes, True)
        ab = matmul(a_mat, b_mat)
        static = TensorShape(a_static + b_static)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if ab.shape.as_list() == a_free + b_free:
                return ab
            new_shape = a_free + b_free
        else:
            if not isinstance(a_free, Tensor):
                a_free = array_core.constant(a_free, dtypes.int32)
            if not isinstance(b_free, Tensor):
                b_free = array_core.constant(b_free, dtypes.int32)
            new_shape = array_slicing.concat([a_free, b_free], 0)
    product = array_core.reshape(ab, new_shape, name=final)
    if product.shape.is_compatible_with(static) and hasattr(product, "set_shape"):
        product.set_shape(product.shape.merge_with(static))
    return product


@tf_export("linalg.matvec")
def matvec(a, b, transpose_a: bool = False, adjoint_a: bool = False,
           a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: str | None = None) -> Tensor:
    """`tf.linalg.matvec`: `a @ b` for matrices `a` [..., M, N] and vectors `b` [..., N]."""
    with name_scope(name, "MatVec"):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        out = matmul(a, array_core.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_core.squeeze(out, -1)


@tf_export("linalg.matrix_transpose",
           v1=["linalg.matrix_transpose", "linalg.transpose", "matrix_transpose"])
def matrix_transpose(a, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """`tf.linalg.matrix_transpose`: swaps the last two dims (and conjugates a complex matrix
    with `conjugate`)."""
    with name_scope(name):
        a = convert_to_tensor(a, name="a")
        rank = a.shape.rank
        if rank is not None:
            if rank < 2:
                raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  "
                                 f"Received `a` = {a} with shape: {a.shape}")
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        else:
            r = array_core.rank(a)
            lead = array_range.range(r - 2)
            perm = array_slicing.concat([lead, array_core.stack([r - 1, r - 2])], 0)
        return array_transpose.transpose(a, perm, conjugate=conjugate)
