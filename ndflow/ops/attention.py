"""Scaled dot-product attention as one op (issue 54, item 4), as XLA fuses it on GPUs.

`_ScaledDotProductAttention(query, key, value, mask)` is ndflow-internal (no TensorFlow
counterpart): `softmax(scale * query . key, over the keys) . value` for query (batch, T,
heads, depth), key (batch, S, heads, depth) and value (batch, S, heads, value_depth), Keras'
layout (`BTNH`), returning the output (batch, T, heads, value_depth) and each query row's
log-sum-exp of its scaled scores (batch, heads, T; float32 for 16-bit T), which the gradient
op reads instead of a (T, S) probability matrix. `mask` is empty or one bool tensor that
broadcasts to (batch, heads, T, S): a False position's score becomes -0.7 x the largest
float of T before the softmax, as `keras.ops.dot_product_attention` writes it, so a query row
whose keys are all masked averages every value (TF's numbers, not NaN).

Keras' `MultiHeadAttention` (no dropout, no returned scores) and `keras.ops.
dot_product_attention` build it; the probabilities never exist as a tensor. Functions traced
while a SavedModel is written keep the portable Einsum/Softmax form (core/save_context), so
TensorFlow serves the file. Kernels: kernels/attention.py.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape, broadcast_shapes
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def

_ATTRS = ["T: {half, bfloat16, float, double}", "Tstats: {float, double}", "scale: float",
          "Nmask: int >= 0"]


def _dims(shape: TensorShape, name: str) -> list:
    if shape.rank is not None and shape.rank != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {shape.rank} for '{name}' "
                         "(batch, length, heads, depth)")
    return [None] * 4 if shape.rank is None else shape.as_list()


def _same(a, b, what: str):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b} ({what})")
    return a if a is not None else b


def _forward_shape(ctx):
    q, k, v = (_dims(ctx.shapes[i], n) for i, n in enumerate(("query", "key", "value")))
    if ctx.attrs["Nmask"] > 1:
        raise ValueError(f"Nmask must be 0 or 1, got {ctx.attrs['Nmask']}")
    batch = _same(_same(q[0], k[0], "query and key batch"), v[0], "key and value batch")
    heads = _same(_same(q[2], k[2], "query and key heads"), v[2], "key and value heads")
    keys = _same(k[1], v[1], "key and value length")
    _same(q[3], k[3], "query and key depth")
    if ctx.attrs["Nmask"]:
        mask = ctx.shapes[3]
        if mask.rank is not None and mask.rank > 4:
            raise ValueError(f"mask must be of rank at most 4, got rank {mask.rank}")
        broadcast_shapes(mask, TensorShape([batch, heads, q[1], keys]))
    return [TensorShape([batch, q[1], heads, v[3]]), TensorShape([batch, heads, q[1]])]


ScaledDotProductAttention = op_def(
    "_ScaledDotProductAttention",
    inputs=["query: T", "key: T", "value: T", "mask: Nmask * bool"],
    outputs=["output: T", "logsumexp: Tstats"], attrs=_ATTRS, shape=_forward_shape,
    doc="softmax(scale * query . key) . value over each query row's keys, in one kernel.")

ScaledDotProductAttentionGrad = op_def(
    "_ScaledDotProductAttentionGrad",
    inputs=["output_backprop: T", "query: T", "key: T", "value: T", "output: T",
            "logsumexp: Tstats", "mask: Nmask * bool"],
    outputs=["query_backprop: T", "key_backprop: T", "value_backprop: T"], attrs=_ATTRS,
    shape=lambda ctx: [ctx.shapes[1], ctx.shapes[2], ctx.shapes[3]], gradient_undefined=True,
    doc="_ScaledDotProductAttention's gradient w.r.t. query, key and value.")


@ScaledDotProductAttention.def_grad
def _attention_grad(op, grad, _grad_stats):
    attrs = {k: op.get_attr(k) for k in ("scale", "Tstats")}
    masks = list(op.inputs[3:])
    dq, dk, dv = apply_op(ScaledDotProductAttentionGrad,
                          [grad, *op.inputs[:3], op.outputs[0], op.outputs[1], masks],
                          attrs, name="ScaledDotProductAttentionGrad").outputs
    return [dq, dk, dv, *([None] * len(masks))]


def scaled_dot_product_attention(query, key, value, scale: float, mask=None, name=None):
    """The attention output (batch, T, heads, value_depth) of BTNH tensors of one float
    dtype; `mask` None or a bool tensor broadcasting to (batch, heads, T, S)."""
    stats = dtypes.float64 if query.dtype == dtypes.float64 else dtypes.float32
    op = apply_op(ScaledDotProductAttention,
                  [query, key, value, [] if mask is None else [mask]],
                  {"scale": float(scale), "Tstats": stats},
                  name=name or "ScaledDotProductAttention")   # a node name has no leading _
    return op.outputs[0]
