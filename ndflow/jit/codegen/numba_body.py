"""The statements of a generated CPU kernel's loop nest (numba_backend.py renders the nest).

`Body` turns the expressions of a KernelIR into SSA statements, each at the shallowest loop
level where its value changes. A row kernel's row reductions (LayerNorm's mean, variance and
gradient sums) become blocks inside the loop over the rows: reductions that do not read each
other share one loop over the row, and values that a later loop over the same row would
compute again are kept in row arrays. Accumulators: float32 lanes within a row of up to
TWO_LEVEL_MAX elements, float64 (integers int64) across them, so sums agree with ATen's within
rounding.
"""

from __future__ import annotations

import math

from ndflow.core import dtypes
from ndflow.jit.codegen import emitters
from ndflow.jit.codegen.lowering import (
    KernelIR,
    Leaf,
    Literal,
    Node,
    RowReduce,
    compute_dtype,
)


def _np_name(dt) -> str:
    dt = compute_dtype(dt)
    return "np.bool_" if dt.is_bool else f"np.{dt.name}"


def _literal(v, dt) -> str:
    dt = compute_dtype(dt)
    if dt.is_bool:
        return "True" if bool(v) else "False"
    if dt.is_floating:
        f = float(v)
        if math.isnan(f):
            text = "np.nan"
        elif math.isinf(f):
            text = "np.inf" if f > 0 else "-np.inf"
        else:
            text = repr(f)
        return f"{_np_name(dt)}({text})"
    return f"{_np_name(dt)}({int(v)})"


class Body:
    """SSA statements per loop level (-1: before all loops). A row kernel's row reductions are
    blocks at the rows' innermost level, each with a loop over the row whose statements a
    child Body (`parent` set, `floor` the row split) collects: values that vary only per row
    are the parent's, computed once per row before the block."""

    def __init__(self, ir: KernelIR, parent=None, floor: int = -1):
        self.ir = ir
        self.parent = parent
        self.floor = floor
        self.levels: dict = {}
        self.names: dict = {}
        self.depth: dict = {}
        self.n = 0 if parent is None else None
        self.has_rows = False
        # the root's: {row reduction: (rank, RowReduce)} and Node -> row array holding its values
        self.ranks = (_reduction_ranks(ir) if parent is None and ir.row_split is not None
                      else {})
        self.stored: dict = {}

    def emit_row_reductions(self) -> None:
        """Emits the row reductions first, rank by rank, so that their loops can keep values
        for the loops after them (_keep_for_later)."""
        for _, r in sorted(self.ranks.values(), key=lambda kr: kr[0]):
            self.emit(r)

    def _root(self):
        root = self
        while root.parent is not None:
            root = root.parent
        return root

    def _fresh(self, prefix: str = "t") -> str:
        root = self._root()
        root.n += 1
        return f"{prefix}{root.n - 1}"

    def emit(self, e) -> tuple:
        """(name or literal text, depth) of expression `e`."""
        key = e.value if isinstance(e, RowReduce) else e
        if key in self.names:
            return self.names[key], self.depth[key]
        if isinstance(e, Literal):
            return _literal(e.value, e.dtype), -1
        if isinstance(e, RowReduce):
            if self.parent is not None:
                return self.parent.emit(e)
            return self._row_reduce(e, key)
        if isinstance(e, Leaf):
            st = self.ir.leaf_strides[e]
            terms = [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(st) if s]
            depth = max((d for d, s in enumerate(st) if s), default=-1)
            if depth < self.floor:
                return self.parent.emit(e)
            load = f"in{e.index}[{' + '.join(terms) or '0'}]"
            dt = self.ir.input_dtypes[e.index]
            if dt == dtypes.bfloat16:
                load = f"bf16_to_f32({load})"
            elif dt == dtypes.float16:
                load = f"f16_to_f32({load})"
            return self._assign(e, load, depth)
        stored = self._root().stored
        row_array = stored.get(e) if stored else None
        if row_array is not None:   # computed by an earlier loop over this row
            inner = len(self.ir.shape) - 1
            return self._assign(e, f"{row_array}[i{inner}]", inner)
        args = [self.emit(a) for a in e.args]
        depth = max((d for _, d in args), default=-1)
        if depth < self.floor:
            return self.parent.emit(e)
        op = e.op
        k = emitters.EmitContext(op, _literal)
        text = emitters.emitter(op.type)([a for a, _ in args], k)
        text = f"{_np_name(e.dtype)}({text})"
        if e.dtype == dtypes.bfloat16:
            text = f"round_bf16({text})"
        elif e.dtype == dtypes.float16:
            text = f"round_f16({text})"
        return self._assign(e, text, depth)

    def _assign(self, e, text, depth):
        name = self._fresh()
        self.levels.setdefault(depth, []).append(f"{name} = {text}")
        self.names[e], self.depth[e] = name, depth
        return name, depth

    def _row_reduce(self, e: RowReduce, key):
        """The block computing row reduction `e` once per row, at the rows' innermost level:
        an accumulator, a loop nest over the row's dimensions, the finished value. Every other
        reduction of the same rank (see _reduction_ranks: none needs another's result) shares
        the block's one loop, and so its loads and common subexpressions: LayerNorm's gradient
        sums two products of the same recomputed chain, which took a pass over the row each."""
        split, shape = self.ir.row_split, self.ir.shape
        rank = self.ranks[e.value][0]
        group = [e] + [r for v, (k, r) in self.ranks.items()
                       if k == rank and v != e.value and v not in self.names]
        child = Body(self.ir, parent=self, floor=split)
        values = [child.emit(r.arg)[0] for r in group]
        self._keep_for_later(child, rank)
        lines, inner = [], {}
        for r in group:
            acc = self._fresh("r")
            inner[acc] = (f"q{acc}" if len(shape) > split and two_level(r, shape[-1])
                          else None)
            lines.append(f"{acc} = {acc_init(r)}")
        for d in range(split, len(shape)):
            pad = "    " * (d - split)
            if d == len(shape) - 1:
                lines += [f"{pad}{q} = np.float32(0)" for q in inner.values() if q]
            lines.append(f"{pad}for i{d} in range({shape[d]}):")
            lines += [f"{pad}    {st}" for st in child.levels.get(d, [])]
        pad = "    " * (len(shape) - split)
        for r, value, (acc, q) in zip(group, values, inner.items()):
            if q:
                lines.append(pad + f"{q} = {q} + np.float32({value})")
            else:
                lines.append(pad + f"{acc} = " + ACCUMULATE[r.reduce][0].format(
                    a=acc, v=f"{acc_type(r)}({value})"))
        lines += [pad[4:] + f"{acc} = {acc} + np.float64({q})" for acc, q in inner.items() if q]
        depth = split - 1
        for r, acc in zip(group, inner):
            name = self._fresh()
            lines.append(f"{name} = {acc_final(r, acc)}")
            self.names[r.value], self.depth[r.value] = name, depth
        self.levels.setdefault(depth, []).append("\n".join(lines))
        self.has_rows = True
        return self.names[key], depth

    def _keep_for_later(self, child, rank: int):
        """Has the reduction loop `child` store into row arrays the values that later loops
        over the row (the outputs' loop, reductions of higher rank) would otherwise compute
        again: those of them that cost KEEP_MIN_OPS ops or more. LayerNorm's gradient
        recomputed its whole chain (~30 ops an element) in the final loop."""
        shape, inner = self.ir.shape, len(self.ir.shape) - 1
        if inner != self.ir.row_split:   # one inner dimension only
            return
        computed = {k for k, d in child.depth.items() if isinstance(k, Node) and d == inner}
        later = [o.expr for o in self.ir.outputs]
        later += [r.arg for k, r in self.ranks.values() if k > rank]
        frontier, seen = [], set()

        def walk(e):
            if id(e) in seen or not isinstance(e, Node):
                return
            seen.add(id(e))
            if e in computed:
                frontier.append(e)
            else:
                for a in e.args:
                    walk(a)

        for e in later:
            walk(e)
        for e in frontier:
            dt = compute_dtype(e.dtype)
            if not dt.is_floating or _ops_in(e, computed) < KEEP_MIN_OPS:
                continue
            name = self._fresh("row")
            self.levels.setdefault(-1, []).append(
                f"{name} = np.empty({shape[inner]}, {_np_name(dt)})")
            child.levels[inner].append(f"{name}[i{inner}] = {child.names[e]}")
            self.stored[e] = name


KEEP_MIN_OPS = 4


def _ops_in(e, computed: set) -> int:
    """The number of distinct nodes of `computed` that `e` is made of."""
    seen, stack = set(), [e]
    while stack:
        n = stack.pop()
        if id(n) in seen or n not in computed:
            continue
        seen.add(id(n))
        stack.extend(a for a in n.args if isinstance(a, Node))
    return len(seen)


def _reduction_ranks(ir: KernelIR) -> dict:
    """{row reduction's value: (rank, the RowReduce)}: rank 0 reads no row reduction, rank k
    reads one of rank k - 1 at most; reductions of one rank can run in one loop."""
    ranks, memo = {}, {}

    def walk(e) -> int:
        if id(e) in memo:
            return memo[id(e)]
        if isinstance(e, RowReduce):
            level = walk(e.arg) + 1
            ranks.setdefault(e.value, (level, e))
        elif isinstance(e, Node):
            level = max((walk(a) for a in e.args), default=-1)
        else:
            level = -1
        memo[id(e)] = level
        return level

    for o in ir.outputs:
        walk(o.expr)
    return ranks


# Innermost loops up to this long sum float32 values in float32 (vectorized lanes of partial
# sums), added into the float64 accumulator once per loop: converting every element to float64
# halved the vector width (the MLP's LayerNorm + GELU + loss kernel: 0.43 -> 0.26 ms).
TWO_LEVEL_MAX = 4096


def two_level(o, n_inner) -> bool:
    """Whether sum/mean `o` accumulates its innermost loop (of `n_inner` iterations, None when
    the chunk bound) in float32 first."""
    return (o.reduce in ("sum", "mean") and compute_dtype(o.dtype) is dtypes.float32
            and n_inner is not None and n_inner <= TWO_LEVEL_MAX)


def storage_value(value: str, dt) -> str:
    if dt == dtypes.bfloat16:
        return f"f32_to_bf16({value})"
    if dt == dtypes.float16:
        return f"f32_to_f16({value})"
    return value


ACCUMULATE = {"sum": ("{a} + {v}", "0"), "mean": ("{a} + {v}", "0"), "prod": ("{a} * {v}", "1"),
        "max": ("maximum({a}, {v})", None), "min": ("minimum({a}, {v})", None),
        "all": ("{a} & {v}", "True"), "any": ("{a} | {v}", "False")}


def acc_type(o) -> str:
    if o.reduce in ("all", "any"):
        return "np.bool_"
    dt = compute_dtype(o.dtype)
    if o.reduce in ("max", "min"):
        return _np_name(dt)
    return "np.float64" if dt.is_floating else "np.int64"


def acc_init(o) -> str:
    op, init = ACCUMULATE[o.reduce]
    if init is not None:
        return f"{acc_type(o)}({init})"
    dt = compute_dtype(o.dtype)
    lowest = o.reduce == "max"
    if dt.is_floating:
        return f"{_np_name(dt)}({'-np.inf' if lowest else 'np.inf'})"
    return f"{_np_name(dt)}({dt.min if lowest else dt.max})"


def acc_final(o, a: str) -> str:
    dt = compute_dtype(o.dtype)
    if o.reduce == "mean":
        a = (f"({a} / {o.count})" if dt.is_floating else f"trunc_div({a}, {max(o.count, 1)})")
    return storage_value(f"{_np_name(dt)}({a})", o.dtype)
