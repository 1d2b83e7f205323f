"""Explicit 16-lane float32 vectors for hand-written numba kernels: `vector_ops()` builds a
numba type and intrinsics (on first use, so that `import ndflow` does not load numba).

LLVM's loop vectorizer only vectorizes innermost loops, and numba gives it no way to hold a
register-blocked accumulator tile: a direct convolution written with scalars vectorized only
when its tap loops happened to be fully unrolled, and then at 4 accumulators with 25-deep
dependency chains (measured on MNIST's 5x5x1x32 conv + relu + pool, one thread, Xeon with
AVX-512: 2.4 ms). `f32x16` is an LLVM `<16 x float>` as a numba type, so a kernel keeps a
tile of accumulators in registers and writes its FMAs, masks and stores itself (0.66 ms for
the same work). On CPUs without AVX-512 LLVM splits each vector into narrower registers.

`wide_vectors()` marks the function being compiled with the LLVM attributes
"prefer-vector-width"/"min-legal-vector-width" = 512: without them LLVM's tuning for
AVX-512 server cores prefers 256-bit vectors and splits every 16-lane operation in two.
Array arguments are 1-D contiguous arrays (numba.carray); indices are element offsets.
Kernels cache machine code that inlines these intrinsics, and numba's disk cache keys on the
kernel's own file: after changing this one, touch the kernels' files.
"""

from __future__ import annotations

import platform
import threading
from types import SimpleNamespace

_LOCK = threading.Lock()
_OPS: list = []   # [namespace], built once

LANES = 16
# x86 has non-temporal stores (vmovntps) and the `sfence` that orders them
STREAMING_STORES = platform.machine().lower() in ("x86_64", "amd64")


def vector_ops() -> SimpleNamespace:
    """The `f32x16` type and its intrinsics (`wide_vectors`, `vload`, `vstore`,
    `vstore_stream`, `store_fence`, `vsplat`, `vzero`, `vfma`, `vadd`, `vsub`, `vmul`, `vsum`,
    `vsum_tree`, `vany_nonzero`, `vrelu`, `vkeep_ge`, `vmax_step`, `vstore_codes`, `vfma_where`,
    `vadd_below`, `vwhere_zero`, `vbroadcast`, `vmax`, `vhmax`, `vexp`, `vtranspose`), built
    on first use."""
    if not _OPS:
        with _LOCK:
            if not _OPS:
                _OPS.append(_build())
    return _OPS[0]


def _build() -> SimpleNamespace:
    from llvmlite import ir  # noqa: PLC0415 - numba loads with the first kernel, not ndflow
    from numba import types  # noqa: PLC0415
    from numba.core import cgutils  # noqa: PLC0415
    from numba.extending import intrinsic, models, register_model  # noqa: PLC0415

    f32 = ir.FloatType()
    vec = ir.VectorType(f32, LANES)
    byte_vec = ir.VectorType(ir.IntType(8), LANES)
    i32 = ir.IntType(32)

    class F32x16(types.Type):
        """An LLVM <16 x float> value."""

        def __init__(self):
            super().__init__(name="f32x16")

    f32x16 = F32x16()

    @register_model(F32x16)
    class _F32x16Model(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, vec)

    def _pointer(context, builder, arrty, arr, index, elem):
        data = context.make_array(arrty)(context, builder, arr).data
        return builder.bitcast(builder.gep(data, [index]), elem.as_pointer())

    def _splat(builder, scalar, vecty):
        v = builder.insert_element(ir.Constant(vecty, ir.Undefined), scalar, ir.Constant(i32, 0))
        return builder.shuffle_vector(v, ir.Constant(vecty, ir.Undefined),
                                      ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))

    def _fma(builder, a, b, c):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3),
                                            "llvm.fma.v16f32")
        return builder.call(fn, [a, b, c])

    def _codes_equal(context, builder, sig, codes, index, k):
        """The lanes of the uint8 array `codes` at `index` that equal the integer `k`."""
        got = builder.load(_pointer(context, builder, sig.args[0], codes, index, byte_vec), align=1)
        want = context.cast(builder, k, sig.args[2], types.uint8)
        return builder.icmp_unsigned("==", got, _splat(builder, want, byte_vec))

    def _is_array(t) -> bool:
        return isinstance(t, types.Array) and t.ndim == 1

    @intrinsic
    def wide_vectors(typingctx):
        """Lets the function being compiled use 512-bit registers (see the module doc)."""
        def codegen(context, builder, sig, args):
            attrs = builder.function.attributes
            # llvmlite's attribute set only admits flag attributes by name: add the key="value"
            # pairs to the underlying set, which it prints verbatim into the IR.
            try:
                set.add(attrs, '"prefer-vector-width"="512"')
                set.add(attrs, '"min-legal-vector-width"="512"')
            except TypeError:  # another llvmlite: LLVM's default vector width (slower, same)
                pass
            return context.get_dummy_value()
        return types.none(), codegen

    @intrinsic
    def vload(typingctx, arr, index):
        """arr[index:index + 16] of a float32 array."""
        if not _is_array(arr) or arr.dtype != types.float32:
            return None

        def codegen(context, builder, sig, args):
            return builder.load(_pointer(context, builder, sig.args[0], args[0], args[1], vec),
                                align=4)
        return f32x16(arr, index), codegen

    @intrinsic
    def vstore(typingctx, arr, index, v):
        """arr[index:index + 16] = v."""
        if not _is_array(arr) or arr.dtype != types.float32 or v != f32x16:
            return None

        def codegen(context, builder, sig, args):
            builder.store(args[2], _pointer(context, builder, sig.args[0], args[0], args[1], vec),
                          align=4)
            return context.get_dummy_value()
        return types.none(arr, index, v), codegen

    @intrinsic
    def vstore_stream(typingctx, arr, index, v):
        """arr[index:index + 16] = v as a non-temporal store (x86 `vmovntps`: the line goes
        to memory without being read into the cache first); the address must be 64-byte
        aligned. A plain store where STREAMING_STORES is false. Call `store_fence()` before
        other threads read what was stored."""
        if not _is_array(arr) or arr.dtype != types.float32 or v != f32x16:
            return None

        def codegen(context, builder, sig, args):
            ptr = _pointer(context, builder, sig.args[0], args[0], args[1], vec)
            if not STREAMING_STORES:
                builder.store(args[2], ptr, align=4)
                return context.get_dummy_value()
            store = builder.store(args[2], ptr, align=64)
            store.set_metadata("nontemporal", builder.module.add_metadata([i32(1)]))
            return context.get_dummy_value()
        return types.none(arr, index, v), codegen

    @intrinsic
    def store_fence(typingctx):
        """x86 `sfence`: the streaming stores before it are visible before any store after
        it (nothing where STREAMING_STORES is false)."""
        def codegen(context, builder, sig, args):
            if STREAMING_STORES:
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
                    ir.VoidType(), []), "llvm.x86.sse.sfence")
                builder.call(fn, [])
            return context.get_dummy_value()
        return types.none(), codegen

    @intrinsic
    def vsplat(typingctx, s):
        """The scalar `s` in every lane."""
        if not isinstance(s, types.Number):
            return None

        def codegen(context, builder, sig, args):
            return _splat(builder, context.cast(builder, args[0], sig.args[0], types.float32), vec)
        return f32x16(s), codegen

    @intrinsic
    def vzero(typingctx):
        def codegen(context, builder, sig, args):
            return ir.Constant(vec, [0.0] * LANES)
        return f32x16(), codegen

    @intrinsic
    def vfma(typingctx, a, b, c):
        """a * b + c, rounded once."""
        if not a == b == c == f32x16:
            return None

        def codegen(context, builder, sig, args):
            return _fma(builder, *args)
        return f32x16(a, b, c), codegen

    @intrinsic
    def vadd(typingctx, a, b):
        if not a == b == f32x16:
            return None

        def codegen(context, builder, sig, args):
            return builder.fadd(args[0], args[1])
        return f32x16(a, b), codegen

    @intrinsic
    def vsub(typingctx, a, b):
        if not a == b == f32x16:
            return None

        def codegen(context, builder, sig, args):
            return builder.fsub(args[0], args[1])
        return f32x16(a, b), codegen

    @intrinsic
    def vmul(typingctx, a, b):
        if not a == b == f32x16:
            return None

        def codegen(context, builder, sig, args):
            return builder.fmul(args[0], args[1])
        return f32x16(a, b), codegen

    @intrinsic
    def vsum(typingctx, a):
        """The lanes' sum as a float32, added in lane order (an ordered reduction: the same
        bits on every CPU, whatever its vector width)."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            total = ir.Constant(ir.FloatType(), 0.0)
            for k in range(LANES):
                total = builder.fadd(total, builder.extract_element(
                    args[0], ir.Constant(ir.IntType(32), k)))
            return total
        return types.float32(a), codegen

    @intrinsic
    def vsum_tree(typingctx, a):
        """The lanes' sum as a float32, added as a tree (halves, then quarters...): four
        dependent adds where `vsum` has sixteen, in an order fixed by the lane count."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            v, width = args[0], LANES
            while width > 1:
                width //= 2
                lo = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width),
                                                              list(range(width))))
                hi = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width),
                                                              list(range(width, 2 * width))))
                v = builder.fadd(lo, hi)
            return builder.extract_element(v, ir.Constant(i32, 0))
        return types.float32(a), codegen

    @intrinsic
    def vany_nonzero(typingctx, a):
        """Whether some lane of `a` is not 0 (NaN included)."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            zero = ir.Constant(vec, [0.0] * LANES)
            lanes = builder.fcmp_unordered("!=", args[0], zero)
            bits = builder.bitcast(lanes, ir.IntType(LANES))
            return builder.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(LANES), 0))
        return types.boolean(a), codegen

    @intrinsic
    def vrelu(typingctx, a):
        """0 where a < 0, else a (NaN stays NaN)."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            zero = ir.Constant(vec, [0.0] * LANES)
            return builder.select(builder.fcmp_ordered("<", args[0], zero), zero, args[0])
        return f32x16(a), codegen

    @intrinsic
    def vkeep_ge(typingctx, u, t, a):
        """a in the lanes where u >= t, 0 elsewhere (a dropout's keep mask applied)."""
        if not u == t == a == f32x16:
            return None

        def codegen(context, builder, sig, args):
            zero = ir.Constant(vec, [0.0] * LANES)
            return builder.select(builder.fcmp_ordered(">=", args[0], args[1]), args[2], zero)
        return f32x16(u, t, a), codegen

    @intrinsic
    def vmax_step(typingctx, best, arg, v, k):
        """(best, arg) after one more window position `k` with value `v`: v replaces best where it
        is greater or NaN (ATen's max-pool rule), and arg becomes k there."""
        if not best == arg == v == f32x16 or not isinstance(k, types.Integer):
            return None
        ret = types.UniTuple(f32x16, 2)

        def codegen(context, builder, sig, args):
            best, arg, v, k = args
            take = builder.or_(builder.fcmp_ordered(">", v, best),
                               builder.fcmp_unordered("uno", v, v))
            kv = _splat(builder, context.cast(builder, k, sig.args[3], types.float32), vec)
            return context.make_tuple(builder, ret, [builder.select(take, v, best),
                                                     builder.select(take, kv, arg)])
        return ret(best, arg, v, k), codegen

    @intrinsic
    def vstore_codes(typingctx, codes, index, arg, best, inactive):
        """codes[index:index + 16] = arg as uint8, or `inactive` where best > 0 does not hold
        (a pooled relu output of 0 or NaN, whose gradient ReluGrad zeroes)."""
        if not _is_array(codes) or codes.dtype != types.uint8 or not arg == best == f32x16:
            return None

        def codegen(context, builder, sig, args):
            codes, index, arg, best, inactive = args
            zero = ir.Constant(vec, [0.0] * LANES)
            off = context.cast(builder, inactive, sig.args[4], types.uint8)
            off = _splat(builder, off, byte_vec)
            value = builder.select(builder.fcmp_ordered(">", best, zero),
                                   builder.fptoui(arg, byte_vec), off)
            builder.store(value, _pointer(context, builder, sig.args[0], codes, index, byte_vec),
                          align=1)
            return context.get_dummy_value()
        return types.none(codes, index, arg, best, inactive), codegen

    @intrinsic
    def vfma_where(typingctx, codes, index, k, x, g, a):
        """a + x * g in the lanes where codes[index:index + 16] == k, a elsewhere (a masked FMA)."""
        if not _is_array(codes) or not x == g == a == f32x16:
            return None

        def codegen(context, builder, sig, args):
            codes, index, k, x, g, a = args
            mask = _codes_equal(context, builder, sig, codes, index, k)
            return builder.select(mask, _fma(builder, x, g, a), a)
        return f32x16(codes, index, k, x, g, a), codegen

    @intrinsic
    def vadd_below(typingctx, codes, index, limit, g, a):
        """a + g in the lanes where codes[index:index + 16] < limit, a elsewhere."""
        if not _is_array(codes) or not g == a == f32x16:
            return None

        def codegen(context, builder, sig, args):
            codes, index, limit, g, a = args
            got = builder.load(_pointer(context, builder, sig.args[0], codes, index, byte_vec),
                               align=1)
            bound = context.cast(builder, limit, sig.args[2], types.uint8)
            bound = _splat(builder, bound, byte_vec)
            return builder.select(builder.icmp_unsigned("<", got, bound), builder.fadd(a, g), a)
        return f32x16(codes, index, limit, g, a), codegen

    @intrinsic
    def vwhere_zero(typingctx, codes, index, fill, a):
        """fill in the lanes where the uint8 codes[index:index + 16] are 0, a elsewhere."""
        if not _is_array(codes) or not fill == a == f32x16:
            return None

        def codegen(context, builder, sig, args):
            got = builder.load(_pointer(context, builder, sig.args[0], args[0], args[1],
                                        byte_vec), align=1)
            zero = builder.icmp_unsigned("==", got, ir.Constant(byte_vec, [0] * LANES))
            return builder.select(zero, args[2], args[3])
        return f32x16(codes, index, fill, a), codegen

    @intrinsic
    def vbroadcast(typingctx, arr, index):
        """arr[index] in every lane (one load, no negative-index wrap)."""
        if not _is_array(arr) or arr.dtype != types.float32:
            return None

        def codegen(context, builder, sig, args):
            scalar = builder.load(_pointer(context, builder, sig.args[0], args[0], args[1], f32),
                                  align=4)
            return _splat(builder, scalar, vec)
        return f32x16(arr, index), codegen

    @intrinsic
    def vtranspose(typingctx, src, src_base, src_stride, dst, dst_base, dst_stride):
        """A 16 x 16 block transposed: dst[dst_base + s * dst_stride + t] =
        src[src_base + t * src_stride + s] for s, t < 16 (16 loads, four rounds of lane
        interleaving, 16 stores; `src` and `dst` float32 arrays, not overlapping)."""
        if not (_is_array(src) and _is_array(dst) and src.dtype == dst.dtype == types.float32):
            return None
        index = types.intp
        lo = ir.Constant(ir.VectorType(i32, LANES), [k // 2 + 16 * (k % 2) for k in range(16)])
        hi = ir.Constant(ir.VectorType(i32, LANES), [8 + k // 2 + 16 * (k % 2)
                                                     for k in range(16)])

        def codegen(context, builder, sig, args):
            arrty_src, _, _, arrty_dst = sig.args[:4]
            s_arr, s_base, s_step, d_arr, d_base, d_step = (
                context.cast(builder, a, t, index) if k not in (0, 3) else a
                for k, (a, t) in enumerate(zip(args, sig.args)))
            rows = [builder.load(_pointer(context, builder, arrty_src, s_arr,
                                          builder.add(s_base, builder.mul(
                                              s_step, ir.Constant(s_step.type, t))), vec),
                                 align=4) for t in range(LANES)]
            for _ in range(4):   # a perfect shuffle of the rows, four times: the transpose
                pairs = [(rows[i], rows[i + 8]) for i in range(8)]
                rows = [builder.shuffle_vector(a, b, mask) for a, b in pairs
                        for mask in (lo, hi)]
            for t in range(LANES):
                builder.store(rows[t], _pointer(context, builder, arrty_dst, d_arr,
                                                builder.add(d_base, builder.mul(
                                                    d_step, ir.Constant(d_step.type, t))),
                                                vec), align=4)
            return context.get_dummy_value()
        return types.none(src, index, index, dst, index, index), codegen

    @intrinsic
    def vmax(typingctx, a, b):
        """The lane-wise maximum (b where a is NaN)."""
        if not a == b == f32x16:
            return None

        def codegen(context, builder, sig, args):
            return builder.select(builder.fcmp_ordered(">", args[0], args[1]), args[0], args[1])
        return f32x16(a, b), codegen

    @intrinsic
    def vhmax(typingctx, a):
        """The largest lane as a float32."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            best = builder.extract_element(args[0], ir.Constant(i32, 0))
            for k in range(1, LANES):
                lane = builder.extract_element(args[0], ir.Constant(i32, k))
                best = builder.select(builder.fcmp_ordered(">", lane, best), lane, best)
            return best
        return types.float32(a), codegen

    @intrinsic
    def vexp(typingctx, a):
        """e**a per lane, within 2 ulp (Cephes' expf: a = n ln 2 + r, |r| <= ln(2) / 2, a
        degree-6 polynomial for e**r, times 2**n built in the exponent bits); 0 below
        -87.3 (where float32's normal range ends), inf above 88.37, NaN stays NaN."""
        if a != f32x16:
            return None

        def codegen(context, builder, sig, args):
            def splat(c):
                return ir.Constant(vec, [c] * LANES)
            x = args[0]
            low = builder.fcmp_ordered("<", x, splat(-87.3))
            high = builder.fcmp_ordered(">", x, splat(88.3762626647949))
            x = builder.select(low, splat(-87.3), builder.select(high, splat(88.0), x))
            floor = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec]),
                                                   "llvm.floor.v16f32")
            n = builder.call(floor, [_fma(builder, x, splat(1.44269504088896341),
                                          splat(0.5))])
            r = _fma(builder, n, splat(-0.693359375), x)
            r = _fma(builder, n, splat(2.12194440e-4), r)
            p = splat(1.9875691500e-4)
            for c in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                      5.0000001201e-1):
                p = _fma(builder, p, r, splat(c))
            y = _fma(builder, builder.fmul(p, r), r, builder.fadd(r, splat(1.0)))
            ints = ir.VectorType(i32, LANES)
            e = builder.shl(builder.add(builder.fptosi(n, ints), ir.Constant(ints, [127] * LANES)),
                            ir.Constant(ints, [23] * LANES))
            y = builder.fmul(y, builder.bitcast(e, vec))
            y = builder.select(high, splat(float("inf")), y)
            return builder.select(low, splat(0.0), y)
        return f32x16(a), codegen

    return SimpleNamespace(
        vmax=vmax, vhmax=vhmax, vexp=vexp, vbroadcast=vbroadcast, vwhere_zero=vwhere_zero,
        f32x16=f32x16, wide_vectors=wide_vectors, vload=vload, vstore=vstore,
        vstore_stream=vstore_stream, store_fence=store_fence, vsplat=vsplat, vzero=vzero,
        vfma=vfma, vadd=vadd, vsub=vsub, vmul=vmul, vsum=vsum, vsum_tree=vsum_tree,
        vany_nonzero=vany_nonzero,
        vrelu=vrelu, vkeep_ge=vkeep_ge,
        vmax_step=vmax_step, vstore_codes=vstore_codes, vfma_where=vfma_where,
        vadd_below=vadd_below, vtranspose=vtranspose)
