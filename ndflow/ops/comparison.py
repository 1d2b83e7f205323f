"""Comparison, logical and float-classification ops (none of them differentiable).

Also home of the shape rules shared by every elementwise op family: `broadcast_shape` and
`unchanged_shape`, and of `composite_name`, which names the ops of a composite function
(`truediv/Cast`, `clip_by_value/Minimum`, then `truediv` itself) as TensorFlow does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.doc_tables import attach
from ndflow.core.shapes import TensorShape, as_shape, broadcast_shapes, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops import comparison_docs
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import BROADCASTING, POINTWISE, op_def

# TF's realnumbertype
REAL = ("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
        "uint64}")
FLOAT = "T: {half, bfloat16, float, double}"


# -- shared shape rules ------------------------------------------------------------------------

def broadcast_error(a, b) -> ValueError:
    """TF's wording: graph construction names the dims, eager execution the shapes."""
    a, b = as_shape(a), as_shape(b)
    if not context.executing_eagerly() and a.rank is not None and b.rank is not None:
        n = max(a.rank, b.rank)
        xa = (1,) * (n - a.rank) + a.as_tuple()
        xb = (1,) * (n - b.rank) + b.as_tuple()
        for da, db in zip(xa, xb):
            if da is not None and db is not None and da != db and 1 not in (da, db):
                return ValueError(f"Dimensions must be equal, but are {da} and {db}")
    return ValueError(f"Incompatible shapes: {fmt(a)} vs. {fmt(b)}")


def broadcast_pair(a, b) -> TensorShape:
    try:
        return broadcast_shapes(a, b)
    except ValueError:
        raise broadcast_error(a, b) from None


def broadcast_shape(ctx) -> list:
    """Shape rule of binary elementwise ops (NumPy broadcasting)."""
    return [broadcast_pair(ctx.shapes[0], ctx.shapes[1])]


def unchanged_shape(ctx) -> list:
    return [ctx.shapes[0]]


@contextlib.contextmanager
def composite_name(name: str | None, default: str) -> Iterator[str]:
    """Scope for the inner ops of a composite; yields the name to give its final op.

    In a graph, `truediv` -> inner ops `truediv/Cast`, final op `truediv` (and `truediv_1/...`,
    `truediv_1` the next time), as TF's `with ops.name_scope(name) as scope: ...(name=scope)`.
    """
    base = name or default
    if context.executing_eagerly():
        yield base
        return
    graph = context.get_default_graph()
    final = graph.unique_name(base, mark_as_used=False)
    with graph.name_scope(final + "/"):
        yield base


# -- comparisons ------------------------------------------------------------------------------

def _compare(name: str, attrs=(REAL,), commutative: bool = False):
    return op_def(name, inputs=["x: T", "y: T"], outputs=["z: bool"], attrs=list(attrs),
                  shape=broadcast_shape, not_differentiable=True, commutative=commutative,
                  tags=[BROADCASTING])


_ALL_TYPES = ("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, uint16, "
              "uint32, uint64, bool, string, "
              "complex64, complex128}")


def _equality_shape(ctx) -> list:
    """With incompatible_shape_error=False, shapes that do not broadcast are no error: the
    result is then a scalar (False for Equal, True for NotEqual)."""
    if ctx.attrs.get("incompatible_shape_error", True):
        return broadcast_shape(ctx)
    try:
        return [broadcast_shapes(ctx.shapes[0], ctx.shapes[1])]
    except ValueError:
        return [TensorShape([])]


def _equality(name: str):
    return op_def(name, inputs=["x: T", "y: T"], outputs=["z: bool"],
                  attrs=[_ALL_TYPES, "incompatible_shape_error: bool = true"],
                  shape=_equality_shape, not_differentiable=True, commutative=True,
                  tags=[BROADCASTING])


Equal = _equality("Equal")
NotEqual = _equality("NotEqual")
Less = _compare("Less")
LessEqual = _compare("LessEqual")
Greater = _compare("Greater")
GreaterEqual = _compare("GreaterEqual")


@tf_export("equal", "math.equal")
def equal(x, y, name=None) -> Tensor:
    """`tf.math.equal`: elementwise x == y with broadcasting."""
    return apply_op(Equal, [x, y], name=name).outputs[0]


@tf_export("math.not_equal", "not_equal")
def not_equal(x, y, name=None) -> Tensor:
    """`tf.math.not_equal`: elementwise x != y with broadcasting."""
    return apply_op(NotEqual, [x, y], name=name).outputs[0]


@tf_export("less", "math.less")
def less(x, y, name=None) -> Tensor:
    """`tf.math.less`: elementwise x < y."""
    return apply_op(Less, [x, y], name=name).outputs[0]


@tf_export("less_equal", "math.less_equal")
def less_equal(x, y, name=None) -> Tensor:
    """`tf.math.less_equal`: elementwise x <= y."""
    return apply_op(LessEqual, [x, y], name=name).outputs[0]


@tf_export("greater", "math.greater")
def greater(x, y, name=None) -> Tensor:
    """`tf.math.greater`: elementwise x > y."""
    return apply_op(Greater, [x, y], name=name).outputs[0]


@tf_export("greater_equal", "math.greater_equal")
def greater_equal(x, y, name=None) -> Tensor:
    """`tf.math.greater_equal`: elementwise x >= y."""
    return apply_op(GreaterEqual, [x, y], name=name).outputs[0]


# -- logical ops ------------------------------------------------------------------------------

LogicalAnd = op_def("LogicalAnd", inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                    shape=broadcast_shape, not_differentiable=True, commutative=True,
                    tags=[BROADCASTING])
LogicalOr = op_def("LogicalOr", inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                   shape=broadcast_shape, not_differentiable=True, commutative=True,
                   tags=[BROADCASTING])
LogicalNot = op_def("LogicalNot", inputs=["x: bool"], outputs=["y: bool"],
                    shape=unchanged_shape, not_differentiable=True, tags=[POINTWISE])


@tf_export("logical_and", "math.logical_and")
def logical_and(x, y, name=None) -> Tensor:
    """`tf.math.logical_and`."""
    return apply_op(LogicalAnd, [x, y], name=name).outputs[0]


@tf_export("logical_or", "math.logical_or")
def logical_or(x, y, name=None) -> Tensor:
    """`tf.math.logical_or`."""
    return apply_op(LogicalOr, [x, y], name=name).outputs[0]


@tf_export("logical_not", "math.logical_not")
def logical_not(x, name=None) -> Tensor:
    """`tf.math.logical_not`."""
    return apply_op(LogicalNot, [x], name=name).outputs[0]


@tf_export("math.logical_xor", v1=["logical_xor", "math.logical_xor"])
def logical_xor(x, y, name="LogicalXor") -> Tensor:
    """`tf.math.logical_xor`: (x | y) & ~(x & y), as TF composes it."""
    with composite_name(name, "LogicalXor") as final:
        either = logical_or(x, y)
        both = logical_not(logical_and(x, y))
    return logical_and(either, both, name=final)


# -- float classification ----------------------------------------------------------------------

def _classify(name: str):
    return op_def(name, inputs=["x: T"], outputs=["y: bool"], attrs=[FLOAT],
                  shape=unchanged_shape, gradient_undefined=True, tags=[POINTWISE])


IsFinite = _classify("IsFinite")
IsNan = _classify("IsNan")
IsInf = _classify("IsInf")
# ndflow-internal: reduce_all(is_finite(x)) in one pass, for the loss-scale optimizers' check of
# every gradient (IsFinite + All cost four passes and a bool buffer of the gradient's size)
AllFinite = op_def("_AllFinite", inputs=["x: T"], outputs=["y: bool"], attrs=[FLOAT],
                   shape=lambda ctx: [TensorShape([])], gradient_undefined=True)


def all_finite(x, name=None) -> Tensor:
    """A scalar bool: every element of the floating tensor `x` is finite."""
    return apply_op(AllFinite, [x], name=name or "AllFinite").outputs[0]


@tf_export("math.is_finite", v1=["debugging.is_finite", "is_finite", "math.is_finite"])
def is_finite(x, name=None) -> Tensor:
    """`tf.math.is_finite`."""
    return apply_op(IsFinite, [x], name=name).outputs[0]


@tf_export("math.is_nan", v1=["debugging.is_nan", "is_nan", "math.is_nan"])
def is_nan(x, name=None) -> Tensor:
    """`tf.math.is_nan`."""
    return apply_op(IsNan, [x], name=name).outputs[0]


@tf_export("math.is_inf", v1=["debugging.is_inf", "is_inf", "math.is_inf"])
def is_inf(x, name=None) -> Tensor:
    """`tf.math.is_inf`."""
    return apply_op(IsInf, [x], name=name).outputs[0]


attach(globals(), comparison_docs.DOCS)
