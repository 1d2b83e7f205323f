"""CPU backend: a KernelIR rendered as Python source of one loop nest, compiled by numba (LLVM).

The kernel sees every input and output as a flat 1-D array (16-bit floats as uint16 bits),
made from the tensor's address inside the kernel (`addressable`: a call passes ints, not NumPy
views), and indexes them with the strides of lowering.py; values are SSA temporaries placed at the
shallowest loop level where they change (loop-invariant loads and math are hoisted: the
statements are numba_body.py's). Reductions
accumulate float32/16-bit values in float64 and integers in int64 (so results agree with ATen's
within rounding), in a register when the reduced dimensions are innermost, else in an
accumulator array walked in memory order. Big kernels run chunks of their outermost dimension
on ATen's own OpenMP threads (omp_pool.py), not on a thread pool of numba's; partial results
of the chunks are combined by the thread that finishes the last one.

Compiling the source (and numba's disk cache) is numba_compile.py's.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ndflow.jit.codegen.lowering import KernelIR, compute_dtype, empty_reduction_value
from ndflow.jit.codegen.numba_body import (
    ACCUMULATE,
    Body,
    acc_final,
    acc_init,
    acc_type,
    storage_value,
    two_level,
)
from ndflow.jit.codegen.numba_compile import HALF as _HALF
from ndflow.jit.codegen.numba_compile import compile_source, signature, source_digest
from ndflow.jit.errors import CompileUnimplemented
from ndflow.kernels import omp_pool, raw_memory

# Elements from which a kernel's outermost loop is split into chunks that ATen's OpenMP threads
# run (omp_pool.py), and the least work one chunk gets.
PARALLEL_MIN_ELEMENTS = 1 << 16
MIN_CHUNK_ELEMENTS = 1 << 14

# the imports every generated kernel module starts with (native_segments.py's too)
PRELUDE = """\
import numpy as np
from math import (log, log1p, expm1, sqrt, sin, cos, erf, fabs, isnan, isinf, isfinite)
from numpy import floor, ceil, rint, fmod
from numba import carray, cfunc, njit, types
from ndflow.jit.codegen.numba_intrinsics import (
    address_as_pointer, claim_chunk, count_finished, wide_vectors,
    exp, tanh, select, maximum, minimum, pow, trunc_div, f16_to_f32, f32_to_f16, bf16_to_f32,
    f32_to_bf16, round_bf16, round_f16)
"""


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


def partial_outputs(ir: KernelIR) -> list:
    """The outputs a chunked kernel's chunks leave partials of (see leaves_partials)."""
    return [j for j, o in enumerate(ir.outputs) if o.reduce] if leaves_partials(ir) else []


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


def render(ir: KernelIR, chunked: bool = False, addressed: bool = False) -> str:
    """Python source of the kernel `kernel(in0, ..., out0, ...)` of flat arrays, or
    (`addressed`, see `addressable`) of each array's int64 address; `chunked` (see
    chunkable): the C callback `tramp(data)` running the chunks of the chunk dimension a
    thread claims (omp_pool.run_chunks)."""
    body = Body(ir)
    shape, reduced = ir.shape, ir.reduced
    rank = len(shape)
    body.emit_row_reductions()
    out_vals = [body.emit(o.expr) for o in ir.outputs]
    for j, (o, (v, depth)) in enumerate(zip(ir.outputs, out_vals)):
        if o.row:   # written once per row, after the row's reductions
            if depth >= ir.row_split:
                raise CompileUnimplemented("a per-row output varies along the row")
            body.levels.setdefault(ir.row_split - 1, []).append(
                f"out{j}[{_index(ir.out_strides[j])}] = {storage_value(v, o.dtype)}")
    row = _row_form(reduced)
    cd = chunk_dim(ir) if chunked else -1
    first_reduced = next((i for i, r in enumerate(reduced) if r), rank)
    lines = []
    ind = "    "

    def put(level_indent, text):
        lines.append(ind * level_indent + text)

    reds = [(j, o) for j, o in enumerate(ir.outputs) if o.reduce]
    n_inner = shape[-1] if rank and rank - 1 != cd else None
    in_lanes = {j for j, o in reds if row and rank and reduced[-1] and two_level(o, n_inner)}
    depth_indent = {}
    for j, o in reds if not row else []:
        n_acc = math.prod(s for s, r in zip(shape, reduced) if not r)
        if chunked and not reduced[cd]:   # the chunk's block of outputs only
            n_acc = f"(hi - lo) * {n_acc // shape[cd]}"
        put(1, f"acc{j} = np.full({n_acc}, {acc_init(o)})")
    for s in body.levels.get(-1, []):
        for line in s.split("\n"):
            put(1, line)
    level_indent = 1
    # a row kernel writing per-row values only needs no loop over the rows' insides
    loops = rank if reds or not all(o.row for o in ir.outputs) else ir.row_split
    for d in range(loops):
        if row and d == first_reduced:
            for j, o in reds:
                put(level_indent, f"acc{j} = {acc_init(o)}")
        bounds = "hi - lo" if d == cd else str(shape[d])
        if d == rank - 1:
            for j in in_lanes:
                put(level_indent, f"q{j} = np.float32(0)")
        put(level_indent, f"for i{d} in range({bounds}):")
        level_indent += 1
        depth_indent[d] = level_indent
        for s in body.levels.get(d, []):
            for line in s.split("\n"):
                put(level_indent, line)
    if row and first_reduced == rank:
        for j, o in reds:
            put(level_indent, f"acc{j} = {acc_init(o)}")
    inner = level_indent

    index = _index
    for j, (o, (v, _)) in enumerate(zip(ir.outputs, out_vals)):
        if o.row:
            continue
        if not o.reduce:
            put(inner, f"out{j}[{index(ir.out_strides[j])}] = {storage_value(v, o.dtype)}")
            continue
        op = ACCUMULATE[o.reduce][0]
        cast = f"{acc_type(o)}({v})"
        if j in in_lanes:
            put(inner, f"q{j} = q{j} + np.float32({v})")
        elif row:
            put(inner, f"acc{j} = {op.format(a=f'acc{j}', v=cast)}")
        else:
            a = f"acc{j}[{index(ir.out_strides[j])}]"
            put(inner, f"{a} = {op.format(a=a, v=cast)}")
    for j in sorted(in_lanes):
        put(inner - 1, f"acc{j} = acc{j} + np.float64(q{j})")
    if reds and row and chunked and is_split(ir):   # the chunk's partial, combined later
        for j, _ in reds:
            put(1, f"out{j}[c] = acc{j}")
    elif reds and row:
        close = depth_indent.get(first_reduced - 1, 1) if first_reduced > 0 else 1
        for j, o in reds:
            kept = ir.out_strides[j][:first_reduced]
            put(close, f"out{j}[{index(kept)}] = {acc_final(o, f'acc{j}')}")
    elif reds and chunked and reduced[cd]:   # a row kernel's chunk: its partial column sums
        for j, _ in reds:
            put(1, f"for k in range(acc{j}.size):")
            put(2, f"out{j}[c * acc{j}.size + k] = acc{j}[k]")
    elif reds:
        for j, o in reds:
            put(1, f"for k in range(acc{j}.size):")
            put(2, f"out{j}[k] = {acc_final(o, f'acc{j}[k]')}")
    n_in, n_out = len(ir.input_dtypes), len(ir.outputs)
    args = [f"in{i}" for i in range(n_in)] + [f"out{j}" for j in range(n_out)]
    fastmath = "{'reassoc', 'nsz'}" if reds or body.has_rows else "False"
    options = f"cache=CACHE, fastmath={fastmath}, error_model='numpy'"
    if chunked:
        partial = partial_outputs(ir)
        storage = [_np_storage(dt) for dt in ir.input_dtypes]
        storage += [_partial_storage(o) if j in partial else _np_storage(o.dtype)
                    for j, o in enumerate(ir.outputs)]
        storage += [_np_storage(ir.outputs[j].dtype) for j in partial]
        offsets = _chunk_strides(ir) + [st[cd] for st in ir.out_strides] + [0] * len(partial)
        args += [f"fin{j}" for j in partial]
        return PRELUDE + "\n\n" + _trampoline(args, storage, offsets, lines, options,
                                                 _combine_lines(ir, partial))
    params = args
    if addressed:   # each array viewed from its address, its length known here
        params = [f"p{k}" for k in range(len(args))]
        storage = [_np_storage(dt) for dt in ir.input_dtypes] + \
            [_np_storage(o.dtype) for o in ir.outputs]
        sizes = list(ir.input_sizes) + [math.prod(o.shape) for o in ir.outputs]
        lines = [f"    {a} = carray(address_as_pointer(p{k}, np.{st.name}), {n})"
                 for k, (a, st, n) in enumerate(zip(args, storage, sizes))] + lines
    head = f"@njit({options}, nogil=True)\ndef kernel({', '.join(params)}):\n    wide_vectors()\n"
    return PRELUDE + "\n\n" + head + "\n".join(lines or ["    pass"]) + "\n"


def addressable(ir: KernelIR) -> bool:
    """Whether the unchunked kernel can take addresses (`render(addressed=True)`): no boolean
    array (typed pointers only). A small kernel's call then costs ~5 us less than with NumPy
    views of its tensors (a 64 x 64 ReLU gradient with its bias gradient: 12 us a call)."""
    return not any(dt.is_bool for dt in [*ir.input_dtypes, *(o.dtype for o in ir.outputs)])


def _index(strides) -> str:
    terms = [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(strides) if s]
    return " + ".join(terms) or "0"


def _combine_lines(ir: KernelIR, partial: list) -> list:
    """The loop nest finishing partial output `outJ` (one block of partials per chunk) into
    `finJ`, run by whichever thread finishes the last chunk: the blocks combined in chunk
    order in the accumulator's type, then finished as the serial kernel finishes (a mean's
    division, the output type)."""
    lines = []
    for j in partial:
        o = ir.outputs[j]
        size = math.prod(o.shape)
        more = ACCUMULATE[o.reduce][0].format(a=f"s{j}", v=f"out{j}[cc * {size} + k]")
        lines += [f"for k in range({size}):", f"    s{j} = out{j}[k]",
                  "    for cc in range(1, chunks):", f"        s{j} = {more}",
                  f"    fin{j}[k] = {acc_final(o, f's{j}')}"]
    return lines


def _trampoline(args: list, storage: list, offsets: list, body: list, options: str,
                combine: list) -> str:
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
    if combine:   # chunks leave partials: the thread finishing the last one combines them
        lines += ["        chunks = (rows + chunk - 1) // chunk",
                  f"        if count_finished(data, {3 + 2 * len(args)}) == chunks - 1:"]
        lines += ["            " + line for line in combine]
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
    reduction's chunks (and a row kernel's, for its column sums) leave partials in the
    accumulator's type, which the thread finishing the last chunk combines (_combine_lines)."""
    cd = chunk_dim(ir)
    rows = ir.shape[cd]
    per_row = math.prod(ir.shape) // rows
    chunk = max(-(-MIN_CHUNK_ELEMENTS // per_row), -(-rows // threads))
    n_chunks = -(-rows // chunk)
    # the callback reads addresses only: tensors go in as they are (no NumPy views, ~25 us
    # a call for a kernel of 13 inputs); outputs are torch allocations. A partial output's
    # partials (in the accumulator's type: float64 sums), which the callback combines into
    # the output itself (in Python that cost ~19 us an output in the step), are scratch that
    # never leaves `run`: kept for the next call (~5 us an allocation in the step)
    outputs = [(tuple(o.shape), o.dtype.torch_dtype) for o in ir.outputs]
    partial = partial_outputs(ir)
    partials = [((n_chunks * math.prod(ir.outputs[j].shape),),
                 _torch_dtype(_partial_storage(ir.outputs[j]))) for j in partial]
    spare = []   # partials of finished calls (list.pop/append: safe across threads)
    address = tramp.address

    def run(*tensors):
        args = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        outs = [torch.empty(s, dtype=dt) for s, dt in outputs]
        try:
            parts = spare.pop()
        except IndexError:
            parts = [torch.empty(s, dtype=dt) for s, dt in partials]
        arrays = list(outs)
        for j, p in zip(partial, parts):
            arrays[j] = p
        omp_pool.run_chunks(address, rows, chunk, [*args, *arrays, *[outs[j] for j in partial]],
                            torch.get_num_threads())
        spare.append(parts)
        return outs
    run.source = source
    return run


def _addressed_run(kernel, ir: KernelIR, source: str):
    """`run` of an addressed kernel: its tensors' addresses, checked (raw_memory.flat) to
    hold the elements the kernel reads; outputs are new torch tensors."""
    inputs = [(dt.torch_dtype, n) for dt, n in zip(ir.input_dtypes, ir.input_sizes)]
    outputs = [(tuple(o.shape), o.dtype.torch_dtype, math.prod(o.shape)) for o in ir.outputs]
    flat = raw_memory.flat

    def run(*tensors):
        held = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        outs = [torch.empty(s, dtype=dt) for s, dt, _ in outputs]
        kernel(*[flat(t, dt, n) for t, (dt, n) in zip(held, inputs)],
               *[flat(o, dt, n) for o, (_, dt, n) in zip(outs, outputs)])
        return outs
    run.source = source
    return run


def _torch_dtype(nd: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.empty(0, dtype=nd)).dtype


def _partial_storage(o) -> np.dtype:
    """A full reduction's partials: its accumulator's type (float64 sums, as the kernel's)."""
    return np.dtype(np.float64) if o.reduce in ("sum", "mean") else \
        np.dtype(compute_dtype(o.dtype).np_dtype)


def build(ir: KernelIR, device: torch.device, cache_dir: str | None):
    """The callable running `ir`: (*torch tensors) -> [torch tensors]."""
    numel = math.prod(ir.shape)
    threads = torch.get_num_threads()
    chunked = (numel >= PARALLEL_MIN_ELEMENTS and threads > 1 and chunkable(ir)
               and omp_pool.launcher() is not None)
    addressed = not chunked and addressable(ir)
    source = render(ir, chunked, addressed)
    kernel = None if numel == 0 else compile_source(source, signature(ir, addressed),
                                                      cache_dir)
    if chunked and kernel is not None:
        return _chunked_run(kernel, ir, source, threads)
    if addressed and kernel is not None:
        run = _addressed_run(kernel, ir, source)
        run.native = source_digest(source)   # what jit/native_segments.py calls
        return run
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
