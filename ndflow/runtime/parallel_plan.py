"""TF_NUM_INTEROP_THREADS: a plan's independent branches run concurrently.

A Plan (runtime/plan.py) is straight-line code, one kernel after another. When the graph has
branches that do not depend on each other (towers, independent gradient chains), this module
runs them at the same time on a pool of threads: ATen releases the GIL inside its kernels, so
two matmuls on two threads overlap (each on its own share of the cores).

    plan = Plan(...)                       # plan.py calls parallel_run(plan, run)
    outputs = plan.run(feed_values)        # tasks dispatched as their inputs become ready

The plan's kernels are split into tasks: maximal chains (a kernel whose only dependency has
no other dependent joins that dependency's task), each compiled, like the plan, into one
generated function that reads its inputs from the run's value table and publishes the values
other tasks or the fetches need. Dependencies are the data edges plus what keeps the plan's
sequential meaning:
- control inputs;
- an in-place kernel (runtime/inplace.py) runs after every other reader of the buffer it
  overwrites (sequentially they came first);
- stateful ops: variable reads (READ_STATE) are free; random ops keep their order among
  themselves (same numbers as a sequential run); any other stateful op (assignments,
  optimizer updates, If/While, py_function, summaries, I/O) is a barrier: it runs after every
  kernel before it and every kernel after it waits for it.
Tasks holding a stateful op other than a variable read run on the calling thread only
(Python-level state such as the default graph, tapes and summary writers is per thread).

Threads: a Session's ConfigProto.inter_op_parallelism_threads when not 0, else
tf.config.threading.set_inter_op_parallelism_threads when set, else TF_NUM_INTEROP_THREADS
(`interop_threads()`). 1 or negative: the plan runs sequentially on the caller's thread;
N > 1: the caller plus N - 1 pool threads; 0 (automatic): sequential. Overlap only pays
where cores are left idle by ATen's intra-op pool (TF_NUM_INTRAOP_THREADS below the core
count) and the kernels are large: a dispatch costs ~20-40 us of Python, so small branches
lose (two towers of three 8x8 matmuls: 0.55x), and with ATen's default pool every kernel
already uses every core (benchmarks/interop_threads.py). Hence automatic is sequential. A
plan without two tasks that could run at once always runs sequentially.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque

from ndflow.core import config, logging
from ndflow.kernels import denormals

# Stateful ops that only read state: they need no ordering beyond their inputs.
READ_STATE = frozenset({"ReadVariableOp", "VarHandleOp", "VarIsInitializedOp", "VariableShape",
                        "ResourceGather"})
# Stateful ops drawing from a random stream: ordered among themselves.
_RANDOM_EXTRA = frozenset({"TruncatedNormal", "Multinomial", "LogUniformCandidateSampler",
                           "UniformCandidateSampler", "RandomShuffle"})

_explicit_threads: int | None = None  # tf.config.threading.set_inter_op_parallelism_threads


def set_explicit_threads(n: int | None) -> None:
    """The thread count tf.config.threading sets (None: back to TF_NUM_INTEROP_THREADS)."""
    global _explicit_threads
    _explicit_threads = n


def explicit_threads() -> int | None:
    return _explicit_threads


def interop_threads() -> int:
    """The configured inter-op thread count: the explicit setting, else the variable."""
    if _explicit_threads is not None:
        return _explicit_threads
    return config.get(config.TF_NUM_INTEROP_THREADS)


def effective_threads(requested: int) -> int:
    """Threads a plan runs on for a requested count: 0 (automatic) and negatives are 1."""
    return requested if requested > 1 else 1


def _is_random(op_type: str) -> bool:
    return "Random" in op_type or op_type.startswith("Stateful") or op_type in _RANDOM_EXTRA


class TaskGraph:
    """A plan's kernels as tasks: `steps[t]` kernel indices, `deps[t]`/`succ[t]` task
    indices, `caller_only[t]`, and the value names each task reads from the run table."""

    def __init__(self, plan):
        nodes, args, outs = plan._nodes, plan._node_args, plan._node_outs
        n = len(nodes)
        produced_by = {v: i for i, o in enumerate(outs) for v in o if v != "_"}
        step_of_op = {op: i for i, op in enumerate(nodes)}
        readers: dict = {}
        for i, a in enumerate(args):
            for v in a:
                readers.setdefault(v, []).append(i)
        deps = [set() for _ in range(n)]
        self.caller_only_steps = set()
        last_barrier = -1
        since_barrier: list = []
        has_succ: set = set()
        last_random = None
        for i, op in enumerate(nodes):
            d = deps[i]
            d.update(produced_by[v] for v in args[i] if v in produced_by)
            d.update(step_of_op[c] for c in op.control_inputs if c in step_of_op)
            inplace_of = plan._steps[i].inplace_of
            if inplace_of is not None:
                var = args[i][next(k for k, t in enumerate(op.inputs) if t is inplace_of)]
                d.update(j for j in readers.get(var, ()) if j < i)
            d.discard(i)
            # after the last barrier (directly only when no dependency already is)
            if last_barrier >= 0 and not any(j >= last_barrier for j in d):
                d.add(last_barrier)
            if op.op_def.is_stateful and op.type not in READ_STATE:
                self.caller_only_steps.add(i)
                if _is_random(op.type):
                    if last_random is not None:
                        d.add(last_random)
                    last_random = i
                else:  # a barrier: after every kernel since the last one (their sinks)
                    d.update(j for j in since_barrier if j not in has_succ)
                    last_barrier, since_barrier, last_random = i, [], None
            if last_barrier != i:
                since_barrier.append(i)
            has_succ.update(d)
        self.step_deps = deps
        self._chain(n, deps)
        self._values(plan, produced_by)

    def _chain(self, n: int, deps: list) -> None:
        """Tasks: a kernel joins its only dependency's task when it is that one's only
        dependent (so a task is a straight chain, no dispatch between its kernels)."""
        n_succ = [0] * n
        for d in deps:
            for j in d:
                n_succ[j] += 1
        task_of = [0] * n
        steps: list = []
        for i in range(n):
            if len(deps[i]) == 1:
                (j,) = deps[i]
                if n_succ[j] == 1:
                    task_of[i] = task_of[j]
                    steps[task_of[i]].append(i)
                    continue
            task_of[i] = len(steps)
            steps.append([i])
        self.steps = steps
        self.task_of = task_of
        self.deps = [sorted({task_of[j] for i in s for j in deps[i]} - {t})
                     for t, s in enumerate(steps)]
        self.succ = [[] for _ in steps]
        for t, d in enumerate(self.deps):
            for u in d:
                self.succ[u].append(t)
        self.caller_only = [any(i in self.caller_only_steps for i in s) for s in steps]

    def _values(self, plan, produced_by: dict) -> None:
        """Per task: values it reads from / publishes to the run table; reader counts."""
        fetched = {v for v in plan._fetch_exprs if v.startswith("v")}
        self.reads: list = []
        self.publishes: list = []
        self.refs: dict = {}  # value -> number of tasks reading it (+1 when fetched)
        for s in self.steps:
            mine = set(s)
            reads = []
            for i in s:
                for v in plan._node_args[i]:
                    if (v.startswith("f") or (v in produced_by and produced_by[v] not in mine)) \
                            and v not in reads:
                        reads.append(v)
            self.reads.append(reads)
            for v in reads:
                if v.startswith("v"):
                    self.refs[v] = self.refs.get(v, 0) + 1
        for v in fetched:
            self.refs[v] = self.refs.get(v, 0) + 1
        for s in self.steps:
            self.publishes.append({v for i in s for v in plan._node_outs[i] if v in self.refs})

    def width(self) -> int:
        """The most tasks at the same depth (1: nothing can run concurrently)."""
        level = [0] * len(self.steps)
        for t, d in enumerate(self.deps):
            level[t] = 1 + max((level[u] for u in d), default=-1)
        counts: dict = {}
        for lv in level:
            counts[lv] = counts.get(lv, 0) + 1
        return max(counts.values(), default=0)


def _task_source(plan, graph: TaskGraph, t: int) -> str:
    """One task as a generated function `run(env)` (named `run` like the plan's code, so the
    plan's error path finds the failing kernel's inputs in its frame)."""
    steps = graph.steps[t]
    last_local: dict = {}
    for i in steps:
        for v in plan._node_args[i]:
            if v.startswith(("v", "f")):
                last_local[v] = i
    lines = ["def run(env):", "    s = -1", "    try:"]
    if graph.reads[t]:
        names = ", ".join(graph.reads[t])
        keys = ", ".join(f"env[{v!r}]" for v in graph.reads[t])
        lines.append(f"        {names}, = {keys},")
    for i in steps:
        outs = plan._node_outs[i]
        call = f"{plan._knames[i]}({', '.join(plan._node_args[i])})"
        if not outs:
            stmt = call
        elif len(outs) == 1:
            stmt = f"{outs[0]} = {call}" if outs[0] != "_" else call
        else:
            stmt = f"{', '.join(outs)}, = {call}"
        lines.append(f"        s = {i}; {stmt}")
        for v in outs:
            if v in graph.publishes[t]:
                lines.append(f"        env[{v!r}] = {v}")
        dead = sorted({v for v in plan._node_args[i] if last_local.get(v) == i})
        if dead:
            lines.append(f"        del {', '.join(dead)}")
    lines += ["    except _OpError as e:",
              "        raise _node_error(e, s, True) from None",
              "    except Exception as e:",
              "        raise _node_error(e, s, False) from None"]
    return "\n".join(lines)


class _Pool:
    """`workers` daemon threads taking runs with ready tasks from one queue."""

    def __init__(self, workers: int):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.pid = os.getpid()
        for k in range(workers):
            threading.Thread(target=self._work, name=f"ndflow-interop-{k}", daemon=True).start()

    def _work(self) -> None:
        denormals.flush_this_thread()   # for life, as TF's inter-op threads
        while True:
            self.queue.get().work(caller=False)


_pools: dict = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> _Pool:
    with _pools_lock:
        p = _pools.get(workers)
        if p is None or p.pid != os.getpid():  # threads do not survive a fork
            p = _pools[workers] = _Pool(workers)
        return p


class _Run:
    """One execution of a parallel plan: ready tasks, pending counts, the value table."""

    def __init__(self, exe: ParallelRun, env: dict):
        g = exe.graph
        self.exe, self.env = exe, env
        self.pending = [len(d) for d in g.deps]
        self.refs = dict(g.refs)
        self.ready: deque = deque()
        self.ready_caller: deque = deque()
        self.remaining = len(g.steps)
        self.inflight = 0
        self.error: BaseException | None = None
        self.cond = threading.Condition(threading.Lock())
        for t in exe.sources:
            (self.ready_caller if g.caller_only[t] else self.ready).append(t)

    def _claim(self, caller: bool):
        """A ready task this thread may run, or None (call with the lock held)."""
        if self.error is not None:
            return None
        if caller and self.ready_caller:
            t = self.ready_caller.popleft()
        elif self.ready:
            t = self.ready.popleft()
        else:
            return None
        self.inflight += 1
        return t

    def work(self, caller: bool) -> None:
        """Runs ready tasks until none is left for this thread."""
        g, env, fns = self.exe.graph, self.env, self.exe.fns
        while True:
            with self.cond:
                t = self._claim(caller)
            if t is None:
                return
            try:
                fns[t](env)
                err = None
            except BaseException as e:  # noqa: BLE001 - re-raised by the caller's thread
                err = e
            woke = 0
            with self.cond:
                self.inflight -= 1
                if err is not None:
                    if self.error is None:
                        self.error = err
                else:
                    self.remaining -= 1
                    for v in g.reads[t]:
                        if v in self.refs:
                            self.refs[v] -= 1
                            if self.refs[v] == 0:
                                del env[v]  # its last reader is done: free the buffer
                    for u in g.succ[t]:
                        self.pending[u] -= 1
                        if self.pending[u] == 0:
                            if g.caller_only[u]:
                                self.ready_caller.append(u)
                            else:
                                self.ready.append(u)
                                woke += 1
                self.cond.notify_all()
            for _ in range(woke - 1):  # this thread takes one; idle workers the others
                self.exe.pool.queue.put(self)

    def wait(self) -> None:
        """The caller's loop: run tasks, else sleep until one is ready or all are done."""
        while True:
            self.work(caller=True)
            with self.cond:
                while True:
                    if self.error is not None:
                        if self.inflight == 0:
                            raise self.error
                    elif self.remaining == 0:
                        return
                    elif self.ready or self.ready_caller:
                        break
                    self.cond.wait()


class ParallelRun:
    """A plan's run function that dispatches its tasks on `threads` threads."""

    def __init__(self, plan, scope: dict, graph: TaskGraph, threads: int, sequential):
        self.sequential = sequential  # the plan's own run function
        self.graph = graph
        self.threads = threads
        self.pool = _pool(threads - 1)
        self.sources = [t for t, d in enumerate(graph.deps) if not d]
        self.fns = []
        self.source = []
        for t in range(len(graph.steps)):
            src = _task_source(plan, graph, t)
            task_scope = scope  # kernels, constants, _OpError and _node_error
            local: dict = {}
            exec(compile(src, f"<plan {id(plan):x} task {t}>", "exec"), task_scope, local)  # noqa: S102
            self.fns.append(local["run"])
            self.source.append(src)
        self._fetch = [(v, v.startswith(("v", "f"))) for v in plan._fetch_exprs]
        self._scope = scope
        self._n_feeds = len(plan.feeds)

    def __call__(self, *feed_values):
        if self.pool.pid != os.getpid():  # a forked child: its own pool
            self.pool = _pool(self.threads - 1)
        env = {f"f{i}": v for i, v in enumerate(feed_values)}
        run = _Run(self, env)
        for _ in range(min(len(run.ready) - 1, self.threads - 1)):
            self.pool.queue.put(run)
        run.wait()
        scope = self._scope
        return [env[v] if in_env else scope[v] for v, in_env in self._fetch]


def parallel_run(plan, run, threads: int | None = None):
    """`run` (the plan's sequential function), or a ParallelRun of the same kernels when the
    inter-op threads (`threads`, else the configured count) are more than one and the plan
    has branches to overlap."""
    run = getattr(run, "sequential", run)
    threads = effective_threads(interop_threads() if threads is None else threads)
    if threads <= 1 or len(plan._nodes) < 2:
        return run
    graph = TaskGraph(plan)
    width = graph.width()
    if width < 2:
        return run
    logging.vlog("parallel_plan", 1, f"Parallel plan: {len(plan._nodes)} kernels in "
                 f"{len(graph.steps)} tasks, width {width}, {threads} threads")
    return ParallelRun(plan, run.__globals__, graph, threads, run)


def set_plan_threads(plan, threads: int) -> None:
    """A Session's ConfigProto.inter_op_parallelism_threads for its plans: non-zero wins over
    TF_NUM_INTEROP_THREADS, as in TensorFlow (0 keeps the configured count)."""
    if threads != 0:
        plan._run = parallel_run(plan, plan._run, threads)
