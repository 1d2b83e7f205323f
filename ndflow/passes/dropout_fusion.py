"""Remapper rules: a dropout and its gradient become one `_DropoutSelect` each.

`tf.nn.dropout` (and Keras' Dropout on it) is `SelectV2(GreaterEqual(u, rate), Mul(x, scale),
0)` with u uniform random, and its gradient `Mul(SelectV2(GreaterEqual(u, rate), dy, 0),
scale)`: five elementwise ops over the activation's size. Both are `x * scale where u >=
rate, else 0` (kernels/dropout_select.py: one pass, the same values): the GreaterEqual, read
by both selects, is left to no one and pruned, the random draw stays as it is (its values
and its state are the RandomUniform's). rate, scale and the zero must be scalar constants
(or casts of them: under the mixed-precision rewrite x is bfloat16 and u float32), u of the
activation's static shape, and the absorbed Mul/SelectV2 private to the pattern.
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


def _source(t):
    """The tensor a scalar's value comes from: itself, or the input of a Cast between float
    types (the mixed-precision rewrite's casts of the scale and the zero; the kernel repeats
    their rounding, rounding scale to x's type)."""
    if (t.op.type == "Cast" and t.dtype.name in _FLOATS and not t.op.attrs.get("Truncate")
            and t.op.inputs[0].dtype.name in _FLOATS):
        return t.op.inputs[0]
    return t


def _value(t) -> float:
    return float(np.asarray(_source(t).op.attrs["value"]))


def _scalar(view: GraphView, t) -> float | None:
    """The value of a scalar constant (or a cast of one) that is not fed, else None."""
    t = _source(t)
    if t.op.type != "Const" or t.name in view.fed or t.shape.rank != 0:
        return None
    return _value(t)


def _dropout(view: GraphView, m: Match) -> bool:
    out, u, x = m.root.outputs[0], m.tensors["u"], m.tensors["x"]
    rate, scale = _scalar(view, m.tensors["rate"]), _scalar(view, m.tensors["scale"])
    return (out.dtype.name in _FLOATS and u.dtype.name in _FLOATS and x.dtype is out.dtype
            and m.tensors["rate"].dtype is u.dtype and m.tensors["scale"].dtype is x.dtype
            and rate is not None and scale is not None
            and _scalar(view, m.tensors["zero"]) == 0.0
            and u.shape.is_fully_defined() and u.shape == x.shape == out.shape)


def _emit_dropout(rw: GraphRewriter, m: Match) -> Operation:
    out = m.root.outputs[0]
    attrs = {"T": out.dtype, "Tu": m.tensors["u"].dtype,
             "rate": _value(m.tensors["rate"]), "scale": _value(m.tensors["scale"])}
    return rw.add_op(nn_fused.DropoutSelect, [rw.mapped(m.tensors["u"]),
                                              rw.mapped(m.tensors["x"])], attrs,
                     [(out.dtype, out.shape)], m.root.name, control_inputs(rw, m),
                     m.root.device)


RULES = [
    Rule("dropout_grad", _DROPOUT_GRAD, _emit_dropout, _dropout),
    Rule("dropout", _DROPOUT, _emit_dropout, _dropout),
]
