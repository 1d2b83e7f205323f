"""A fusion group lowered to a backend-neutral loop description (`KernelIR`).

Every value of the group is a *virtual array*: an expression DAG whose leaves are the group's
inputs seen through strides (a broadcast dimension has stride 0; Reshape/ExpandDims/Squeeze/
BroadcastTo/Transpose only change the leaves' strides, as `torch.Tensor.view`/`expand`/
`permute` would). The
outputs' expressions are then all indexed by one iteration space:

- loop fusion: the (first) output's shape; every output has that many elements;
- input fusion: the reductions' common input shape, split into kept and reduced dimensions.

Adjacent dimensions that every leaf walks contiguously are merged, so a plain elementwise chain
becomes one flat loop. A backend turns the IR into source (numba_backend.py); a GPU backend can
take the same IR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ndflow.core import dtypes
from ndflow.jit.codegen import emitters
from ndflow.jit.errors import CompileUnimplemented


def compute_dtype(dt):
    """The type a value is computed in: float32 for the 16-bit floats."""
    return dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt


_EMPTY_FILL = {"sum": 0, "mean": float("nan"), "prod": 1, "all": True, "any": False}


def empty_reduction_value(red: str, dt):
    """What a reduction of no elements gives (ATen's, as ndflow's kernels)."""
    if red == "mean" and not dt.is_floating:
        return 0
    if red in _EMPTY_FILL:
        return _EMPTY_FILL[red]
    if dt.is_floating:
        return -math.inf if red == "max" else math.inf
    return dt.min if red == "max" else dt.max


@dataclass(frozen=True)
class Leaf:
    index: int                  # group input number
    strides: tuple              # element strides per dimension of the value's shape


@dataclass(frozen=True)
class Literal:
    value: object
    dtype: object


@dataclass(frozen=True)
class Node:
    op: object                  # the Operation (identity-compared)
    args: tuple
    dtype: object               # result dtype (before compute_dtype)

    def __hash__(self):
        return hash((id(self.op), self.args))

    def __eq__(self, other):
        return isinstance(other, Node) and self.op is other.op and self.args == other.args


@dataclass(frozen=True)
class RowReduce:
    """A row kernel's per-row reduction that the kernel itself reads (LayerNorm's mean): `arg`
    is indexed by the kernel's space, reduced over its inner dimensions (from `KernelIR.
    row_split` on); the result is a value indexed like a Leaf by `strides` (over its own
    shape), which codegen requires to be the rows' own (checked by _merge_dims)."""
    reduce: str                 # accumulator kind (emitters.REDUCTIONS)
    arg: object
    dtype: object
    count: int
    strides: tuple

    @property
    def value(self):
        """The reduction itself, whatever view of it is read."""
        return (self.reduce, self.arg, self.dtype, self.count)


@dataclass
class OutputIR:
    expr: object
    dtype: object
    shape: tuple
    reduce: str | None = None   # accumulator kind for a reduction output
    count: int = 1              # elements reduced into one output element (Mean)
    row: bool = False           # a row kernel's per-row value, written once per row


@dataclass
class KernelIR:
    kind: str                   # "loop" or "input"
    shape: tuple                # iteration space after merging dimensions
    reduced: tuple              # per dimension: True if reduced (input fusion)
    input_dtypes: list
    input_sizes: list
    outputs: list = field(default_factory=list)
    out_strides: list = field(default_factory=list)   # per output, strides in the space
    leaf_strides: dict = field(default_factory=dict)  # Leaf -> strides in merged space
    row_split: int | None = None  # a row kernel: dimensions before it are the rows


def _contiguous_strides(shape) -> tuple:
    s, out = 1, []
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def _broadcast_shape(shapes) -> tuple:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s, start=rank - len(s)):
            if d != 1:
                if out[i] not in (1, d):
                    raise CompileUnimplemented(f"shapes {shapes} do not broadcast")
                out[i] = d
    return tuple(out)


class _Views:
    """Rewrites a virtual array for a new shape (broadcast or reshape), memoized so that a DAG
    stays a DAG."""

    def __init__(self):
        self.memo = {}

    def map(self, e, key, fn):
        k = (e, key)
        if k in self.memo:
            return self.memo[k]
        if isinstance(e, Leaf):
            r = Leaf(e.index, fn(e.strides))
        elif isinstance(e, RowReduce):   # its argument stays indexed by the kernel's space
            r = RowReduce(e.reduce, e.arg, e.dtype, e.count, fn(e.strides))
        elif isinstance(e, Literal):
            r = e
        else:
            r = Node(e.op, tuple(self.map(a, key, fn) for a in e.args), e.dtype)
        self.memo[k] = r
        return r

    def broadcast(self, e, src: tuple, dst: tuple):
        if src == dst:
            return e
        lead = len(dst) - len(src)

        def fn(st):
            return tuple(0 if i < lead or src[i - lead] != d else st[i - lead]
                         for i, d in enumerate(dst))
        return self.map(e, ("b", src, dst), fn)

    def reshape(self, e, src: tuple, dst: tuple):
        if src == dst:
            return e

        def fn(st):
            r = _view_strides(src, st, dst)
            if r is None:
                raise CompileUnimplemented(f"reshape {list(src)} -> {list(dst)} of a "
                                           "broadcast value is not a view")
            return r
        return self.map(e, ("r", src, dst), fn)


def _view_strides(shape, strides, new_shape):
    """Strides of `new_shape` viewing the same elements (torch's computeStride), or None."""
    if math.prod(shape) == 0:
        return _contiguous_strides(new_shape)
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    out = [0] * len(new_shape)
    oi = 0
    ni = 0
    new_dims = list(new_shape)
    while ni < len(new_dims):
        if new_dims[ni] == 1:
            out[ni] = 0
            ni += 1
            continue
        if oi >= len(old):
            return None
        # Take a chunk of old dims that is contiguous among itself, and split it into new dims.
        chunk = [old[oi]]
        oi += 1
        size = chunk[0][0]
        target = [ni]
        tsize = new_dims[ni]
        while size != tsize:
            if size < tsize:
                if oi >= len(old):
                    return None
                d, s = old[oi]
                if chunk[-1][1] != d * s:
                    return None  # not contiguous: no view
                chunk.append(old[oi])
                oi += 1
                size *= d
            else:
                ni2 = target[-1] + 1
                while ni2 < len(new_dims) and new_dims[ni2] == 1:
                    ni2 += 1
                if ni2 >= len(new_dims):
                    return None
                target.append(ni2)
                tsize *= new_dims[ni2]
        base = chunk[-1][1]
        for t in reversed(target):
            out[t] = base
            base *= new_dims[t]
        ni = target[-1] + 1
    if oi != len(old):
        return None
    return tuple(out)


def _const_literal(op):
    v = np.asarray(op.attrs["value"]).reshape(())
    return Literal(v.item(), op.outputs[0].dtype)


def lower(group, input_specs: list) -> KernelIR:
    """The KernelIR of `group` for `input_specs` [(DType, shape tuple)], one per group input."""
    if len(input_specs) != len(group.inputs):
        raise CompileUnimplemented(f"{len(input_specs)} input specs for "
                                   f"{len(group.inputs)} group inputs")
    views = _Views()
    val: dict = {}     # tensor -> (expr, shape)
    for i, (t, (dt, shape)) in enumerate(zip(group.inputs, input_specs)):
        if dt not in emitters.SUPPORTED:
            raise CompileUnimplemented(f"dtype {getattr(dt, 'name', dt)} is not generated")
        shape = tuple(int(d) for d in shape)
        val[t] = (Leaf(i, _contiguous_strides(shape)), shape)
    reductions = []
    # A row kernel (some reduction read inside): every reduction is a per-row value, those
    # that nothing inside reads only written out.
    roots = set(_roots(group.ops))
    row_axes: list = []
    for op in group.ops:
        if op.type == "Const":
            if emitters.is_small_const(op):  # others are only static shapes/axes here
                val[op.outputs[0]] = (_const_literal(op), ())
            continue
        if op in roots:
            reductions.append(op)
            continue
        if emitters.is_reduction(op):
            val[op.outputs[0]] = _lower_row_reduction(op, val, row_axes)
            continue
        val[op.outputs[0]] = _lower_op(op, val, views)
    outputs = list(group.outputs)
    for t in outputs:
        if t not in val and t.op not in reductions:
            raise CompileUnimplemented(f"output {t.name} is not computed by the group")
    if reductions:
        return _lower_input_fusion(group, input_specs, outputs, reductions, val, views,
                                   row_axes)
    return _lower_loop_fusion(input_specs, outputs, val, views, row_axes)


def _roots(ops) -> list:
    """The reductions lowered as kernel outputs: all of them, but in a row kernel (one is read
    inside) only those over leading dimensions (column sums: bias gradients); the others there
    are per-row values (RowReduce)."""
    reductions = [op for op in ops if emitters.is_reduction(op)]
    signatures = {(tuple(r.inputs[0].shape.as_list()) if r.inputs[0].shape.rank is not None
                   else None, emitters.static_axes(r), bool(r.attrs.get("keep_dims", False)))
                  for r in reductions}
    if not emitters.row_reductions(ops) and len(signatures) <= 1:
        return reductions   # an input fusion (sibling reductions share one signature)
    # a row kernel, or one whose read-back reduction became dead (rematerialize's pruning)
    inside = set(ops)
    out = []
    for op in ops:
        if not emitters.is_reduction(op) or any(c in inside for c in op.outputs[0].consumers()):
            continue
        axes, rank = emitters.static_axes(op), op.inputs[0].shape.rank
        if axes is not None and rank and 0 in {a % rank for a in axes}:
            out.append(op)
    return out


def _lower_row_reduction(op, val, row_axes: list):
    """(RowReduce, result shape) of a reduction that its own kernel reads: over the innermost
    dimensions of its input, the same ones (and input shape) for every row reduction."""
    e, shape = _value(op.inputs[0], val)
    axes = emitters.static_axes(op)
    if axes is None or not shape:
        raise CompileUnimplemented(f"{op.name}: reduction axes are not constant")
    axes = tuple(sorted({a % len(shape) for a in axes}))
    if axes != tuple(range(axes[0], len(shape))) or axes[0] == 0:
        raise CompileUnimplemented(f"{op.name}: not a reduction of the innermost dimensions")
    if row_axes and row_axes[0] != (shape, axes):
        raise CompileUnimplemented(f"{op.name}: row reductions over different spaces")
    dt = op.outputs[0].dtype
    if compute_dtype(dt) is not dt or not dt.is_floating:
        raise CompileUnimplemented(f"{op.name}: a row reduction of {dt.name}")
    row_axes[:] = [(shape, axes)]
    rows = shape[:axes[0]]
    out = rows + (1,) * len(axes) if op.attrs.get("keep_dims", False) else rows
    count = math.prod(shape[axes[0]:])
    return (RowReduce(emitters.REDUCTIONS[op.type], e, dt, count, _contiguous_strides(out)),
            out)


def _value(t, val):
    try:
        return val[t]
    except KeyError:
        raise CompileUnimplemented(f"{t.name} is neither a group input nor computed") from None


def _lower_op(op, val, views):
    t = op.type
    if t in emitters.SHAPE_OPS:
        e, shape = _value(op.inputs[0], val)
        new = _static_result_shape(op, shape)
        if t == "Tile":   # of size-1 dimensions only (emitters.can_emit)
            return views.broadcast(e, shape, new), new
        if t == "BroadcastTo":
            out = _broadcast_shape([shape, new])
            return views.broadcast(e, shape, out), out
        if t == "Transpose":
            perm = tuple(p % max(len(shape), 1) for p in new)
            if sorted(perm) != list(range(len(shape))):
                raise CompileUnimplemented(f"{op.name}: perm {list(new)} for rank {len(shape)}")
            return (views.map(e, ("t", perm), lambda st: tuple(st[p] for p in perm)),
                    tuple(shape[p] for p in perm))
        if math.prod(new) != math.prod(shape):
            raise CompileUnimplemented(f"{op.name}: cannot reshape {list(shape)} to {list(new)}")
        return views.reshape(e, shape, new), new
    ins = [_value(x, val) for x in op.inputs]
    shapes = [s for _, s in ins]
    if t == "BiasAdd":
        (x, xs), (b, bs) = ins
        fmt = op.attrs.get("data_format", "NHWC")
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        if fmt == "NCHW" and len(xs) >= 3:
            b = views.reshape(b, bs, bs + (1,) * (len(xs) - 2))
            bs = bs + (1,) * (len(xs) - 2)
        ins = [(x, xs), (b, bs)]
        shapes = [xs, bs]
    out_shape = _broadcast_shape(shapes)
    if t == "BiasAdd" and out_shape != shapes[0]:
        raise CompileUnimplemented(f"{op.name}: bias does not match the channel dimension")
    args = tuple(views.broadcast(e, s, out_shape) for e, s in ins)
    return Node(op, args, op.outputs[0].dtype), out_shape


def _static_result_shape(op, shape) -> tuple:
    t = op.type
    if t == "Squeeze":
        dims = op.attrs.get("squeeze_dims") or op.attrs.get("axis") or []
        dims = {d % max(len(shape), 1) for d in dims}
        if not dims:
            return tuple(d for d in shape if d != 1)
        return tuple(d for i, d in enumerate(shape) if i not in dims)
    v = emitters.const_value(op.inputs[1])
    if v is None:
        raise CompileUnimplemented(f"{op.name}: shape operand is not constant")
    if t == "ExpandDims":
        axis = int(np.ravel(v)[0])
        axis = axis if axis >= 0 else len(shape) + 1 + axis
        return shape[:axis] + (1,) + shape[axis:]
    dims = [int(d) for d in np.ravel(v)]
    if t == "Tile":
        if len(dims) != len(shape):
            raise CompileUnimplemented(f"{op.name}: {len(dims)} multiples for rank {len(shape)}")
        return tuple(s * m for s, m in zip(shape, dims))
    if t == "Reshape" and -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = math.prod(shape) // known if known else 0
    return tuple(dims)


def _lower_loop_fusion(input_specs, outputs, val, views, row_axes=()) -> KernelIR:
    # a row kernel loops over its row reductions' space (it may write per-row values only)
    space = row_axes[0][0] if row_axes else val[outputs[0]][1]
    split = row_axes[0][1][0] if row_axes else None
    exprs, strides = [], []
    for t in outputs:
        o, st = _space_output(t, val, views, space, split)
        exprs.append(o)
        strides.append(st)
    ir = KernelIR("loop", space, (False,) * len(space), [d for d, _ in input_specs],
                  [math.prod(s) for _, s in input_specs], exprs, row_split=split)
    return _merge_dims(ir, strides)


def _space_output(t, val, views, space, split):
    """(OutputIR, strides) of a value the kernel writes: one of the space's size, or in a row
    kernel (`split` not None) a per-row value, written once per row."""
    e, s = val[t]
    if math.prod(s) == math.prod(space):
        return OutputIR(views.reshape(e, s, space), t.dtype, s), _contiguous_strides(space)
    rows = space[:split] if split is not None else None
    if rows is not None and math.prod(s) == math.prod(rows):
        kept = rows + (1,) * (len(space) - split)
        e = views.broadcast(views.reshape(e, s, kept), kept, space)
        return (OutputIR(e, t.dtype, s, row=True),
                _contiguous_strides(rows) + (0,) * (len(space) - split))
    raise CompileUnimplemented(f"{t.name}: {math.prod(s)} elements in a kernel over "
                               f"{list(space)}")


def _lower_input_fusion(group, input_specs, outputs, reductions, val, views,
                        row_axes=()) -> KernelIR:
    space = _value(reductions[0].inputs[0], val)[1]
    axes = emitters.static_axes(reductions[0])
    keep = reductions[0].attrs.get("keep_dims", False)
    for r in reductions[1:]:
        if (_value(r.inputs[0], val)[1] != space or emitters.static_axes(r) != axes
                or r.attrs.get("keep_dims", False) != keep):
            raise CompileUnimplemented("sibling reductions over different spaces")
    if axes is None:
        raise CompileUnimplemented("reduction axes are not constant")
    axes = tuple(sorted({a % max(len(space), 1) for a in axes})) if space else ()
    split = None
    if row_axes:   # a row kernel's roots reduce its rows (column sums)
        split = row_axes[0][1][0]
        if row_axes[0][0] != space or axes not in (tuple(range(split)),
                                                   tuple(range(len(space)))):
            raise CompileUnimplemented("a row kernel's roots do not reduce its rows")
    reduced = tuple(i in axes for i in range(len(space)))
    kept_shape = tuple(1 if r else d for d, r in zip(space, reduced))
    out_strides_kept = _contiguous_strides(kept_shape)
    acc_strides = tuple(0 if r else s for s, r in zip(out_strides_kept, reduced))
    count = math.prod(d for d, r in zip(space, reduced) if r)
    exprs, strides = [], []
    for t in outputs:
        if t.op in reductions:
            e, _ = _value(t.op.inputs[0], val)
            kind = emitters.REDUCTIONS[t.op.type]
            oshape = kept_shape if keep else tuple(d for d, r in zip(space, reduced) if not r)
            exprs.append(OutputIR(e, t.dtype, oshape, kind, count))
            strides.append(acc_strides)
        else:
            o, st = _space_output(t, val, views, space, split)
            exprs.append(o)
            strides.append(st)
    ir = KernelIR("input", space, reduced, [d for d, _ in input_specs],
                  [math.prod(s) for _, s in input_specs], exprs, row_split=split)
    return _merge_dims(ir, strides)


def _leaves(e, out: set, rows: set):
    """The Leaves of `e` into `out` (those of row reductions' arguments too), its RowReduces
    into `rows`."""
    if isinstance(e, Leaf):
        out.add(e)
    elif isinstance(e, RowReduce):
        rows.add(e)
        _leaves(e.arg, out, rows)
    elif isinstance(e, Node):
        for a in e.args:
            _leaves(a, out, rows)


def _merge_dims(ir: KernelIR, out_strides: list) -> KernelIR:
    """Drops size-1 dimensions and merges neighbours every leaf and output walks as one (a row
    kernel's row dimensions only with row dimensions)."""
    leaves: set = set()
    row_values: set = set()
    for o in ir.outputs:
        _leaves(o.expr, leaves, row_values)
    leaves = sorted(leaves, key=lambda lf: (lf.index, lf.strides))
    row_values = list(row_values)
    vectors = ([list(lf.strides) for lf in leaves] + [list(s) for s in out_strides]
               + [list(r.strides) for r in row_values])
    dims = [i for i, d in enumerate(ir.shape) if d != 1]
    shape = [ir.shape[i] for i in dims]
    reduced = [ir.reduced[i] for i in dims]
    split = ir.row_split
    is_row = [split is not None and i < split for i in dims]
    vecs = [[v[i] for i in dims] for v in vectors]
    i = len(shape) - 2
    while i >= 0:
        if reduced[i] == reduced[i + 1] and is_row[i] == is_row[i + 1] and \
                all(v[i] == v[i + 1] * shape[i + 1] for v in vecs):
            shape[i] *= shape[i + 1]
            del shape[i + 1], reduced[i + 1], is_row[i + 1]
            for v in vecs:
                v[i] = v.pop(i + 1)  # the merged dimension steps like the inner one
        i -= 1
    if math.prod(ir.shape) == 0:
        if split is not None:
            raise CompileUnimplemented("a row kernel of no elements")
        shape, reduced, vecs = [0], [False], [[0] for _ in vecs]
    ir.shape, ir.reduced = tuple(shape), tuple(reduced)
    ir.leaf_strides = {lf: tuple(v) for lf, v in zip(leaves, vecs)}
    n_out = len(ir.outputs)
    ir.out_strides = [tuple(v) for v in vecs[len(leaves):len(leaves) + n_out]]
    if split is not None:
        ir.row_split = sum(is_row)
        rows = _contiguous_strides(shape[:ir.row_split]) + (0,) * (len(shape) - ir.row_split)
        views = vecs[len(leaves) + n_out:] + [v for o, v in zip(ir.outputs, ir.out_strides)
                                              if o.row]
        if any(tuple(v) != rows for v in views):
            raise CompileUnimplemented("a per-row value read across rows")
    _check_bounds(ir)
    return ir


def _check_bounds(ir: KernelIR) -> None:
    """Generated kernels index without bounds checks: prove every index stays inside."""
    if math.prod(ir.shape) == 0:
        return
    for leaf, st in ir.leaf_strides.items():
        if sum((d - 1) * s for d, s in zip(ir.shape, st)) >= ir.input_sizes[leaf.index]:
            raise CompileUnimplemented(f"input {leaf.index} indexed past its end")
    for o, st in zip(ir.outputs, ir.out_strides):
        if sum((d - 1) * s for d, s in zip(ir.shape, st)) >= max(math.prod(o.shape), 1):
            raise CompileUnimplemented("output indexed past its end")
