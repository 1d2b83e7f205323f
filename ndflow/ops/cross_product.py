"""`tf.linalg.cross` (TF1: `tf.cross`): the Cross op, pairwise cross products of 3-element
vectors along the last dimension of two tensors of one shape.

Its gradient is TF's: d a = cross(b, g), d b = cross(g, a). Graph builds check shapes with
the shape function's messages; eager calls get the kernel's (kernels/cross_product.py).
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def
from ndflow.ops.training import merge_shapes


def _cross_shape(ctx):
    a, b = ctx.shapes
    if context.executing_eagerly():   # the kernel checks, with its own messages
        return [a if a.rank is not None else b]
    for s in (a, b):
        if s.rank == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
    out = merge_shapes(a, b)
    if out.rank is not None and out[-1] is not None and out[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {out[-1]}")
    return [out]


Cross = op_def("Cross", inputs=["a: T", "b: T"], outputs=["product: T"],
               attrs=["T: realnumbertype"], shape=_cross_shape)


@tf_export("linalg.cross", v1=["linalg.cross", "cross"])
def cross(a, b, name=None) -> Tensor:
    """`tf.linalg.cross`: the cross products of the 3-element vectors in `a` and `b`."""
    return apply_op(Cross, [a, b], name=name).outputs[0]


@Cross.def_grad
def _cross_grad(op, grad):
    a, b = op.inputs
    return [cross(b, grad), cross(grad, a)]
