"""Array ops: Transpose and InvertPermutation (permuting axes), with TF's shape rules."""

from __future__ import annotations

import numpy as np

from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op, constant_value, convert_to_tensor
from ndflow.ops.array_core import INDEX_ATTR, int_input, rank, static_value
from ndflow.ops.array_range import range as range_
from ndflow.ops.array_slicing import strided_slice
from ndflow.ops.op_def import op_def


def _transpose_shape(ctx):
    s, ps = ctx.shapes
    n = ps[0] if ps.rank == 1 else None
    if s.rank is not None and n is not None and s.rank != n:
        raise ValueError(f"Dimension must be {s.rank} but is {n}")
    r = s.rank if s.rank is not None else n
    perm = static_value(ctx, 1)
    if r is None:
        return [TensorShape(None)]
    if perm is None:
        return [TensorShape([None] * r)]
    out = []
    for p in np.asarray(perm).reshape(-1).tolist():
        if not 0 <= p < r:
            raise ValueError(f"perm dim {p} is out of range of input rank {r}")
        out.append(None if s.rank is None else s[p])
    return [TensorShape(out)]


Transpose = op_def("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                   attrs=["T: type", "Tperm: " + INDEX_ATTR], shape=_transpose_shape)
# tf.transpose(conjugate=True) of a complex tensor
ConjugateTranspose = op_def("ConjugateTranspose", inputs=["x: T", "perm: Tperm"],
                            outputs=["y: T"], attrs=["T: type", "Tperm: " + INDEX_ATTR],
                            shape=_transpose_shape)

def _same_shape(ctx):
    s = ctx.shapes[0]
    if s.rank is not None and s.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {s.rank}")
    return [s]


InvertPermutation = op_def("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
                           attrs=["T: {int32, int64} = DT_INT32"], shape=_same_shape,
                           not_differentiable=True)


def _invert_value(t):
    p = constant_value(t.op.inputs[0])
    return None if p is None else np.argsort(p).astype(t.dtype.np_dtype)


InvertPermutation.constant_value = _invert_value


@tf_export("math.invert_permutation", v1=["math.invert_permutation", "invert_permutation"])
def invert_permutation(x, name: str | None = None) -> Tensor:
    """`tf.math.invert_permutation`: y[x[i]] = i for a permutation x of 0..n-1."""
    return apply_op(InvertPermutation, [x], name=name).outputs[0]


@tf_export("transpose")
def transpose(a, perm=None, conjugate: bool = False, name: str = "transpose") -> Tensor:
    """`tf.transpose`: permutes dimensions (reverses them when `perm` is None); with
    `conjugate`, a complex tensor is also conjugated (ConjugateTranspose)."""
    a = convert_to_tensor(a)
    if perm is None:
        if a.shape.rank is None:  # range(rank)[::-1], as TF builds it
            perm = strided_slice(range_(0, rank(a), 1), [0], [0], [-1], begin_mask=1,
                                 end_mask=1)
        else:
            perm = list(range(a.shape.rank - 1, -1, -1))
    op = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
    return apply_op(op, [a, int_input(perm)], name=name).outputs[0]
