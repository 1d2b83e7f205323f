"""`tf.linalg.tensor_diag` / `tensor_diag_part` (TF1: `tf.diag` / `tf.diag_part`): the Diag
and DiagPart ops, which treat a rank-k tensor as the diagonal of a rank-2k one.

Diag of a [D1..Dk] diagonal is the [D1..Dk, D1..Dk] tensor with `diagonal[i1..ik]` at
[i1..ik, i1..ik] and zeros elsewhere; DiagPart reads it back. Each is the other's gradient.
Graph builds check shapes with the shape functions' messages; eager calls get the kernels'
(kernels/tensor_diag.py), as TensorFlow gives them.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

_TYPES = "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}"


def _diag_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is None:
        return [TensorShape(None)]
    if s.rank == 0 and not context.executing_eagerly():
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return [s.concatenate(s)]


def _diag_part_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is None or context.executing_eagerly():
        return [TensorShape(None) if s.rank is None or s.rank % 2 else s[:s.rank // 2]]
    if s.rank % 2 or s.rank == 0:
        raise ValueError(f"Input must have even and non-zero rank, input rank is {s.rank}")
    k = s.rank // 2
    dims = []
    for a, b in zip(s.dims[:k], s.dims[k:]):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
        dims.append(a if a is not None else b)
    return [TensorShape(dims)]


Diag = op_def("Diag", inputs=["diagonal: T"], outputs=["output: T"], attrs=[_TYPES],
              shape=_diag_shape)
DiagPart = op_def("DiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=[_TYPES],
                  shape=_diag_part_shape)


@tf_export("linalg.tensor_diag", v1=["linalg.tensor_diag", "diag"])
def tensor_diag(diagonal, name=None) -> Tensor:
    """`tf.linalg.tensor_diag`: the rank-2k tensor whose diagonal is the rank-k `diagonal`."""
    return apply_op(Diag, [diagonal], name=name).outputs[0]


@tf_export("linalg.tensor_diag_part", v1=["linalg.tensor_diag_part", "diag_part"])
def tensor_diag_part(input, name=None) -> Tensor:  # noqa: A002
    """`tf.linalg.tensor_diag_part`: the rank-k diagonal of a rank-2k tensor."""
    return apply_op(DiagPart, [input], name=name).outputs[0]


@Diag.def_grad
def _diag_grad(op, grad):
    return [tensor_diag_part(grad)]


@DiagPart.def_grad
def _diag_part_grad(op, grad):
    return [tensor_diag(grad)]
