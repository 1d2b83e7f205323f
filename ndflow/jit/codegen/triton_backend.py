"""GPU backend: a KernelIR rendered as one Triton kernel, compiled by Triton for CUDA devices.

The same IR as the CPU backend (lowering.py), three kernel shapes over its merged space:

- elementwise (a loop fusion): each program computes a block of BLOCK elements; every
  dimension's index is taken from the linear one, so strided, broadcast and transposed reads
  cost one multiply-add each.
- reduction (an input fusion): each program owns BLOCK_K kept elements and walks the reduced
  elements in [BLOCK_K, BLOCK_R] tiles, accumulating lanes (float32 for float32 and the 16-bit
  floats, float64, int64 for integer sums) that are reduced across the tile at the end; outputs
  of the full space are written from the same tiles.
- row kernel (a reduction the kernel reads: LayerNorm): each program owns BLOCK_K whole rows in
  one tile, so a per-row reduction is a tile reduction broadcast back over its row.

Where few programs would hold a reduction (a loss reduced to a scalar; a row kernel's column
sums), programs leave partial results that one ATen reduction combines. Values compute in
emitters.py's types (16-bit floats in float32, rounded at each op producing them, as ATen rounds
each op). Not generated here (CompileUnimplemented: the group's ops then run as ATen kernels):
rows longer than MAX_ROW elements, a row kernel's product/all/any of its rows, arrays of 2**31
elements or more.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import threading
from dataclasses import dataclass, field

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
from ndflow.jit.codegen.source_modules import module_from_file
from ndflow.jit.errors import CompileUnimplemented

# Elements a program's tile holds (reduction and row kernels), and an elementwise block.
TILE = 4096
BLOCK = 1024
# The longest row a row kernel holds in one tile.
MAX_ROW = 16384
# A reduction launching fewer programs than this splits its reduced elements among more,
# each walking at least MIN_SPLIT_TILES tiles.
SPLIT_BELOW = 128
MIN_SPLIT_TILES = 4
_MAX_INDEX = 2**31 - 1   # indices are int32

_PRELUDE = """\
import triton
import triton.language as tl
from ndflow.jit.codegen.triton_intrinsics import (
    INF, NAN, exp, log, log1p, expm1, sqrt, tanh, erf, sin, cos, pow, floor, ceil, rint, fmod,
    fabs, isnan, isinf, isfinite, select, maximum, minimum, multiply)
"""

_TL = {dtypes.float32: "tl.float32", dtypes.float64: "tl.float64", dtypes.float16: "tl.float16",
       dtypes.bfloat16: "tl.bfloat16", dtypes.int8: "tl.int8", dtypes.int16: "tl.int16",
       dtypes.int32: "tl.int32", dtypes.int64: "tl.int64", dtypes.uint8: "tl.uint8",
       dtypes.bool: "tl.int1"}


def _tl(dt) -> str:
    return _TL[dt]


def _number(v, dt) -> str:
    if dt.is_bool:
        return "1" if bool(v) else "0"
    if not dt.is_floating:
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return "NAN"
    if math.isinf(f):
        return "INF" if f > 0 else "-INF"
    return repr(f)


def _literal(v, dt) -> str:
    """A 0-d block of the compute type (a bare Python float would be a float32 constant)."""
    dt = compute_dtype(dt)
    return f"tl.full([], {_number(v, dt)}, {_tl(dt)})"


def _np2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def _decompose(linear: str, dims: list, shape: tuple) -> dict:
    """{dim: index expression} of `dims` (in order) from their `linear` index."""
    out = {}
    for k, d in enumerate(dims):
        inner = math.prod(shape[e] for e in dims[k + 1:])
        text = f"({linear} // {inner})" if inner > 1 else linear
        out[d] = f"({text} % {shape[d]})" if k > 0 else text
    return out


# accumulator kind -> its update, {a} the accumulator and {v} the masked value
_UPDATE = {"sum": "{a} + {v}", "mean": "{a} + {v}", "prod": "{a} * {v}",
           "max": "maximum({a}, {v})", "min": "minimum({a}, {v})",
           "all": "tl.minimum({a}, {v})", "any": "tl.maximum({a}, {v})"}


def _acc_dtype(reduce: str, dt):
    if reduce in ("all", "any"):
        return dtypes.int32
    dt = compute_dtype(dt)
    if reduce in ("max", "min") or dt.is_floating:
        return dt
    return dtypes.int64


def _identity(reduce: str, dt) -> str:
    acc = _acc_dtype(reduce, dt)
    if reduce in ("sum", "mean", "any"):
        return "0"
    if reduce in ("prod", "all"):
        return "1"
    if acc.is_floating:
        return "-INF" if reduce == "max" else "INF"
    return str(acc.min if reduce == "max" else acc.max)


def _tile_reduce(reduce: str, a: str, axis: int = 1) -> str:
    """The reduction of accumulator tile `a` over `axis`."""
    if reduce in ("sum", "mean"):
        return f"tl.sum({a}, axis={axis})"
    if reduce == "prod":
        return f"tl.reduce({a}, {axis}, multiply)"
    if reduce in ("max", "min"):
        return f"tl.reduce({a}, {axis}, {'maximum' if reduce == 'max' else 'minimum'})"
    return f"(tl.{'min' if reduce == 'all' else 'max'}({a}, axis={axis}) != 0)"


def _finish(reduce: str, value: str, dt, count: int) -> str:
    """A reduced value as the op's result (in its compute type)."""
    cdt = compute_dtype(dt)
    if reduce == "mean":
        value = f"({value} / {count})" if cdt.is_floating else f"({value} // {max(count, 1)})"
    return f"({value}).to({_tl(cdt)})"


# Reductions whose programs may each leave a partial result, combined by ATen afterwards.
_PARTIAL = ("sum", "mean", "max", "min")


@dataclass
class Launch:
    """A rendered kernel: its source, programs along grid axes 0 and 1, warps per program,
    and the outputs written as per-program partials ({output: programs}, see _combine)."""
    source: str
    grid: tuple
    warps: int
    partials: dict = field(default_factory=dict)


class _Exprs:
    """SSA statements computing expressions over a block whose dimension indices are
    `index` {dim: expression}; a load's mask is the one of the index groups it uses."""

    def __init__(self, ir: KernelIR, index: dict, group_of: dict, masks: dict):
        self.ir, self.index, self.group_of, self.masks = ir, index, group_of, masks
        self.lines: list = []
        self.names: dict = {}

    def _assign(self, key, text: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"{name} = {text}")
        self.names[key] = name
        return name

    def emit(self, e) -> str:
        key = e.value if isinstance(e, RowReduce) else e
        if key in self.names:
            return self.names[key]
        if isinstance(e, Literal):
            return _literal(e.value, e.dtype)
        if isinstance(e, RowReduce):
            return self._row_reduce(e, key)
        if isinstance(e, Leaf):
            return self._assign(e, self._load(e))
        args = [self.emit(a) for a in e.args]
        k = emitters.EmitContext(e.op, _literal)
        text = f"({emitters.emitter(e.op.type)(args, k)}).to({_tl(compute_dtype(e.dtype))})"
        if e.dtype in (dtypes.float16, dtypes.bfloat16):   # rounded as ATen rounds each op
            text = f"{text}.to({_tl(e.dtype)}).to(tl.float32)"
        return self._assign(e, text)

    def _load(self, e: Leaf) -> str:
        strides = self.ir.leaf_strides[e]
        terms = [f"{self.index[d]} * {s}" for d, s in enumerate(strides) if s]
        groups = frozenset(self.group_of[d] for d, s in enumerate(strides) if s)
        if not terms:
            load = f"tl.load(in{e.index})"
        else:
            load = (f"tl.load(in{e.index} + {' + '.join(terms)}, mask={self.masks[groups]}, "
                    "other=0)")
        dt = self.ir.input_dtypes[e.index]
        return f"{load}.to({_tl(compute_dtype(dt))})"

    def _row_reduce(self, e: RowReduce, key) -> str:
        """A row kernel's per-row reduction: over the tile's axis 1, kept as a column."""
        arg = self.emit(e.arg)
        acc = _acc_dtype(e.reduce, e.dtype)
        masked = f"tl.where({self.masks[frozenset('kr')]}, {arg}.to({_tl(acc)}), " \
                 f"{_identity(e.reduce, e.dtype)})"
        value = _finish(e.reduce, _tile_reduce(e.reduce, masked), e.dtype, e.count)
        return self._assign(key, f"({value})[:, None]")


def _store(j: int, ir: KernelIR, offset_index: dict, value: str, shape: str, mask: str,
           zero: str, base: str = "") -> str:
    """Output j's store of `value` (broadcast to the block `shape`); `zero` is a block of
    zeros of that shape, the offset when no index moves the output."""
    o = ir.outputs[j]
    terms = [f"{offset_index[d]} * {s}" for d, s in enumerate(ir.out_strides[j])
             if s and d in offset_index]
    dt = _acc_dtype(o.reduce, o.dtype) if base else o.dtype
    return (f"tl.store(out{j} + {base}{' + '.join(terms) or zero}, "
            f"tl.broadcast_to({value}, {shape}).to({_tl(dt)}), mask={mask})")


def _render_elementwise(ir: KernelIR) -> Launch:
    n = math.prod(ir.shape)
    block = min(BLOCK, max(_np2(n), 128))
    dims = list(range(len(ir.shape)))
    index = _decompose("x", dims, ir.shape)
    body = _Exprs(ir, index, dict.fromkeys(dims, "k"), {frozenset("k"): "m"})
    lines = ["pid = tl.program_id(0)", f"x = pid * {block} + tl.arange(0, {block})",
             f"m = x < {n}"]
    values = [body.emit(o.expr) for o in ir.outputs]
    lines += body.lines
    lines += [_store(j, ir, index, v, f"[{block}]", "m", "x * 0") for j, v in enumerate(values)]
    return Launch(_source(ir, lines), (-(-n // block), 1), 4)


def _tile_indices(ir: KernelIR, kdims: list, rdims: list) -> tuple:
    """({dim: [BK] index} of the kept dims, {dim: tile index}: [BK, 1] kept, [1, BR] reduced,
    {dim: group}) for a tile of rows `k1` and columns `r`."""
    index1 = _decompose("k1", kdims, ir.shape)
    index = {d: f"{t}[:, None]" for d, t in index1.items()}
    index.update(_decompose("r", rdims, ir.shape))
    return index1, index, {**dict.fromkeys(kdims, "k"), **dict.fromkeys(rdims, "r")}


def _warps(tile: int) -> int:
    return 4 if tile <= 2048 else 8


def _render_reduction(ir: KernelIR) -> Launch:
    """Programs own BLOCK_K kept elements; when those are few and the reduced ones many, the
    reduced range is also split along grid axis 1 (each program then leaves partials)."""
    kdims = [d for d, r in enumerate(ir.reduced) if not r]
    rdims = [d for d, r in enumerate(ir.reduced) if r]
    n_k = math.prod(ir.shape[d] for d in kdims)
    n_r = math.prod(ir.shape[d] for d in rdims)
    br = min(_np2(n_r), 1024)
    bk = max(1, min(_np2(n_k), TILE // br))
    programs = -(-n_k // bk)
    reds = [(j, o) for j, o in enumerate(ir.outputs) if o.reduce]
    splits = 1
    if programs < SPLIT_BELOW and all(o.reduce in _PARTIAL for _, o in reds):
        splits = max(1, min(SPLIT_BELOW // programs, -(-n_r // (br * MIN_SPLIT_TILES))))
    span = -(-n_r // (splits * br)) * br    # reduced elements per program, whole tiles
    splits = -(-n_r // span)
    index1, index, groups = _tile_indices(ir, kdims, rdims)
    masks = {frozenset("k"): "mk[:, None]", frozenset("r"): "mr", frozenset("kr"): "m"}
    body = _Exprs(ir, index, groups, masks)
    values = [body.emit(o.expr) for o in ir.outputs]
    lines = ["pid = tl.program_id(0)", f"k1 = pid * {bk} + tl.arange(0, {bk})",
             f"mk = k1 < {n_k}", f"start = tl.program_id(1) * {span}"]
    for j, o in reds:
        acc = _acc_dtype(o.reduce, o.dtype)
        lines.append(f"acc{j} = tl.full([{bk}, {br}], {_identity(o.reduce, o.dtype)}, "
                     f"{_tl(acc)})")
    lines.append(f"for r0 in range(0, {span}, {br}):")
    loop = [f"r = start + r0 + tl.arange(0, {br})[None, :]", f"mr = r < {n_r}",
            "m = mk[:, None] & mr", *body.lines]
    for j, o in enumerate(ir.outputs):
        v = values[j]
        if not o.reduce:
            loop.append(_store(j, ir, index, v, f"[{bk}, {br}]", "m", "(k1[:, None] + r) * 0"))
            continue
        acc = _acc_dtype(o.reduce, o.dtype)
        masked = f"tl.where(m, {v}.to({_tl(acc)}), {_identity(o.reduce, o.dtype)})"
        loop.append(f"acc{j} = " + _UPDATE[o.reduce].format(a=f"acc{j}", v=masked))
    lines += ["    " + line for line in loop]
    for j, o in reds:
        if splits > 1:   # this program's partial, at [split, kept index]
            part = _tile_reduce(o.reduce, f"acc{j}")
            base = f"tl.program_id(1) * {math.prod(o.shape)} + "
            lines.append(_store(j, ir, index1, part, f"[{bk}]", "mk", "k1 * 0", base))
        else:
            value = _finish(o.reduce, _tile_reduce(o.reduce, f"acc{j}"), o.dtype, o.count)
            lines.append(_store(j, ir, index1, value, f"[{bk}]", "mk", "k1 * 0"))
    partials = {j: splits for j, _ in reds} if splits > 1 else {}
    return Launch(_source(ir, lines), (programs, splits), _warps(bk * br), partials)


def _render_rows(ir: KernelIR) -> Launch:
    """Programs own BLOCK_K whole rows; the kernel's own reductions of its rows (column sums,
    or everything) leave one partial per program."""
    split = ir.row_split
    rows, row = ir.shape[:split], ir.shape[split:]
    n_k, n_r = math.prod(rows), math.prod(row)
    if n_r > MAX_ROW:
        raise CompileUnimplemented(f"rows of {n_r} elements (at most {MAX_ROW} in a tile)")
    reds = [(j, o) for j, o in enumerate(ir.outputs) if o.reduce]
    for _, o in reds:
        if o.reduce not in _PARTIAL:
            raise CompileUnimplemented(f"a row kernel's {o.reduce} of its rows")
    br = _np2(n_r)
    bk = max(1, min(_np2(n_k), TILE // br))
    programs = -(-n_k // bk)
    kdims, rdims = list(range(split)), list(range(split, len(ir.shape)))
    _, index, groups = _tile_indices(ir, kdims, rdims)
    masks = {frozenset("k"): "mk", frozenset("r"): "mr", frozenset("kr"): "m"}
    body = _Exprs(ir, index, groups, masks)
    values = [body.emit(o.expr) for o in ir.outputs]
    lines = ["pid = tl.program_id(0)", f"k1 = pid * {bk} + tl.arange(0, {bk})",
             "mk = (k1 < " + str(n_k) + ")[:, None]", f"r1 = tl.arange(0, {br})",
             "r = r1[None, :]", f"mr = r < {n_r}", "m = mk & mr", *body.lines]
    inner = _decompose("r1", rdims, ir.shape)
    for j, o in enumerate(ir.outputs):
        if not o.reduce:
            shape, mask, zero = ((f"[{bk}, 1]", "mk", "k1[:, None] * 0") if o.row else
                                 (f"[{bk}, {br}]", "m", "(k1[:, None] + r) * 0"))
            lines.append(_store(j, ir, index, values[j], shape, mask, zero))
            continue
        acc = _acc_dtype(o.reduce, o.dtype)
        masked = (f"tl.where(m, tl.broadcast_to({values[j]}, [{bk}, {br}]).to({_tl(acc)}), "
                  f"{_identity(o.reduce, o.dtype)})")
        part = _tile_reduce(o.reduce, masked, axis=0)          # [BR]: per column
        base = f"pid * {math.prod(o.shape)} + "
        if all(ir.reduced):                                  # everything: one value
            total = _tile_reduce(o.reduce, part, axis=0)
            lines.append(f"tl.store(out{j} + pid, ({total}).to({_tl(acc)}))")
        else:
            lines.append(_store(j, ir, inner, part, f"[{br}]", f"r1 < {n_r}", "r1 * 0", base))
    return Launch(_source(ir, lines), (programs, 1), _warps(bk * br),
                  {j: programs for j, _ in reds})


def _source(ir: KernelIR, lines: list) -> str:
    args = [f"in{i}" for i in range(len(ir.input_dtypes))] + \
        [f"out{j}" for j in range(len(ir.outputs))]
    return (_PRELUDE + f"\n\n@triton.jit\ndef kernel({', '.join(args)}):\n"
            + "\n".join("    " + line for line in lines) + "\n")


def render(ir: KernelIR) -> Launch:
    """The Triton kernel `kernel(in0, ..., out0, ...)` of `ir` and how to launch it."""
    if ir.row_split is not None:
        return _render_rows(ir)
    if any(o.reduce for o in ir.outputs):
        return _render_reduction(ir)
    return _render_elementwise(ir)


def _combine(partials: torch.Tensor, o) -> torch.Tensor:
    """The reduction of per-program partials [programs, output size], finished as a kernel
    finishes it (a mean's division, the result type, 16-bit floats rounded to nearest)."""
    if o.reduce in ("sum", "mean"):
        value = partials.sum(0)
        if o.reduce == "mean":
            value = value / o.count if value.is_floating_point() else \
                torch.div(value, max(o.count, 1), rounding_mode="trunc")
    else:
        value = partials.amax(0) if o.reduce == "max" else partials.amin(0)
    return value.reshape(o.shape).to(o.dtype.torch_dtype)


_LOCK = threading.Lock()
_MODULES: dict = {}     # (source digest, folder) -> the kernel module's `kernel`
_TEMP_DIR: list = []


def _kernel_folder(cache_dir: str | None) -> str:
    """Triton compiles from source files (it reads a kernel's source back): the persistent
    cache directory, else one temporary folder per process. Triton keeps the machine code in
    its own cache (TRITON_CACHE_DIR, ~/.triton/cache), so a second process loads it."""
    if cache_dir:
        return os.path.join(cache_dir, "triton")
    if not _TEMP_DIR:
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="ndflow-triton-"))
    return _TEMP_DIR[0]


def _compile(source: str, cache_dir: str | None):
    import triton  # noqa: PLC0415 - loaded only when a GPU kernel is compiled
    source = f"# generated by ndflow.jit.codegen (triton {triton.__version__})\n{source}"
    digest = hashlib.sha256(source.encode()).hexdigest()[:32]
    folder = _kernel_folder(cache_dir)
    with _LOCK:
        hit = _MODULES.get((digest, folder))
        if hit is not None:
            return hit
        kernel = module_from_file(source, os.path.join(folder, f"t{digest}.py"),
                                  f"_ndflow_triton_t{digest}").kernel
        _MODULES[(digest, folder)] = kernel
        return kernel


def build(ir: KernelIR, device: torch.device, cache_dir: str | None):
    """The callable running `ir` on CUDA `device`: (*torch tensors) -> [torch tensors]."""
    sizes = [*ir.input_sizes, *(math.prod(o.shape) for o in ir.outputs), math.prod(ir.shape)]
    if max(sizes, default=0) > _MAX_INDEX:
        raise CompileUnimplemented("arrays of 2**31 elements or more (int32 indices)")
    if math.prod(ir.shape) == 0:
        return _run_empty(ir, device)
    launch = render(ir)
    start = _compile(launch.source, cache_dir)[launch.grid]
    partials = launch.partials
    outs = []
    for j, o in enumerate(ir.outputs):
        if j in partials:
            outs.append(((partials[j], math.prod(o.shape)),
                         _acc_dtype(o.reduce, o.dtype).torch_dtype))
        else:
            outs.append((tuple(o.shape), o.dtype.torch_dtype))
    finish = [(j, o) for j, o in enumerate(ir.outputs) if j in partials]
    # (Triton's JIT entry costs ~30 us a launch on the H100 machine's CPU; calling the
    # compiled kernel's launcher directly measured no faster there)
    warps = launch.warps

    def run(*tensors):
        args = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        results = [torch.empty(s, dtype=t, device=device) for s, t in outs]
        start(*args, *results, num_warps=warps)
        for j, o in finish:
            results[j] = _combine(results[j], o)
        return results
    # Triton compiles on the first launch: done now, so that compile time is counted as such
    # and a kernel Triton rejects falls back before the cluster runs.
    warm = [torch.zeros(n, dtype=dt.torch_dtype, device=device)
            for n, dt in zip(ir.input_sizes, ir.input_dtypes)]
    if device.type == "cuda":
        with torch.cuda.device(device):
            run(*warm)
    else:   # Triton's interpreter (TRITON_INTERPRET=1) runs kernels on CPU tensors
        run(*warm)
    run.source = launch.source
    return run


def _run_empty(ir: KernelIR, device):
    """A kernel of no elements: empty outputs, reductions' identities."""
    def run(*tensors):
        results = [torch.empty(o.shape, dtype=o.dtype.torch_dtype, device=device)
                   for o in ir.outputs]
        for r, o in zip(results, ir.outputs):
            if o.reduce is not None and r.numel():
                r.fill_(empty_reduction_value(o.reduce, o.dtype))
        return results
    run.source = ""
    return run
