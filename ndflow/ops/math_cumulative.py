"""Cumulative ops: Cumsum, Cumprod and CumulativeLogsumexp (`tf.cumsum`, `tf.math.cumprod`,
`tf.math.cumulative_logsumexp`); gradients in math_grad.py."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.tensor import Tensor
from ndflow.ops import math_cumulative_docs
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.array_core import int_input
from ndflow.ops.comparison import unchanged_shape
from ndflow.ops.op_def import op_def


def _scan_shape(ctx):
    if ctx.shapes[1].rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[1].rank}")
    return unchanged_shape(ctx)


def _scan_op(name: str, types: str = "numbertype"):
    return op_def(name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                  attrs=["exclusive: bool = false", "reverse: bool = false", f"T: {types}",
                         "Tidx: {int32, int64} = DT_INT32"], shape=_scan_shape)


Cumsum = _scan_op("Cumsum")
Cumprod = _scan_op("Cumprod")
CumulativeLogsumexp = _scan_op("CumulativeLogsumexp", "{half, bfloat16, float, double}")


def _scan(op_def_, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x, name="x")
    return apply_op(op_def_, [x, int_input(axis)],
                    {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                    name=name or op_def_.name).outputs[0]


@tf_export("cumsum", "math.cumsum")
def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """`tf.math.cumsum`: running sums along `axis` (exclusive: shifted by one; reverse: from
    the end)."""
    return _scan(Cumsum, x, axis, exclusive, reverse, name)


@tf_export("math.cumprod", v1=["cumprod", "math.cumprod"])
def cumprod(x, axis=0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """`tf.math.cumprod`: running products along `axis`."""
    return _scan(Cumprod, x, axis, exclusive, reverse, name)


@tf_export("math.cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """`tf.math.cumulative_logsumexp`: log(cumsum(exp(x))) along `axis`, without
    overflow (exclusive: the first entry is -inf)."""
    return _scan(CumulativeLogsumexp, x, axis, exclusive, reverse, name)


attach(globals(), math_cumulative_docs.DOCS)
