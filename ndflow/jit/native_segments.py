"""Native segments: runs of a CPU executable's steps that each are one numba call on the calling
thread, compiled into one numba function, as XLA compiles a cluster into one function.

An executable (executable.py) is straight-line Python, one call per step. For small tensors the
calls cost more than the work: in a 31-layer MLP of 64 units (batch 64) a [64 x 64] by
[64 x 64] product is 3.4 us of arithmetic in a call of ~10 us, a fused ReLU gradient with its
bias gradient 1 us in ~10. Such steps need no Python between them:
- a float32 `MatMul` or `_FusedMatMul` (bias, optionally ReLU) below gemm.MIN_FLOPS (the
  products a GEMM library runs on one core anyway), on kernels/small_gemm_numba.py's register
  kernel;
- a generated kernel that reads its tensors by address (numba_backend's unchunked kernels).
A run of at least two becomes one function `kernel(inputs..., outputs..., scratch)`: the
segment's inputs (made contiguous) and the outputs later steps read are torch tensors passed by
address; every value used only inside lives in one scratch allocation (64-byte aligned offsets,
at most SCRATCH_BYTES: a longer run is cut). The segment calls the generated kernels numba
already compiled for their own steps (numba_compile.compiled_kernel), not compiled again.

`NDFLOW_JIT_NATIVE_SEGMENTS=0` keeps every step a call of its own.
"""

from __future__ import annotations

import math

import torch

from ndflow.core import config
from ndflow.jit.codegen.numba_backend import PRELUDE
from ndflow.jit.codegen.numba_compile import compile_source
from ndflow.kernels import gemm, raw_memory, small_gemm_numba

SCRATCH_BYTES = 1 << 24    # a segment's values used only inside it: 16 MiB at most
_ALIGN = 64
_PRODUCTS = {(): False, ("BiasAdd",): False, ("BiasAdd", "Relu"): True}   # fused_ops -> relu


class _Native:
    """One step's call inside a segment: `line(address_of)` is its source line, given each
    tensor's address expression."""

    def __init__(self, step, line):
        self.step, self.line = step, line


def _static(t) -> tuple | None:
    shape = t.shape
    return tuple(shape.as_list()) if shape.is_fully_defined() else None


def _product(step):
    """The step as a small product on the register kernel, or None."""
    op = step.op
    if step.fused or op.type not in ("MatMul", "_FusedMatMul"):
        return None
    relu = _PRODUCTS.get(tuple(op.attrs.get("fused_ops", ())))
    if relu is None or any(t.dtype.name != "float32" for t in [*op.inputs, *op.outputs]):
        return None
    a, b = (_static(t) for t in op.inputs[:2])
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    ta, tb = bool(op.attrs.get("transpose_a")), bool(op.attrs.get("transpose_b"))
    m, k = (a[1], a[0]) if ta else a
    n = b[0] if tb else b[1]
    if not (m and k and n) or 2.0 * m * k * n >= gemm.MIN_FLOPS:
        return None
    # op(A) [m, k] and op(B) [k, n] of contiguous A and B, as the register kernel indexes
    a_row, a_col = (1, m) if ta else (k, 1)
    b_row, b_col = (1, k) if tb else (n, 1)
    with_bias = len(op.inputs) == 3

    def line(at):   # (small_gemm_numba.product_functions, by which strides are 1)
        bias = at(op.inputs[2]) if with_bias else "0"
        return (f"product_{int(a_col == 1)}{int(b_col == 1)}({at(op.inputs[0])}, {m * k}, "
                f"{a_row}, {a_col}, {at(op.inputs[1])}, {k * n}, {b_row}, {b_col}, {bias}, "
                f"{at(op.outputs[0])}, {m}, {k}, {n}, {relu})")
    return _Native(step, line)


def _kernel(step, index: int):
    """The step's generated kernel, called as `f<index>` (the dispatcher compiled for it), or
    None."""
    digest = getattr(step.fn, "native", None) if step.fused else None
    if digest is None:
        return None
    name = f"f{index}"

    def line(at):
        return f"{name}({', '.join(at(t) for t in [*step.inputs, *step.outputs])})"
    found = _Native(step, line)
    found.source = f"{name} = compiled_kernel({digest!r})"
    return found


def native_form(step, index: int):
    return _product(step) or _kernel(step, index)


def _nbytes(t) -> int:
    return math.prod(_static(t)) * t.dtype.size


def segments(steps: list, fetched: list, make_step, cache_dir: str | None) -> list:
    """`steps` with each run of native steps replaced by one step running it (`make_step(fn,
    inputs, outputs, ops)` makes it); the others as they are."""
    if not config.get(config.NDFLOW_JIT_NATIVE_SEGMENTS) or \
            small_gemm_numba.product_functions() is None:
        return steps
    forms = [native_form(s, i) if all(_static(t) is not None for t in [*s.inputs, *s.outputs])
             else None for i, s in enumerate(steps)]
    readers: dict = {}
    for i, s in enumerate(steps):
        for t in s.inputs:
            readers.setdefault(t, []).append(i)
    fetched = set(fetched)
    out, i = [], 0
    while i < len(steps):
        j, scratch = i, 0
        while j < len(steps) and forms[j] is not None:
            inside = sum(_nbytes(t) for t in steps[j].outputs)
            if j > i and scratch + inside > SCRATCH_BYTES:
                break
            scratch += inside
            j += 1
        if j - i >= 2:
            out.append(_segment(forms[i:j], readers, fetched, j, make_step, cache_dir))
            i = j
        else:
            out.append(steps[i])
            i += 1
    return out


def _segment(forms: list, readers: dict, fetched: set, end: int, make_step, cache_dir):
    made, seen, inputs, outputs, inner = set(), set(), [], [], []
    for f in forms:
        for t in f.step.inputs:   # (sets: a tensor's == may be elementwise)
            if t not in made and t not in seen:
                seen.add(t)
                inputs.append(t)
        for t in f.step.outputs:
            made.add(t)
            later = t in fetched or any(r >= end for r in readers.get(t, ()))
            (outputs if later else inner).append(t)
    where: dict = {t: f"p{k}" for k, t in enumerate(inputs)}
    where.update((t, f"p{len(inputs) + k}") for k, t in enumerate(outputs))
    offset = 0
    for t in inner:
        where[t] = f"scratch + {offset}" if offset else "scratch"
        offset += -(-_nbytes(t) // _ALIGN) * _ALIGN
    params = [f"p{k}" for k in range(len(inputs) + len(outputs))] + ["scratch"]
    body = [f.line(where.__getitem__) for f in forms]
    kernels = [f.source for f in forms if hasattr(f, "source")]
    source = "\n".join(
        [PRELUDE, "from ndflow.kernels.small_gemm_numba import product_functions",
         "from ndflow.jit.codegen.numba_compile import compiled_kernel",
         "(product_00, product_01), (product_10, product_11) = product_functions()", "",
         *kernels, "",
         # not cached: a compiled call through a C function pointer holds this process's
         # address (a segment compiles in ~0.05 s)
         "@njit(cache=False, nogil=True)", f"def kernel({', '.join(params)}):",
         # (LLVM inlines the calls: 512-bit vectors must be this function's choice too)
         "    wide_vectors()", *[f"    {line}" for line in body], ""])
    import numba  # noqa: PLC0415 - the segment is compiled only where numba is
    kernel = compile_source(source, numba.types.void(*[numba.types.int64] * len(params)),
                            cache_dir)
    kernel.native_segment = True   # (compiled in each process, never from numba's cache)
    fn = _runner(kernel, inputs, outputs, max(offset, 1), source)
    ops = [op for f in forms for op in (f.step.group_ops or [f.step.op])]
    return make_step(fn, inputs, outputs, ops)


def _runner(kernel, inputs: list, outputs: list, scratch_bytes: int, source: str):
    ins = [(t.dtype.torch_dtype, math.prod(_static(t))) for t in inputs]
    # outputs of one shape and dtype come from one allocation (`unbind`: one call for all
    # the views): 30 activations of 16 KB took 50 us as 30 allocations, written cold
    groups: dict = {}
    for k, t in enumerate(outputs):
        groups.setdefault((_static(t), t.dtype.torch_dtype), []).append(k)
    blocks = [((len(ks), *shape), dt, ks) for (shape, dt), ks in groups.items()]
    count = len(outputs)
    outs = [(t.dtype.torch_dtype, math.prod(_static(t))) for t in outputs]
    flat, u8 = raw_memory.flat, torch.uint8

    def run(*tensors):
        held = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        results = [None] * count
        for shape, dt, ks in blocks:
            for k, view in zip(ks, torch.empty(shape, dtype=dt).unbind(0)):
                results[k] = view
        scratch = torch.empty(scratch_bytes, dtype=u8)
        kernel(*[flat(t, dt, n) for t, (dt, n) in zip(held, ins)],
               *[flat(r, dt, n) for r, (dt, n) in zip(results, outs)],
               flat(scratch, u8, scratch_bytes))
        return results
    run.source = source
    return run
