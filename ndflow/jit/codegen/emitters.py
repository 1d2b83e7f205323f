"""What the code generator can emit: one scalar expression per op, with TensorFlow's semantics.

Backend-neutral: an emitter turns its operands' expressions (strings, already in the op's
compute type) into the expression of its result, using only

- arithmetic and comparison operators, `&`, `|`, `^` on booleans,
- the primitives every backend defines: `exp log log1p expm1 sqrt tanh erf floor ceil rint
  fabs fmod isnan isinf isfinite sin cos pow select(c, a, b) maximum(a, b) minimum(a, b)`
  (maximum/minimum propagate NaN, as ATen's),
- `k.c(v)`: a literal of the op's compute type.

The backend casts every result to its compute type (float32 for half/bfloat16/float32, which
are rounded back at each op producing them, as ATen rounds each op), so an emitter never
worries about integer promotion. The shape side (broadcasting, BiasAdd's channel axis,
Reshape/ExpandDims/Squeeze/BroadcastTo, reductions over constant axes) is in lowering.py.
"""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

FLOATS = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64})
INTS = frozenset({dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8})
SUPPORTED = FLOATS | INTS | {dtypes.bool}


class EmitContext:
    """What an emitter may ask: the op's attrs, dtypes, and typed literals."""

    def __init__(self, op, literal):
        self.op = op
        self.attrs = op.attrs
        self.in_dtype = op.inputs[0].dtype if op.inputs else op.outputs[0].dtype
        self.out_dtype = op.outputs[0].dtype
        self._literal = literal

    def c(self, v):
        """`v` as a literal of the operands' compute type."""
        return self._literal(v, self.in_dtype)


def _sel(c, a, b):
    return f"select({c}, {a}, {b})"


def _sigmoid(x, k):
    return f"({k.c(1)} / ({k.c(1)} + exp(-{x})))"


def _floor_mod(x, y, k):
    # ATen's remainder (TF's FloorMod for floats): fmod, moved to the divisor's sign.
    m = f"fmod({x}, {y})"
    return _sel(f"({m} != {k.c(0)}) & (({y} < {k.c(0)}) != ({m} < {k.c(0)}))",
                f"({m} + {y})", m)


def _sign(x, k):
    if k.in_dtype.is_floating:  # NaN stays NaN
        return _sel(f"{x} > {k.c(0)}", k.c(1), _sel(f"{x} < {k.c(0)}", k.c(-1),
                                                    _sel(f"{x} == {k.c(0)}", k.c(0), x)))
    return _sel(f"{x} > {k.c(0)}", k.c(1), _sel(f"{x} < {k.c(0)}", k.c(-1), k.c(0)))


def _abs(x, k):
    if k.in_dtype.is_floating:
        return f"fabs({x})"
    return _sel(f"{x} < {k.c(0)}", f"(-{x})", x)


# op type -> (emitter(args, k) -> expr, allowed input dtypes, expensive)
# "expensive" is XLA's list (exp, log, tanh, sqrt, rsqrt, pow, erf, float divide, ...): such a
# producer is never duplicated.
_F, _FI, _ALL = FLOATS, FLOATS | INTS, SUPPORTED
_TABLE: dict = {
    # unary
    "Identity": (lambda a, k: a[0], _ALL, False),
    "Snapshot": (lambda a, k: a[0], _ALL, False),
    "StopGradient": (lambda a, k: a[0], _ALL, False),
    "PreventGradient": (lambda a, k: a[0], _ALL, False),
    "Neg": (lambda a, k: f"(-{a[0]})", _FI, False),
    "Abs": (lambda a, k: _abs(a[0], k), _FI, False),
    "Sign": (lambda a, k: _sign(a[0], k), _FI, False),
    "Square": (lambda a, k: f"({a[0]} * {a[0]})", _FI, False),
    "Relu": (lambda a, k: _sel(f"{a[0]} < {k.c(0)}", k.c(0), a[0]), _FI, False),
    "Relu6": (lambda a, k: _sel(f"{a[0]} < {k.c(0)}", k.c(0),
                                _sel(f"{a[0]} > {k.c(6)}", k.c(6), a[0])), _FI, False),
    "Elu": (lambda a, k: _sel(f"{a[0]} > {k.c(0)}", a[0], f"expm1({a[0]})"), _F, True),
    "Selu": (lambda a, k: f"({k.c(_SELU_SCALE)} * "
             + _sel(f"{a[0]} > {k.c(0)}", a[0], f"({k.c(_SELU_ALPHA)} * expm1({a[0]}))") + ")",
             _F, True),
    "LeakyRelu": (lambda a, k: _sel(f"{a[0]} > {k.c(0)}", a[0],
                                    f"({a[0]} * {k.c(float(k.attrs.get('alpha', 0.2)))})"),
                  _F, False),
    "Sigmoid": (lambda a, k: _sigmoid(a[0], k), _F, True),
    "Tanh": (lambda a, k: f"tanh({a[0]})", _F, True),
    "Exp": (lambda a, k: f"exp({a[0]})", _F, True),
    "Expm1": (lambda a, k: f"expm1({a[0]})", _F, True),
    "Log": (lambda a, k: f"log({a[0]})", _F, True),
    "Log1p": (lambda a, k: f"log1p({a[0]})", _F, True),
    "Sqrt": (lambda a, k: f"sqrt({a[0]})", _F, True),
    "Rsqrt": (lambda a, k: f"({k.c(1)} / sqrt({a[0]}))", _F, True),
    "Reciprocal": (lambda a, k: f"({k.c(1)} / {a[0]})", _F, True),
    "Inv": (lambda a, k: f"({k.c(1)} / {a[0]})", _F, True),
    "Floor": (lambda a, k: f"floor({a[0]})", _F, False),
    "Ceil": (lambda a, k: f"ceil({a[0]})", _F, False),
    "Rint": (lambda a, k: f"rint({a[0]})", _F, False),
    "Round": (lambda a, k: f"rint({a[0]})" if k.in_dtype.is_floating else a[0], _FI, False),
    "Erf": (lambda a, k: f"erf({a[0]})", _F, True),
    "Sin": (lambda a, k: f"sin({a[0]})", _F, True),
    "Cos": (lambda a, k: f"cos({a[0]})", _F, True),
    "Softplus": (lambda a, k: _sel(f"{a[0]} > {k.c(20)}", a[0], f"log1p(exp({a[0]}))"),
                 _F, True),
    "Softsign": (lambda a, k: f"({a[0]} / ({k.c(1)} + fabs({a[0]})))", _F, True),
    "IsNan": (lambda a, k: f"isnan({a[0]})", _F, False),
    "IsInf": (lambda a, k: f"isinf({a[0]})", _F, False),
    "IsFinite": (lambda a, k: f"isfinite({a[0]})", _F, False),
    "LogicalNot": (lambda a, k: f"({a[0]} ^ True)", {dtypes.bool}, False),
    "Cast": (lambda a, k: (f"({a[0]} != {k.c(0)})" if k.out_dtype.is_bool else a[0]),
             _ALL, False),
    # binary
    "Add": (lambda a, k: f"({a[0]} + {a[1]})", _FI, False),
    "AddV2": (lambda a, k: f"({a[0]} + {a[1]})", _FI, False),
    "BiasAdd": (lambda a, k: f"({a[0]} + {a[1]})", _FI, False),
    "Sub": (lambda a, k: f"({a[0]} - {a[1]})", _FI, False),
    "Mul": (lambda a, k: f"({a[0]} * {a[1]})", _FI, False),
    "RealDiv": (lambda a, k: f"({a[0]} / {a[1]})", _F, True),
    "Div": (lambda a, k: f"({a[0]} / {a[1]})", _F, True),
    "DivNoNan": (lambda a, k: _sel(f"{a[1]} == {k.c(0)}", k.c(0), f"({a[0]} / {a[1]})"),
                 _F, True),
    "MulNoNan": (lambda a, k: _sel(f"{a[1]} == {k.c(0)}", k.c(0), f"({a[0]} * {a[1]})"),
                 _F, False),
    "FloorDiv": (lambda a, k: f"floor({a[0]} / {a[1]})", _F, True),
    "FloorMod": (lambda a, k: _floor_mod(a[0], a[1], k), _F, True),
    "Maximum": (lambda a, k: f"maximum({a[0]}, {a[1]})", _FI, False),
    "Minimum": (lambda a, k: f"minimum({a[0]}, {a[1]})", _FI, False),
    "Pow": (lambda a, k: f"pow({a[0]}, {a[1]})", _F, True),
    "SquaredDifference": (lambda a, k: f"(({a[0]} - {a[1]}) * ({a[0]} - {a[1]}))", _FI, False),
    "Equal": (lambda a, k: f"({a[0]} == {a[1]})", _ALL, False),
    "NotEqual": (lambda a, k: f"({a[0]} != {a[1]})", _ALL, False),
    "Less": (lambda a, k: f"({a[0]} < {a[1]})", _FI, False),
    "LessEqual": (lambda a, k: f"({a[0]} <= {a[1]})", _FI, False),
    "Greater": (lambda a, k: f"({a[0]} > {a[1]})", _FI, False),
    "GreaterEqual": (lambda a, k: f"({a[0]} >= {a[1]})", _FI, False),
    "LogicalAnd": (lambda a, k: f"({a[0]} & {a[1]})", {dtypes.bool}, False),
    "LogicalOr": (lambda a, k: f"({a[0]} | {a[1]})", {dtypes.bool}, False),
    # gradients (TF's argument order)
    # as ndflow's kernels: ATen's threshold_backward passes the gradient at a NaN feature,
    # Relu6Grad (TF's features > 0 & features < 6) does not
    "ReluGrad": (lambda a, k: _sel(f"{a[1]} <= {k.c(0)}", k.c(0), a[0]), _FI, False),
    "Relu6Grad": (lambda a, k: _sel(f"({a[1]} > {k.c(0)}) & ({a[1]} < {k.c(6)})", a[0],
                                    k.c(0)), _FI, False),
    "EluGrad": (lambda a, k: _sel(f"{a[1]} <= {k.c(0)}", f"({a[0]} * ({a[1]} + {k.c(1)}))",
                                  a[0]), _F, False),
    "SeluGrad": (lambda a, k: _sel(f"{a[1]} < {k.c(0)}",
                                   f"({a[0]} * ({a[1]} + {k.c(_SELU_ALPHA * _SELU_SCALE)}))",
                                   f"({a[0]} * {k.c(_SELU_SCALE)})"), _F, False),
    "LeakyReluGrad": (lambda a, k: _sel(f"{a[1]} > {k.c(0)}", a[0],
                                        f"({a[0]} * {k.c(float(k.attrs.get('alpha', 0.2)))})"),
                      _F, False),
    "SoftplusGrad": (lambda a, k: f"({a[0]} * {_sigmoid(a[1], k)})", _F, True),
    "SigmoidGrad": (lambda a, k: f"({a[1]} * ({k.c(1)} - {a[0]}) * {a[0]})", _F, False),
    "TanhGrad": (lambda a, k: f"({a[1]} * ({k.c(1)} - {a[0]} * {a[0]}))", _F, False),
    "RsqrtGrad": (lambda a, k: f"({a[0]} * {a[0]} * {a[0]} * {a[1]} * {k.c(-0.5)})",
                  _F, False),
    "SqrtGrad": (lambda a, k: f"({a[1]} / {a[0]} * {k.c(0.5)})", _F, True),
    "ReciprocalGrad": (lambda a, k: f"(-({a[1]} * {a[0]} * {a[0]}))", _F, False),
    # ternary / n-ary
    "Select": (lambda a, k: _sel(a[0], a[1], a[2]), _ALL, False),
    "SelectV2": (lambda a, k: _sel(a[0], a[1], a[2]), _ALL, False),
    "AddN": (lambda a, k: "(" + " + ".join(a) + ")", _FI, False),
}

# Shape ops: no expression, only a different view of their first input.
SHAPE_OPS = frozenset({"Reshape", "ExpandDims", "Squeeze", "BroadcastTo", "Transpose", "Tile"})
# Shape ops whose result reads elements more than once (a broadcast of size-1 dimensions:
# the gradient of a mean or sum tiles its reduced dimensions this way).
BROADCAST_OPS = frozenset({"BroadcastTo", "Tile"})
_STATIC_OPERAND_OPS = ("Reshape", "ExpandDims", "BroadcastTo", "Transpose", "Tile")
# Reductions (input fusion roots): op type -> accumulator kind.
REDUCTIONS = {"Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min", "Prod": "prod",
              "All": "all", "Any": "any"}
# Consts of at most this many elements are baked into a kernel as literals.
SMALL_CONST = 1


def emitter(op_type: str):
    """The emitter of `op_type` (KeyError if codegen has none)."""
    return _TABLE[op_type][0]


def emitted_op_types() -> frozenset:
    """Every op type codegen can fuse: elementwise, shape and reduction ops."""
    return frozenset(_TABLE) | SHAPE_OPS | frozenset(REDUCTIONS) | {"Const"}


def is_reduction(op) -> bool:
    return op.type in REDUCTIONS


def row_reductions(ops) -> list:
    """The reductions among `ops` that another op of `ops` reads: the group is a row kernel
    (jit/fusion.py), every reduction in it a per-row value."""
    inside = set(ops)
    return [op for op in ops if is_reduction(op)
            and any(c in inside for c in op.outputs[0].consumers())]


def root_reductions(ops) -> list:
    """An input fusion's roots (heroes): its reductions, none in a row kernel."""
    return [] if row_reductions(ops) else [op for op in ops if is_reduction(op)]


def is_expensive(op) -> bool:
    entry = _TABLE.get(op.type)
    if entry is not None:
        return entry[2]
    return op.type in REDUCTIONS


def const_value(t):
    """The value of `t` when a Const produces it, else None."""
    if t.op.type != "Const":
        return None
    return np.asarray(t.op.attrs["value"])


def static_input_indices(op) -> tuple:
    """Indices of inputs read as static values (axes, shapes), not as elements."""
    if op.type in REDUCTIONS or op.type in _STATIC_OPERAND_OPS:
        return (1,)
    return ()


def static_axes(op):
    """A reduction's constant axes as a sorted tuple (None when not constant)."""
    v = const_value(op.inputs[1])
    if v is None:
        return None
    rank = op.inputs[0].shape.rank
    axes = [int(a) for a in np.ravel(v)]
    if rank is None:
        return tuple(axes)
    return tuple(sorted({a % max(rank, 1) for a in axes})) if rank else ()


def is_small_const(op) -> bool:
    v = np.asarray(op.attrs["value"])
    return v.size <= SMALL_CONST and op.outputs[0].dtype in SUPPORTED


def can_emit(op) -> bool:
    """Whether codegen can put `op` into a generated kernel (its type, dtypes and, for shape
    ops and reductions, constant axes/shapes)."""
    t = op.type
    if len(op.outputs) != 1 or any(x.dtype not in SUPPORTED for x in op.outputs):
        return False
    if t == "Const":
        return is_small_const(op)
    if any(x.dtype not in SUPPORTED for x in op.inputs):
        return False
    if t in REDUCTIONS or t in _STATIC_OPERAND_OPS:
        if const_value(op.inputs[1]) is None:
            return False
        if t == "Tile":
            return _tile_is_broadcast(op)
        return t not in REDUCTIONS or _reduction_ok(op)
    if t == "Squeeze":
        return True
    entry = _TABLE.get(t)
    if entry is None:
        return False
    if t in ("Select", "SelectV2"):
        ok = entry[1]
        return op.inputs[1].dtype in ok and (t == "SelectV2" or _select_same_shape(op))
    if t == "Cast":
        return True
    if t == "BiasAdd" and op.attrs.get("data_format", "NHWC") not in ("NHWC", "NCHW",
                                                                      b"NHWC", b"NCHW"):
        return False
    return all(x.dtype in entry[1] for x in op.inputs)


def _tile_is_broadcast(op) -> bool:
    """A Tile that repeats only dimensions of size 1 is a broadcast (a view of its input);
    other tilings copy blocks and stay library calls."""
    shape, multiples = op.inputs[0].shape, const_value(op.inputs[1])
    if not shape.is_fully_defined() or multiples is None:
        return False
    dims, reps = shape.as_list(), [int(m) for m in multiples.reshape(-1)]
    return len(dims) == len(reps) and all(m == 1 or d == 1 for d, m in zip(dims, reps))


def _reduction_ok(op) -> bool:
    dt = op.inputs[0].dtype
    if op.type in ("All", "Any"):
        return dt.is_bool
    return dt in FLOATS or dt in INTS


def _select_same_shape(op) -> bool:
    # TF1 Select with a vector condition picks whole rows: not a broadcast, not fused.
    c, t = op.inputs[0].shape, op.inputs[1].shape
    return c.rank == 0 or (c.rank is not None and c.rank == t.rank)
