"""When a cluster compiles, and the executables it compiled: TensorFlow's DeviceCompiler with
its DeviceCompilationProfiler, for one `_XlaClusterCall`.

    dc = DeviceCompiler("cluster_3", fg, torch.device("cpu"), xla_flags(), must_compile=False)
    outputs = dc.run(args, fallback)     # fallback(args) runs the uncompiled function

The policy is TensorFlow's, exactly (xla.md 2.2-2.3):

* mode: strict when the cluster must compile (`jit_compile=True`, or
  `--tf_xla_enable_lazy_compilation=false`): compile on first sight, no fallback, errors name
  the cluster. Otherwise async with `--tf_xla_async_compilation`, else lazy.
* `--tf_xla_always_defer_compilation`, or an earlier compile failure of this cluster (lazy
  mode logs `Compilation failed:... Falling back to TF function call.` once): fallback only.
* every call counts an execution of the cluster; a cluster with more than 10 compiles and
  fewer than 50 executions per compile turns megamorphic for good and compiles no new
  signature (compiled ones still run).
* the cluster's first execution compiles; after that a new signature (dtypes and shapes of
  the arguments) compiles on its second request (lazy), or is queued on a pool of 10
  background threads while the fallback runs (async; not when 10 are in flight).
* compiled executables are kept for the life of the process (never evicted), and with
  `--tf_xla_persistent_cache_directory` stored for the next process (persistent_cache.py).

One difference, on purpose: TensorFlow keys the counts and the cache by the cluster's name,
and a tf.function retraced for a new shape gets new clusters, each compiled on its first
execution (the "keeps recompiling" of tensorflow#62198). ndflow keys both by what the cluster
computes (its graph without names and traced shapes, `graph_fingerprint`), so retraces share
compiled signatures and the lazy and megamorphic rules hold across them. Also: TF fails the
op on a lazy compile error other than UNIMPLEMENTED; ndflow falls back for any compile error
in lazy mode (the uncompiled function then reports a real error in its own words), and a
must-compile cluster compiles even under `--tf_xla_always_defer_compilation` (it has no
fallback to defer to).

Logs, in TensorFlow's words: TF_CPP_VMODULE=device_compilation_profiler=1 (or the older
xla_compilation_cache=1) shows `Compiled cluster_3 1 times, compile time: 153421 us,
cumulative: 153421 us (0 us / 153 ms)` and `Marking cluster_3 as megamorphic, ...`; level 2
the reasons for not compiling; device_compiler=2 the cache lookups (`Compilation cache entry
hit: 2 signature: cluster_3 with request count 5`, `Instantly compiling for signature: ...`,
`Already Compiled for signature: ...`). The first compile in a process logs (INFO)
`Compiled cluster using XLA!  This line is logged at most once for the lifetime of the
process.`
"""

from __future__ import annotations

import concurrent.futures
import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ndflow.core import config, logging
from ndflow.core.errors import InternalError, OpError, UnimplementedError
from ndflow.jit import persistent_cache
from ndflow.jit.errors import CompileUnimplemented
from ndflow.jit.executable import compile_cluster

NUM_ASYNC_COMPILER_THREADS = 10       # kNumAsyncDeviceCompilerThreads
COMPILATION_THRESHOLD = 2             # kDefaultCompilationThreshold
MEGAMORPHIC_COMPILE_THRESHOLD = 10    # kCompileThreshold
MIN_EXECUTIONS_PER_COMPILE = 50       # kMinExecutionsPerCompile

# TF's files: device_compilation_profiler.cc (counts, megamorphic, thresholds) and
# device_compiler.h (cache lookups); xla_compilation_cache.cc held both in older versions.
_PROFILER_MODULES = ("device_compilation_profiler", "xla_compilation_cache")
_COMPILER_MODULES = ("device_compiler", "xla_compilation_cache")


_LOG_ENV = ("TF_CPP_VMODULE", "TF_CPP_MIN_VLOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL",
            "TF_CPP_MIN_LOG_LEVEL")
_vlog_on_memo: dict = {}


def _vlog_on(level: int, modules=_PROFILER_MODULES) -> bool:
    """VLOG_IS_ON for any of `modules`, memoized on the logging variables' values: parsing
    TF_CPP_VMODULE on every cluster call cost more than running a small cluster."""
    key = (level, modules) + tuple(config.raw(k) for k in _LOG_ENV)
    on = _vlog_on_memo.get(key)
    if on is None:
        on = (logging.log_is_on(logging.INFO)
              and any(logging.vlog_is_on(m, level) for m in modules))
        if len(_vlog_on_memo) > 256:
            _vlog_on_memo.clear()
        _vlog_on_memo[key] = on
    return on


def _vlog(level: int, msg: str, modules=_PROFILER_MODULES) -> None:
    if not _vlog_on(level, modules):
        return
    for module in modules:
        if logging.vlog_is_on(module, level):
            logging.vlog(module, level, msg, stacklevel=2)
            return


class CompileMode(enum.Enum):
    STRICT = "strict"
    LAZY = "lazy"
    ASYNC = "async"


@dataclass
class ClusterCompileStats:
    """Per cluster computation, for the life of the process (TF's ClusterCompileStats)."""

    execution_count: int = 0
    compile_count: int = 0
    cumulative_compile_time_us: int = 0
    is_megamorphic: bool = False
    cluster_name: str = ""      # the first cluster name this computation ran under


class _Profiler:
    """TF's DeviceCompilationProfiler: execution and compile counts per cluster (keyed by
    what it computes; TF keys by name)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stats: dict[str, ClusterCompileStats] = {}
        self.ongoing_async = 0

    def _stats(self, key) -> ClusterCompileStats:
        s = self.stats.get(key)
        if s is None:
            s = self.stats[key] = ClusterCompileStats()
        return s

    def register_execution(self, key, name: str, megamorphic_threshold: int = 0) -> None:
        with self.lock:
            s = self._stats(key)
            s.execution_count += 1
            s.cluster_name = s.cluster_name or name
            if not s.is_megamorphic and _should_be_megamorphic(
                    s.compile_count, s.execution_count, megamorphic_threshold):
                _vlog(1, f"Marking {name} as megamorphic, compile_count={s.compile_count} "
                      f"execution_count={s.execution_count}")
                s.is_megamorphic = True

    def should_compile(self, key, name: str, mode: CompileMode, request_count: int) -> bool:
        if mode is CompileMode.STRICT:
            return True
        threshold = COMPILATION_THRESHOLD if mode is CompileMode.LAZY else 0
        with self.lock:
            s = self._stats(key)
            if s.is_megamorphic:
                _vlog(2, f"Not compiling cluster {name} because it is megamorphic.")
                return False
            if s.execution_count == 1:
                return True
            if mode is CompileMode.ASYNC and self.ongoing_async >= NUM_ASYNC_COMPILER_THREADS:
                _vlog(2, f"Not asynchronously compiling cluster {name} because of too many "
                      "ongoing compilations.")
                return False
        if request_count < threshold:
            _vlog(2, f"Not compiling cluster {name} because it has not reached compile "
                  f"threshold; threshold is {threshold} execution count {request_count}.")
            return False
        return True

    def register_compilation(self, key, name: str, compile_time_us: int) -> None:
        with self.lock:
            s = self._stats(key)
            s.compile_count += 1
            s.cumulative_compile_time_us += compile_time_us
            count, total = s.compile_count, s.cumulative_compile_time_us
        # TF prints the first time from whole seconds (a uint64), the cumulative one exactly.
        _vlog(1, f"Compiled {name} {count} times, compile time: {compile_time_us} us, "
              f"cumulative: {total} us ({human_readable_elapsed_time(compile_time_us // 10**6)}"
              f" / {human_readable_elapsed_time(total / 1e6)})")


def _should_be_megamorphic(compile_count: int, execution_count: int, threshold: int) -> bool:
    if threshold == -1:   # --tf_xla_threshold_for_megamorphic=-1: never megamorphic
        return False
    limit = threshold if threshold > 0 else MEGAMORPHIC_COMPILE_THRESHOLD
    return compile_count > limit and execution_count < MIN_EXECUTIONS_PER_COMPILE * compile_count


def compile_stats() -> list:
    """This process's ClusterCompileStats, one per cluster computation (copies), in the
    order they first ran: compile counts and times for reports and benchmarks."""
    with PROFILER.lock:
        return [ClusterCompileStats(**vars(s)) for s in PROFILER.stats.values()]


def human_readable_elapsed_time(seconds: float) -> str:
    """tsl::strings::HumanReadableElapsedTime: `153 ms`, `1.5 s`, `2 min`..."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    us = seconds * 1e6
    if us < 999.5:
        return f"{sign}{us:.3g} us"
    ms = seconds * 1e3
    if 0.995 <= ms < 1:
        ms = 1.0
    if ms < 999.5:
        return f"{sign}{ms:.3g} ms"
    if seconds < 60:
        return f"{sign}{seconds:.3g} s"
    for unit, size, limit in (("min", 60, 60), ("h", 3600, 24), ("days", 86400, 30)):
        if seconds / size < limit:
            return f"{sign}{seconds / size:.3g} {unit}"
    if seconds / 86400 < 365.2425:
        return f"{sign}{seconds / (86400 * 30.436875):.3g} months"
    return f"{sign}{seconds / (86400 * 365.2425):.3g} years"


PROFILER = _Profiler()

_log_once_lock = threading.Lock()
_logged_first_cluster = False


def _log_once_compiled_first_cluster() -> None:
    global _logged_first_cluster
    with _log_once_lock:
        if _logged_first_cluster:
            return
        _logged_first_cluster = True
    logging.log(logging.INFO, "Compiled cluster using XLA!  This line is logged at most once "
                "for the lifetime of the process.")


_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_pending: set = set()


def _async_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                NUM_ASYNC_COMPILER_THREADS, thread_name_prefix="async_compiler_threads")
        return _pool


def wait_for_async_compilations(timeout: float | None = None) -> bool:
    """Waits for the background compilations queued so far; True when all finished."""
    with _pool_lock:
        pending = list(_pending)
    done, not_done = concurrent.futures.wait(pending, timeout=timeout)
    return not not_done


# -- per-cluster compiled entries ----------------------------------------------------------------

_UNCOMPILED, _COMPILING, _COMPILED = "uncompiled", "compiling", "compiled"
_STATE_NUMBER = {_UNCOMPILED: 0, _COMPILING: 1, _COMPILED: 2}   # TF's DeviceCompileState


class _Entry:
    """One signature's cache entry (TF's DeviceCompilationCache::Entry)."""

    __slots__ = ("state", "request_count", "executable", "error", "lock")

    def __init__(self):
        self.state = _UNCOMPILED
        self.request_count = 0
        self.executable = None
        self.error: Exception | None = None
        self.lock = threading.Lock()


_CACHES: dict = {}     # (graph fingerprint, device) -> ({signature: _Entry}, its lock)
_CACHES_LOCK = threading.Lock()


def _shared_cache(key) -> tuple:
    """(entries by signature, the lock guarding that dict) of one cluster computation."""
    with _CACHES_LOCK:
        cache = _CACHES.get(key)
        if cache is None:
            cache = _CACHES[key] = ({}, threading.Lock())
        return cache


class DeviceCompiler:
    """Compiles and runs one cluster (`fg`: its function graph) with TF's lazy policy."""

    def __init__(self, cluster_name: str, fg, device: torch.device, flags,
                 must_compile: bool = False, ctx=None, pass_config=None):
        self.cluster_name = cluster_name
        self.fg = fg
        self.device = torch.device(device)
        self.flags = flags
        self.ctx, self.pass_config = ctx, pass_config
        self.must_compile = bool(must_compile)
        if self.must_compile or not getattr(flags, "tf_xla_enable_lazy_compilation", True):
            self.mode = CompileMode.STRICT
        elif getattr(flags, "tf_xla_async_compilation", False):
            self.mode = CompileMode.ASYNC
        else:
            self.mode = CompileMode.LAZY
        # Stats and executables belong to what the cluster computes on this device, not to
        # its name: a function retraced for a new shape (new cluster_N, same computation)
        # reuses them, and the megamorphic rule holds across retraces.
        self.fingerprint = persistent_cache.graph_fingerprint(fg)
        self.key = (self.fingerprint, str(self.device))
        self._input_dtypes = [t.dtype for t in fg.inputs]
        if ctx is None:
            self._entries, self._entries_lock = _shared_cache(self.key)
        else:   # kernels bound to a runtime context (its resources) are not shared
            self._entries, self._entries_lock = {}, threading.Lock()
        self._lock = threading.Lock()
        self.cannot_compile = False   # sticky: a lazy compile failed (TF's UNIMPLEMENTED bit)
        self._defer = self.mode is not CompileMode.STRICT and bool(
            getattr(flags, "tf_xla_always_defer_compilation", False))
        self._megamorphic_threshold = getattr(flags, "tf_xla_threshold_for_megamorphic", 0)

    @property
    def device_type(self) -> str:
        return "GPU" if self.device.type == "cuda" else "CPU"

    @property
    def stats(self) -> ClusterCompileStats:
        with PROFILER.lock:
            s = PROFILER.stats.get(self.key, ClusterCompileStats())
            return ClusterCompileStats(**vars(s))

    def compiled_signatures(self) -> list:
        return [sig for sig, e in list(self._entries.items()) if e.state == _COMPILED
                and e.executable is not None]

    # -- running ------------------------------------------------------------------------------
    def run(self, args: list, fallback: Callable[[list], list]) -> list:
        """The cluster's outputs for `args`: from its compiled executable when there is one
        (compiling it if the policy says so), else from `fallback(args)`."""
        if self._defer or self.cannot_compile:
            return fallback(args)
        exe = self._compile_if_needed(args)
        if exe is None:
            return fallback(args)
        return exe(args)

    def signature(self, args: list) -> tuple:
        """The cache key of `args`: (dtype, dims) of each argument."""
        return tuple((a.dtype, tuple(a.shape)) if isinstance(a, torch.Tensor)
                     else (type(a).__name__, ()) for a in args)

    def _specs(self, sig: tuple) -> list:
        return [(dt, dims) for dt, (_, dims) in zip(self._input_dtypes, sig)]

    def _compile_if_needed(self, args: list):
        name = self.cluster_name
        sig = self.signature(args)
        PROFILER.register_execution(self.key, name, self._megamorphic_threshold)
        with self._entries_lock:
            entry = self._entries.get(sig)
            if entry is None:
                entry = self._entries[sig] = _Entry()
        chatty = _vlog_on(2, _COMPILER_MODULES)
        with entry.lock:
            entry.request_count += 1
            state = entry.state
            if state == _COMPILED and entry.error is None and not chatty:   # the steady state
                return entry.executable
            _vlog(2, f"Compilation cache entry hit: {_STATE_NUMBER[state]} signature: {name} "
                  f"with request count {entry.request_count}", _COMPILER_MODULES)
            if state == _UNCOMPILED:
                if not PROFILER.should_compile(self.key, name, self.mode, entry.request_count):
                    _vlog(2, f"Not compiling for signature: {name}", _COMPILER_MODULES)
                    return None
                if self.mode is CompileMode.ASYNC:
                    self._queue_async(entry, sig)
                    return None
                _vlog(2, f"Instantly compiling for signature: {name}", _COMPILER_MODULES)
                self._compile(entry, sig)
            elif state == _COMPILING:
                _vlog(2, f"Ongoing asynchronous compilation for signature: {name}",
                      _COMPILER_MODULES)
                return None
            else:
                _vlog(2, f"Already Compiled for signature: {name}", _COMPILER_MODULES)
            if entry.error is not None:
                if self.mode is CompileMode.STRICT:
                    raise self._strict_error(entry.error) from None
                return None
            return entry.executable

    def _compile(self, entry: _Entry, sig: tuple) -> None:
        """Compiles `sig` into `entry` (its lock held). A failure: strict mode stores the
        error (raised by the caller); lazy/async log once and fall back from now on."""
        try:
            entry.executable = self._build(self._specs(sig))
            entry.error = None
        except Exception as e:  # noqa: BLE001 - any compile failure falls back in lazy mode
            entry.error = e
            if self.mode is not CompileMode.STRICT:
                self._fail_lazily(e)
        entry.state = _COMPILED

    def _queue_async(self, entry: _Entry, sig: tuple) -> None:
        entry.state = _COMPILING
        with PROFILER.lock:
            PROFILER.ongoing_async += 1
        _vlog(2, f"Queueing asynchronous compilation for signature: {self.cluster_name}",
              _COMPILER_MODULES)

        def work():
            try:
                with entry.lock:
                    self._compile(entry, sig)
            finally:
                with PROFILER.lock:
                    PROFILER.ongoing_async -= 1
                _vlog(2, f"Finished asynchronous compilation of cluster {self.cluster_name}.",
                      _COMPILER_MODULES)

        future = _async_pool().submit(work)
        with _pool_lock:
            _pending.add(future)
        future.add_done_callback(_forget_future)

    def _build(self, specs: list):
        start = time.perf_counter()
        cache = persistent_cache.cache_for(self.flags)
        loaded = False
        if cache is not None and cache.usable:
            key = cache.key(self.fingerprint, specs, self.device_type, self.flags)
            payload = cache.load(key)
            cache_dir = cache.artifact_dir(key) if payload is not None or cache.writable \
                else None
            exe = compile_cluster(self.fg, specs, self.device, self.ctx, self.pass_config,
                                  cache_dir=cache_dir, name=self.cluster_name)
            if payload is not None:
                loaded = True
                persistent_cache.vlog(1, f"Loading cached entry for: {self.cluster_name} "
                                      f"{persistent_cache.signature_string(specs)}")
            else:
                cache.store(key, {"cluster": self.cluster_name,
                                  "signature": persistent_cache.signature_string(specs),
                                  "stats": exe.stats})
        else:
            exe = compile_cluster(self.fg, specs, self.device, self.ctx, self.pass_config,
                                  name=self.cluster_name)
        compile_us = int((time.perf_counter() - start) * 1e6)
        exe.compile_time_us = compile_us
        exe.loaded_from_persistent_cache = loaded
        _log_once_compiled_first_cluster()
        PROFILER.register_compilation(self.key, self.cluster_name, compile_us)
        return exe

    def _fail_lazily(self, e: Exception) -> None:
        with self._lock:
            if self.cannot_compile:
                return
            self.cannot_compile = True
        logging.warning(f"Compilation failed:{_status_string(e)}.  Falling back to TF "
                        "function call.")

    def _strict_error(self, e: Exception) -> Exception:
        """The error a must-compile cluster raises for compile failure `e` (names it)."""
        where = f"XLA_{self.device_type}_JIT"
        if isinstance(e, CompileUnimplemented):
            return UnimplementedError(None, None, f"Detected unsupported operations when "
                                      f"trying to compile graph {self.cluster_name} on "
                                      f"{where}: {e}")
        if isinstance(e, OpError):
            return type(e)(None, e.op, f"{e.message}\n\tWhile compiling cluster "
                           f"{self.cluster_name} on {where}")
        return InternalError(None, None, f"Failed to compile cluster {self.cluster_name} on "
                             f"{where}: {type(e).__name__}: {e}")


def _forget_future(future) -> None:
    with _pool_lock:
        _pending.discard(future)


def _status_string(e: Exception) -> str:
    """TF's Status::ToString for a compile failure: `UNIMPLEMENTED: message`."""
    if isinstance(e, OpError) and not isinstance(e, UnimplementedError):
        names = {3: "INVALID_ARGUMENT", 5: "NOT_FOUND", 9: "FAILED_PRECONDITION",
                 13: "INTERNAL"}
        return f"{names.get(e.error_code, 'UNIMPLEMENTED')}: {e.message}"
    return f"UNIMPLEMENTED: {e}"
