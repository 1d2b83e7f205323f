"""The native half of kernels/work_pool.py: the helpers' loop and a job's run, compiled by numba
to run without the GIL, and the atomics, pauses and futex calls they are made of.

A pool is an int64 state array (each field on its own 64-byte line, `FIELDS` of them):

    JOB       2 * job number + 1 while the job is open for helpers to join, 2 * job number once
              its caller closed it (the helpers sleep on its low 32 bits)
    CALLBACK  the open job's callback for helpers, `void f(void *data, int64 scratch,
              int64 scratch_floats)`: it claims chunks from an atomic counter in its data
              until none are left (omp_pool's convention), its results in the helper's
              scratch until it may copy them out (kernels/pool_gemm.py)
    DATA      the pointer the callback is called with
    ACTIVE    helpers inside the callback now (the caller sleeps on its low 32 bits)
    SLEEPING  helpers asleep on JOB (the caller wakes them only when some are)
    STOP      nonzero: the helpers return
    WAITING   nonzero while the caller sleeps on ACTIVE
    SYSCALL   the address of libc's `syscall`, read at run time so the code stays cacheable
    JOINED    jobs helpers joined, summed over helpers (tests and reports)
    SCRATCH   per helper, (address, floats) of its own scratch memory

A helper joins a job by counting itself in ACTIVE and then checking that JOB is still the one
it saw open; the caller closes JOB after its own callback returned. Sequentially consistent
atomics order the two: either the helper sees the job closed and leaves without touching DATA,
or it is counted in ACTIVE. The caller's callback finishes every chunk itself, redoing those a
helper still holds (kernels/pool_gemm.py), so `run` returns at once: kernels/work_pool.py keeps
the job's memory until ACTIVE is zero (`wait_for_helpers` waits for that). A helper that lost
its core while it held a chunk then costs the caller one chunk's work, not a scheduler slice.
"""

from __future__ import annotations

from ndflow.kernels.build_once import built_once

MAX_HELPERS = 8
JOB, CALLBACK, DATA, ACTIVE, SLEEPING, STOP, WAITING, SYSCALL, JOINED, SCRATCH = (
    8 * i for i in range(10))
FIELDS = SCRATCH + 2 * MAX_HELPERS
SPIN_CYCLES = 30_000  # a helper's busy wait for the next job before it sleeps (~10 us): the
                       # kernels of one op follow each other closely, a step's Python does not
CALLER_SPINS = 2_000   # pauses the caller waits for joined helpers before it sleeps
SYS_FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 128, 129   # x86-64 Linux; private futexes

# numba helpers as module globals, not closure cells (numba's disk cache refuses closures)
load = store = add = swap = pause = cycles = call_callback = call_helper = futex = None


def _build():
    try:
        import numba  # noqa: PLC0415 - loads with the first shared kernel, not with ndflow
    except ImportError:
        return None
    from llvmlite import ir  # noqa: PLC0415
    from numba import types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    global load, store, add, swap, pause, cycles, call_callback, call_helper, futex
    i64 = ir.IntType(64)

    def field(builder, address):
        return builder.inttoptr(address, i64.as_pointer())

    @intrinsic
    def load(typingctx, address):
        def codegen(context, builder, sig, args):
            return builder.load_atomic(field(builder, args[0]), "seq_cst", 8)
        return types.int64(types.int64), codegen

    @intrinsic
    def store(typingctx, address, value):
        def codegen(context, builder, sig, args):
            builder.store_atomic(args[1], field(builder, args[0]), "seq_cst", 8)
            return context.get_dummy_value()
        return types.none(types.int64, types.int64), codegen

    @intrinsic
    def add(typingctx, address, value):
        """The value before adding."""
        def codegen(context, builder, sig, args):
            return builder.atomic_rmw("add", field(builder, args[0]), args[1], "seq_cst")
        return types.int64(types.int64, types.int64), codegen

    @intrinsic
    def swap(typingctx, address, expected, value):
        """Stores `value` if the int64 at `address` is `expected`; the value it found."""
        def codegen(context, builder, sig, args):
            pair = builder.cmpxchg(field(builder, args[0]), args[1], args[2], "seq_cst",
                                   "seq_cst")
            return builder.extract_value(pair, 0)
        return types.int64(types.int64, types.int64, types.int64), codegen

    @intrinsic
    def pause(typingctx):
        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic("llvm.x86.sse2.pause",
                                                  fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(fn, [])
            return context.get_dummy_value()
        return types.none(), codegen

    @intrinsic
    def cycles(typingctx):
        def codegen(context, builder, sig, args):
            fn = builder.module.declare_intrinsic("llvm.readcyclecounter",
                                                  fnty=ir.FunctionType(i64, []))
            return builder.call(fn, [])
        return types.int64(), codegen

    @intrinsic
    def call_callback(typingctx, callback, data):
        def codegen(context, builder, sig, args):
            ptr = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [ptr])
            builder.call(builder.inttoptr(args[0], fnty.as_pointer()),
                         [builder.inttoptr(args[1], ptr)])
            return context.get_dummy_value()
        return types.none(types.int64, types.int64), codegen

    @intrinsic
    def call_helper(typingctx, callback, data, scratch, floats):
        def codegen(context, builder, sig, args):
            ptr = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [ptr, i64, i64])
            builder.call(builder.inttoptr(args[0], fnty.as_pointer()),
                         [builder.inttoptr(args[1], ptr), args[2], args[3]])
            return context.get_dummy_value()
        return types.none(types.int64, types.int64, types.int64, types.int64), codegen

    @intrinsic
    def futex(typingctx, syscall, address, op, value):
        """libc's `syscall(SYS_futex, address, op, value, NULL)`: WAIT sleeps while the 32 bits
        at `address` equal `value`; WAKE wakes up to `value` sleepers."""
        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(i64, [i64], var_arg=True)
            fn = builder.inttoptr(args[0], fnty.as_pointer())
            return builder.call(fn, [ir.Constant(i64, SYS_FUTEX), args[1], args[2], args[3],
                                     ir.Constant(i64, 0)])
        return types.int64(types.int64, types.int64, types.int64, types.int64), codegen

    @numba.njit("void(int64, int64)", nogil=True, cache=True)
    def helper_loop(state, index):
        """Helper `index`'s life: join each job opened while it watches, sleep between jobs,
        return when STOP is set."""
        sys = load(state + 8 * SYSCALL)
        seen = load(state + 8 * JOB)
        while True:
            start = cycles()
            while True:
                if load(state + 8 * STOP) != 0:
                    return
                job = load(state + 8 * JOB)
                if job != seen and job & 1 == 1:
                    break
                if cycles() - start < SPIN_CYCLES:
                    pause()
                    continue
                add(state + 8 * SLEEPING, 1)
                if load(state + 8 * JOB) == job and load(state + 8 * STOP) == 0:
                    futex(sys, state + 8 * JOB, FUTEX_WAIT, job & 0xFFFFFFFF)
                add(state + 8 * SLEEPING, -1)
                start = cycles()
            add(state + 8 * ACTIVE, 1)
            if load(state + 8 * JOB) == job:   # still open: its memory is kept while counted
                add(state + 8 * JOINED, 1)
                scratch = state + 8 * (SCRATCH + 2 * index)
                call_helper(load(state + 8 * CALLBACK), load(state + 8 * DATA),
                            load(scratch), load(scratch + 8))
            seen = job
            if add(state + 8 * ACTIVE, -1) == 1 and load(state + 8 * WAITING) != 0:
                futex(sys, state + 8 * ACTIVE, FUTEX_WAKE, 1)

    @numba.njit("void(int64)", nogil=True, cache=True)
    def wait_for_helpers(state):
        """Returns once no helper is inside a job (spinning a while, then asleep on ACTIVE)."""
        sys = load(state + 8 * SYSCALL)
        spins = 0
        while True:
            active = load(state + 8 * ACTIVE)
            if active == 0:
                return
            spins += 1
            if spins < CALLER_SPINS:
                pause()
                continue
            store(state + 8 * WAITING, 1)
            active = load(state + 8 * ACTIVE)
            if active != 0:
                futex(sys, state + 8 * ACTIVE, FUTEX_WAIT, active)
            store(state + 8 * WAITING, 0)

    @numba.njit("void(int64, int64, int64, int64, int64)", nogil=True, cache=True)
    def run(state, number, helpers_callback, callers_callback, data):
        """Job `number` (above every earlier one): `callers_callback(data)` on this thread
        while helpers that join run theirs; returns when it has returned (helpers may still
        be inside: `wait_for_helpers`)."""
        sys = load(state + 8 * SYSCALL)
        store(state + 8 * CALLBACK, helpers_callback)
        store(state + 8 * DATA, data)
        store(state + 8 * JOB, 2 * number + 1)
        if load(state + 8 * SLEEPING) > 0:
            futex(sys, state + 8 * JOB, FUTEX_WAKE, 1 << 30)
        call_callback(callers_callback, data)
        store(state + 8 * JOB, 2 * number)

    return helper_loop, run, wait_for_helpers


functions = built_once(_build)
