"""CPU backend: a KernelIR rendered as Python source of one loop nest, compiled by numba (LLVM).

The kernel takes every input and output as a flat 1-D array (16-bit floats as uint16 bits) and
indexes them with the strides of lowering.py; values are SSA temporaries placed at the
shallowest loop level where they change (loop-invariant loads and math are hoisted). Reductions
accumulate float32/16-bit values in float64 and integers in int64 (so results agree with ATen's
within rounding), in a register when the reduced dimensions are innermost, else in an
accumulator array walked in memory order. Big kernels run chunks of their outermost dimension
on ATen's own OpenMP threads (omp_pool.py), not on a thread pool of numba's.

Compiling the source (and numba's disk cache) is numba_compile.py's.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.core import dtypes
from ndflow.jit.codegen import emitters
from ndflow.jit.codegen.lowering import (
    KernelIR,
    Leaf,
    Literal,
    RowReduce,
    compute_dtype,
    empty_reduction_value,
)
from ndflow.jit.codegen.numba_compile import HALF as _HALF
from ndflow.jit.codegen.numba_compile import compile_source, signature
from ndflow.jit.errors import CompileUnimplemented
from ndflow.kernels import omp_pool

# Elements from which a kernel's outermost loop is split into chunks that ATen's OpenMP threads
# run (omp_pool.py), and the least work one chunk gets.
PARALLEL_MIN_ELEMENTS = 1 << 16
MIN_CHUNK_ELEMENTS = 1 << 14

_PRELUDE = """\
import numpy as np
from math import (log, log1p, expm1, sqrt, sin, cos, erf, fabs, isnan, isinf, isfinite)
from numpy import floor, ceil, rint, fmod
from numba import carray, cfunc, njit, types
from ndflow.jit.codegen.numba_intrinsics import (
    address_as_pointer, claim_chunk, wide_vectors,
    exp, tanh, select, maximum, minimum, pow, trunc_div, f16_to_f32, f32_to_f16, bf16_to_f32,
    f32_to_bf16, round_bf16, round_f16)
"""


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


class _Body:
    """SSA statements per loop level (-1: before all loops). A row kernel's row reductions are
    blocks at the rows' innermost level, each with a loop over the row whose statements a
    child _Body (`parent` set, `floor` the row split) collects: values that vary only per row
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

    def _fresh(self, prefix: str = "t") -> str:
        root = self
        while root.parent is not None:
            root = root.parent
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
        an accumulator, a loop nest over the row's dimensions, the finished value."""
        split, shape = self.ir.row_split, self.ir.shape
        child = _Body(self.ir, parent=self, floor=split)
        value, _ = child.emit(e.arg)
        acc = self._fresh("r")
        lines = [f"{acc} = {_acc_init(e)}"]
        inner = f"q{acc}" if len(shape) > split and _two_level(e, shape[-1]) else None
        for d in range(split, len(shape)):
            pad = "    " * (d - split)
            if inner and d == len(shape) - 1:
                lines.append(f"{pad}{inner} = np.float32(0)")
            lines.append(f"{pad}for i{d} in range({shape[d]}):")
            lines += [f"{pad}    {st}" for st in child.levels.get(d, [])]
        op = _ACC[e.reduce][0]
        pad = "    " * (len(shape) - split)
        if inner:
            lines.append(pad + f"{inner} = {inner} + np.float32({value})")
            lines.append(pad[4:] + f"{acc} = {acc} + np.float64({inner})")
        else:
            lines.append(pad + f"{acc} = " + op.format(a=acc, v=f"{_acc_type(e)}({value})"))
        name = self._fresh()
        lines.append(f"{name} = {_acc_final(e, acc)}")
        depth = split - 1
        self.levels.setdefault(depth, []).append("\n".join(lines))
        self.names[key], self.depth[key] = name, depth
        self.has_rows = True
        return name, depth


# Innermost loops up to this long sum float32 values in float32 (vectorized lanes of partial
# sums), added into the float64 accumulator once per loop: converting every element to float64
# halved the vector width (the MLP's LayerNorm + GELU + loss kernel: 0.43 -> 0.26 ms).
TWO_LEVEL_MAX = 4096


def _two_level(o, n_inner) -> bool:
    """Whether sum/mean `o` accumulates its innermost loop (of `n_inner` iterations, None when
    the chunk bound) in float32 first."""
    return (o.reduce in ("sum", "mean") and compute_dtype(o.dtype) is dtypes.float32
            and n_inner is not None and n_inner <= TWO_LEVEL_MAX)


def _store(value: str, dt) -> str:
    if dt == dtypes.bfloat16:
        return f"f32_to_bf16({value})"
    if dt == dtypes.float16:
        return f"f32_to_f16({value})"
    return value


_ACC = {"sum": ("{a} + {v}", "0"), "mean": ("{a} + {v}", "0"), "prod": ("{a} * {v}", "1"),
        "max": ("maximum({a}, {v})", None), "min": ("minimum({a}, {v})", None),
        "all": ("{a} & {v}", "True"), "any": ("{a} | {v}", "False")}


def _acc_type(o) -> str:
    if o.reduce in ("all", "any"):
        return "np.bool_"
    dt = compute_dtype(o.dtype)
    if o.reduce in ("max", "min"):
        return _np_name(dt)
    return "np.float64" if dt.is_floating else "np.int64"


def _acc_init(o) -> str:
    op, init = _ACC[o.reduce]
    if init is not None:
        return f"{_acc_type(o)}({init})"
    dt = compute_dtype(o.dtype)
    lowest = o.reduce == "max"
    if dt.is_floating:
        return f"{_np_name(dt)}({'-np.inf' if lowest else 'np.inf'})"
    return f"{_np_name(dt)}({dt.min if lowest else dt.max})"


def _acc_final(o, a: str) -> str:
    dt = compute_dtype(o.dtype)
    if o.reduce == "mean":
        a = (f"({a} / {o.count})" if dt.is_floating else f"trunc_div({a}, {max(o.count, 1)})")
    return _store(f"{_np_name(dt)}({a})", o.dtype)


def chunk_dim(ir: KernelIR) -> int:
    """The dimension a chunked kernel splits: the first kept (not reduced) loop dimension, or
    for a reduction to scalars (every dimension reduced) the outermost one, each chunk then
    leaving a partial result that the caller combines (see is_split); for a row kernel its
    first row dimension, so that a chunk holds whole rows."""
    if ir.row_split is not None:
        return 0
    return next((d for d, r in enumerate(ir.reduced) if not r), 0)


def is_split(ir: KernelIR) -> bool:
    """A full reduction: chunks accumulate partial sums/means/maxima/minima of their rows."""
    return bool(ir.shape) and all(ir.reduced)


def leaves_partials(ir: KernelIR) -> bool:
    """Chunks leave partial results that the caller combines: a full reduction's, or a row
    kernel's column sums (each chunk's sums over its own rows)."""
    return is_split(ir) or (ir.row_split is not None and any(o.reduce for o in ir.outputs))


_SPLIT_REDUCTIONS = ("sum", "mean", "max", "min")


def chunkable(ir: KernelIR) -> bool:
    """Whether chunks of the chunk dimension can run on different threads: every loop outside
    it is reduced (so chunks write disjoint outputs), an accumulator array (a reduction with
    kept dimensions inside reduced ones) covers a chunk's outputs as one contiguous block, and
    no array is boolean (the C callback views arrays through typed pointers)."""
    shape, reduced = ir.shape, ir.reduced
    cd = chunk_dim(ir)
    if not shape or shape[cd] < 2 or ir.row_split == 0:   # (chunks would split a row)
        return False
    if any(dt.is_bool for dt in [*ir.input_dtypes, *(o.dtype for o in ir.outputs)]):
        return False
    if leaves_partials(ir) and any(o.reduce and (o.reduce not in _SPLIT_REDUCTIONS
                                                 or not compute_dtype(o.dtype).is_floating)
                                   for o in ir.outputs):
        return False
    if not _row_form(reduced) and ir.row_split is None:
        inner = math.prod(s for s, r in zip(shape[cd + 1:], reduced[cd + 1:]) if not r)
        if any(o.reduce and st[cd] != inner for o, st in zip(ir.outputs, ir.out_strides)):
            return False
    return _chunk_strides(ir) is not None


def _row_form(reduced) -> bool:
    """Reduced dimensions innermost: accumulators live in registers."""
    return not any(reduced[i] and not reduced[i + 1] for i in range(len(reduced) - 1))


def _chunk_strides(ir: KernelIR):
    """Per input, its stride along the chunk dimension (None if its loads disagree)."""
    cd = chunk_dim(ir)
    strides: dict = {}
    for leaf, st in ir.leaf_strides.items():
        if strides.setdefault(leaf.index, st[cd]) != st[cd]:
            return None
    return [strides.get(i, 0) for i in range(len(ir.input_dtypes))]


def render(ir: KernelIR, chunked: bool = False) -> str:
    """Python source of the kernel `kernel(in0, ..., out0, ...)`; `chunked` (see chunkable):
    the C callback `tramp(data)` running the chunks of the chunk dimension a thread claims
    (omp_pool.run_chunks)."""
    body = _Body(ir)
    shape, reduced = ir.shape, ir.reduced
    rank = len(shape)
    out_vals = [body.emit(o.expr) for o in ir.outputs]
    for j, (o, (v, depth)) in enumerate(zip(ir.outputs, out_vals)):
        if o.row:   # written once per row, after the row's reductions
            if depth >= ir.row_split:
                raise CompileUnimplemented("a per-row output varies along the row")
            body.levels.setdefault(ir.row_split - 1, []).append(
                f"out{j}[{_index(ir.out_strides[j])}] = {_store(v, o.dtype)}")
    row = _row_form(reduced)
    cd = chunk_dim(ir) if chunked else -1
    first_reduced = next((i for i, r in enumerate(reduced) if r), rank)
    lines = []
    ind = "    "

    def put(level_indent, text):
        lines.append(ind * level_indent + text)

    reds = [(j, o) for j, o in enumerate(ir.outputs) if o.reduce]
    n_inner = shape[-1] if rank and rank - 1 != cd else None
    two_level = {j for j, o in reds if row and rank and reduced[-1] and _two_level(o, n_inner)}
    depth_indent = {}
    for j, o in reds if not row else []:
        n_acc = math.prod(s for s, r in zip(shape, reduced) if not r)
        if chunked and not reduced[cd]:   # the chunk's block of outputs only
            n_acc = f"(hi - lo) * {n_acc // shape[cd]}"
        put(1, f"acc{j} = np.full({n_acc}, {_acc_init(o)})")
    for s in body.levels.get(-1, []):
        for line in s.split("\n"):
            put(1, line)
    level_indent = 1
    # a row kernel writing per-row values only needs no loop over the rows' insides
    loops = rank if reds or not all(o.row for o in ir.outputs) else ir.row_split
    for d in range(loops):
        if row and d == first_reduced:
            for j, o in reds:
                put(level_indent, f"acc{j} = {_acc_init(o)}")
        bounds = "hi - lo" if d == cd else str(shape[d])
        if d == rank - 1:
            for j in two_level:
                put(level_indent, f"q{j} = np.float32(0)")
        put(level_indent, f"for i{d} in range({bounds}):")
        level_indent += 1
        depth_indent[d] = level_indent
        for s in body.levels.get(d, []):
            for line in s.split("\n"):
                put(level_indent, line)
    if row and first_reduced == rank:
        for j, o in reds:
            put(level_indent, f"acc{j} = {_acc_init(o)}")
    inner = level_indent

    index = _index
    for j, (o, (v, _)) in enumerate(zip(ir.outputs, out_vals)):
        if o.row:
            continue
        if not o.reduce:
            put(inner, f"out{j}[{index(ir.out_strides[j])}] = {_store(v, o.dtype)}")
            continue
        op = _ACC[o.reduce][0]
        cast = f"{_acc_type(o)}({v})"
        if j in two_level:
            put(inner, f"q{j} = q{j} + np.float32({v})")
        elif row:
            put(inner, f"acc{j} = {op.format(a=f'acc{j}', v=cast)}")
        else:
            a = f"acc{j}[{index(ir.out_strides[j])}]"
            put(inner, f"{a} = {op.format(a=a, v=cast)}")
    for j in sorted(two_level):
        put(inner - 1, f"acc{j} = acc{j} + np.float64(q{j})")
    if reds and row and chunked and is_split(ir):   # the chunk's partial, combined later
        for j, _ in reds:
            put(1, f"out{j}[c] = acc{j}")
    elif reds and row:
        close = depth_indent.get(first_reduced - 1, 1) if first_reduced > 0 else 1
        for j, o in reds:
            kept = ir.out_strides[j][:first_reduced]
            put(close, f"out{j}[{index(kept)}] = {_acc_final(o, f'acc{j}')}")
    elif reds and chunked and reduced[cd]:   # a row kernel's chunk: its partial column sums
        for j, _ in reds:
            put(1, f"for k in range(acc{j}.size):")
            put(2, f"out{j}[c * acc{j}.size + k] = acc{j}[k]")
    elif reds:
        for j, o in reds:
            put(1, f"for k in range(acc{j}.size):")
            put(2, f"out{j}[k] = {_acc_final(o, f'acc{j}[k]')}")
    n_in, n_out = len(ir.input_dtypes), len(ir.outputs)
    args = [f"in{i}" for i in range(n_in)] + [f"out{j}" for j in range(n_out)]
    fastmath = "{'reassoc', 'nsz'}" if reds or body.has_rows else "False"
    options = f"cache=CACHE, fastmath={fastmath}, error_model='numpy'"
    if chunked:
        storage = [_np_storage(dt) for dt in ir.input_dtypes]
        storage += [_partial_storage(o) if o.reduce and leaves_partials(ir)
                    else _np_storage(o.dtype)
                    for o in ir.outputs]
        offsets = _chunk_strides(ir) + [st[cd] for st in ir.out_strides]
        return _PRELUDE + "\n\n" + _trampoline(args, storage, offsets, lines, options)
    head = f"@njit({options}, nogil=True)\ndef kernel({', '.join(args)}):\n    wide_vectors()\n"
    return _PRELUDE + "\n\n" + head + "\n".join(lines or ["    pass"]) + "\n"


def _index(strides) -> str:
    terms = [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(strides) if s]
    return " + ".join(terms) or "0"


def _trampoline(args: list, storage: list, offsets: list, body: list, options: str) -> str:
    """A chunked kernel: the C callback `tramp(data)`, data = [counter, rows, chunk, (address,
    length) per array] (int64s), running the loop nest `body` on each chunk it claims until
    none is left. The loop nest lives in the callback itself: as a separate function numba
    compiled and optimized it twice (once more inlined), doubling the compile time.

    Each array is seen from the chunk's first row (`offsets`: elements per row along the
    chunk dimension), so the loops count from 0: with indices known to be >= 0, LLVM drops
    numba's negative-index wraparound and vectorizes (a loop over range(lo, hi) ran ~10x
    slower). The view is made by offsetting the address, not by slicing a whole-array view:
    numba types and lowers a slice at ~20 ms each, a quarter of a kernel's compile time.
    Like the unchunked kernel it is marked for 512-bit vectors (`wide_vectors`): the MLP's
    fused LayerNorm + GELU kernel 213 -> 170 us hot, its gradient 236 -> 208 us."""
    lines = [f"@cfunc(types.void(types.voidptr), {options})", "def tramp(data):",
             "    wide_vectors()",
             f"    d = carray(data, {3 + 2 * len(args)}, dtype=np.int64)",
             "    rows, chunk = d[1], d[2]", "    c = claim_chunk(data)",
             "    while c * chunk < rows:", "        lo = c * chunk",
             "        hi = min(lo + chunk, rows)"]
    for k, (a, st, step) in enumerate(zip(args, storage, offsets)):
        address, length = f"d[{3 + 2 * k}]", f"d[{4 + 2 * k}]"
        if step:
            address += f" + lo * {step * st.itemsize}"
            length += f" - lo * {step}"
        lines.append(f"        {a} = carray(address_as_pointer({address}, np.{st.name}), "
                     f"{length})")
    lines += ["    " + line for line in body]
    lines.append("        c = claim_chunk(data)")
    return "\n".join(lines) + "\n"


def _flat_numpy(t: torch.Tensor, dt):
    if not t.is_contiguous():
        t = t.contiguous()
    if dt in _HALF:
        t = t.view(torch.uint16)
    return t.numpy().reshape(-1)  # NumPy's reshape of a contiguous array is the cheap one


def _np_storage(dt):
    return np.dtype(np.uint16) if dt in _HALF else np.dtype(dt.np_dtype)


def _chunked_run(tramp, ir: KernelIR, source: str, threads: int):
    """`run` of a chunked kernel: one chunk per thread (of at least MIN_CHUNK_ELEMENTS), on
    ATen's OpenMP team (as many threads as ATen uses at the call). Threads claim chunks from
    a counter, so a thread that starts late finds its chunk taken rather than holding the
    others up; four chunks a thread cost more in per-chunk set-up than they balanced (the
    MLP of benchmarks/jit_mlp.py: fused kernels 6.6 -> 5.2 ms a step on 2 threads). A full
    reduction's chunks leave partials (in the accumulator's type) that are combined here."""
    cd = chunk_dim(ir)
    rows = ir.shape[cd]
    per_row = math.prod(ir.shape) // rows
    chunk = max(-(-MIN_CHUNK_ELEMENTS // per_row), -(-rows // threads))
    n_chunks = -(-rows // chunk)
    split = leaves_partials(ir)
    # the callback reads addresses only: tensors go in as they are (no NumPy views, ~25 us
    # a call for a kernel of 13 inputs), outputs are torch allocations of the output's type
    # or of the partials' (float64 sums)
    storage = [((n_chunks * math.prod(o.shape),), _torch_dtype(_partial_storage(o)), True)
               if o.reduce and split else
               (tuple(o.shape), o.dtype.torch_dtype, False) for o in ir.outputs]
    address = tramp.address

    def run(*tensors):
        args = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        outs = [torch.empty(s, dtype=dt) for s, dt, _ in storage]
        omp_pool.run_chunks(address, rows, chunk, [*args, *outs], torch.get_num_threads())
        return [_combine(a.numpy(), o, n_chunks) if partial else a
                for a, o, (_, _, partial) in zip(outs, ir.outputs, storage)]
    run.source = source
    return run


def _torch_dtype(nd: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.empty(0, dtype=nd)).dtype


def _partial_storage(o) -> np.dtype:
    """A full reduction's partials: its accumulator's type (float64 sums, as the kernel's)."""
    return np.dtype(np.float64) if o.reduce in ("sum", "mean") else \
        np.dtype(compute_dtype(o.dtype).np_dtype)


def _combine(partials: np.ndarray, o, n_chunks: int) -> torch.Tensor:
    """The reduction of the chunks' partials (`n_chunks` blocks of the output's size),
    finished as the serial kernel finishes it (a mean's division, the float32 value, 16-bit
    floats rounded to nearest even)."""
    blocks = partials.reshape(n_chunks, -1)
    if o.reduce in ("sum", "mean"):
        value = blocks.sum(axis=0)
        if o.reduce == "mean":
            value = value / o.count
    else:
        value = blocks.max(axis=0) if o.reduce == "max" else blocks.min(axis=0)
    compute = compute_dtype(o.dtype)
    out = torch.from_numpy(value.astype(compute.np_dtype).reshape(tuple(o.shape)))
    return out if compute is o.dtype else out.to(o.dtype.torch_dtype)


def build(ir: KernelIR, device: torch.device, cache_dir: str | None):
    """The callable running `ir`: (*torch tensors) -> [torch tensors]."""
    numel = math.prod(ir.shape)
    threads = torch.get_num_threads()
    chunked = (numel >= PARALLEL_MIN_ELEMENTS and threads > 1 and chunkable(ir)
               and omp_pool.launcher() is not None)
    source = render(ir, chunked)
    kernel = None if numel == 0 else compile_source(source, signature(ir), cache_dir)
    if chunked and kernel is not None:
        return _chunked_run(kernel, ir, source, threads)
    in_dtypes = list(ir.input_dtypes)
    outs = [(tuple(o.shape), o.dtype, o.reduce) for o in ir.outputs]
    # Outputs are NumPy allocations shared with torch (np.empty + from_numpy costs a fraction
    # of torch.empty + .numpy() per call); 16-bit floats are uint16 arrays viewed as such.
    storage = [(s, _np_storage(dt), dt.torch_dtype if dt in _HALF else None)
               for s, dt, _ in outs]

    def run(*tensors):
        args = [_flat_numpy(t, d) for t, d in zip(tensors, in_dtypes)]
        if kernel is not None:
            arrays = [np.empty(s, dtype=nd) for s, nd, _ in storage]
            kernel(*args, *[a.reshape(-1) for a in arrays])
            return [torch.from_numpy(a) if view is None else torch.from_numpy(a).view(view)
                    for a, (_, _, view) in zip(arrays, storage)]
        results = [torch.empty(s, dtype=dt.torch_dtype, device=device) for s, dt, _ in outs]
        for r, (_, dt, red) in zip(results, outs):  # no elements: a reduction's identity
            if red is not None and r.numel():
                r.fill_(empty_reduction_value(red, dt))
        return results
    run.source = source
    return run
