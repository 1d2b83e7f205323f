"""Remapper rules: a dropout and its gradient become one `_DropoutSelect` each.

`tf.nn.dropout` (and Keras' Dropout on it) is `SelectV2(GreaterEqual(u, rate), Mul(x, scale),
0)` with u uniform random, and its gradient `Mul(SelectV2(GreaterEqual(u, rate), dy, 0),
scale)`: five elementwise ops over the activation's size. Both are `x * scale where u >=
rate, else 0` (kernels/dropout_select.py: one pass, the same values): the GreaterEqual, read
by both selects, is left to no one and pruned, the random draw stays as it is (its values
and its state are the RandomUniform's). rate, scale and the zero must be scalar constants,
u of the activation's static shape, and the absorbed Mul/SelectV2 private to the pattern.
"""

from __future__ import annotations

import numpy as np

from ndflow.core.graph import Operation
from ndflow.ops import nn_fused
from ndflow.passes.graph_rewriter import GraphRewriter
from ndflow.passes.pattern import Any, GraphView, Match, P, Rule, control_inputs

_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
_KEEP = P({"GreaterEqual"}, Any("u"), Any("rate"), name="keep", shared=True)
# forward: where(u >= rate, x * scale, 0)
_DROPOUT = P({"SelectV2"}, _KEEP, P({"Mul"}, Any("x"), Any("scale"), name="scaled",
                                     commutative=True), Any("zero"), name="root")
# gradient: where(u >= rate, dy, 0) * scale
_DROPOUT_GRAD = P({"Mul"}, P({"SelectV2"}, _KEEP, Any("x"), Any("zero"), name="select"),
                  Any("scale"), name="root", commutative=True)


def _scalar(view: GraphView, t) -> float | None:
    """The value of a scalar constant that is not fed, else None."""
    if t.op.type != "Const" or t.name in view.fed or t.shape.rank != 0:
        return None
    return float(np.asarray(t.op.attrs["value"]))


def _dropout(view: GraphView, m: Match) -> bool:
    out, u, x = m.root.outputs[0], m.tensors["u"], m.tensors["x"]
    rate, scale = _scalar(view, m.tensors["rate"]), _scalar(view, m.tensors["scale"])
    return (out.dtype.name in _FLOATS and u.dtype is out.dtype and x.dtype is out.dtype
            and rate is not None and scale is not None
            and _scalar(view, m.tensors["zero"]) == 0.0
            and u.shape.is_fully_defined() and u.shape == x.shape == out.shape)


def _emit_dropout(rw: GraphRewriter, m: Match) -> Operation:
    out = m.root.outputs[0]
    attrs = {"T": out.dtype, "rate": _scalar_value(m, "rate"),
             "scale": _scalar_value(m, "scale")}
    return rw.add_op(nn_fused.DropoutSelect, [rw.mapped(m.tensors["u"]),
                                              rw.mapped(m.tensors["x"])], attrs,
                     [(out.dtype, out.shape)], m.root.name, control_inputs(rw, m),
                     m.root.device)


def _scalar_value(m: Match, key: str) -> float:
    return float(np.asarray(m.tensors[key].op.attrs["value"]))


RULES = [
    Rule("dropout_grad", _DROPOUT_GRAD, _emit_dropout, _dropout),
    Rule("dropout", _DROPOUT, _emit_dropout, _dropout),
]
