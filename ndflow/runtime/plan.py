"""Execution plans: an optimized graph compiled once into straight-line Python.

`Plan(graph, feeds, fetches, targets, ctx)` picks the ops the fetches and targets need, in
creation (= topological) order, instantiates each kernel once, and generates a function

    def run(f0, f1):
        s = 0; v3 = k0(f0, c1)
        s = 1; v4 = k1(v3); del v3
        ...
        return [v4]

so a step is one Python call per kernel: no graph walking, no dict lookups, and each
intermediate is released right after its last use (its memory goes back to the allocator
for the next kernel). `s` names the failing node in errors.

`memory_plan()` reports the peak bytes of intermediates live at once (runtime/memory_plan.py):
from static shapes when all are known, else measured on the plan's first run.

Profiling (ndflow/profiler, a higher layer) installs itself with `set_profiler(p)`; while one
is installed every `Plan.run` goes to `p.run_plan(plan, feed_values)`, which runs a variant of
the same generated code whose kernels are wrapped (`instrumented(wrap)`). With none installed
the only cost is one global test per plan call: the generated code has no profiling branches.
On a GPU each kernel runs inside an NVTX range `<op type>: <node name>` (NVIDIA's build does
the same; TF_DISABLE_NVTX_RANGES=1 turns it off).
"""

from __future__ import annotations

import threading

import torch

from ndflow.core import config, devices, logging
from ndflow.core.errors import InvalidArgumentError, OpError
from ndflow.core.shapes import fmt
from ndflow.core.step_timing import mean_kernel_seconds
from ndflow.kernels import denormals, host_memory, registry
from ndflow.ops.apply import numpy_to_torch
from ndflow.passes.prune import needed_ops
from ndflow.runtime import inplace, math_modes, memory_plan, parallel_plan, threads

_profiler = None  # the installed profiler (ndflow/profiler), or None: see set_profiler

# Debugging switches that act when a plan is built (runtime/placement_log.py,
# runtime/numerics_check.py); empty unless one is on, so a build pays one loop over nothing.
BUILD_OBSERVERS: list = []   # fn(plan), called once the plan is built
KERNEL_WRAPPERS: list = []   # fn(plan, op, kernel) -> kernel, applied to each kernel made


def set_profiler(profiler) -> None:
    """Routes every Plan.run through `profiler.run_plan(plan, feed_values)` (None: stop)."""
    global _profiler
    _profiler = profiler


def resolve_device(spec: str, soft_placement: bool = True, op=None) -> torch.device:
    """The ATen device for an op's device string; an unavailable device (unknown type, missing
    GPU) falls back to the CPU under soft placement, else is TF's placement error."""
    if devices.is_available(spec):
        return devices.to_torch_device(spec)
    if soft_placement:
        return torch.device("cpu")
    name = op.name if op is not None else "<unknown>"
    gpu_hint = (" The requested device appears to be a GPU, but CUDA is not enabled."
                if devices.device_type(spec) == "GPU" and devices.gpu_count() == 0 else "")
    raise InvalidArgumentError(
        None, op, f"Cannot assign a device for operation {name}: {{{{node {name}}}}} was "
        f"explicitly assigned to {devices.canonical(spec)} but available devices are "
        "[ /job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device "
        f"specification refers to a valid device.{gpu_hint}\n\t [[{name}]]")


def _inputs_moved(fn, positions: list, dev: torch.device, scalars_stay: bool):
    """`fn` with the inputs at `positions` copied to `dev` first (`host_memory.to_device`): the
    copy between devices that TensorFlow's placer inserts as a Send/Recv pair where an op
    placed on a GPU reads a tensor made on the CPU, as eager execution copies its inputs."""
    def run(*args):
        args = list(args)
        for j in positions:
            args[j] = host_memory.to_device(args[j], dev, scalars_stay)
        return fn(*args)
    return run


class Plan:
    """A compiled step for fixed (feeds, fetches, targets) on one optimized graph."""

    def __init__(self, graph, feeds, fetches, targets, ctx, soft_placement: bool = True,
                 pass_config=None):
        math_modes.ensure_applied()  # TF32/cuDNN switches, once per process
        self.graph = graph
        self.pass_config = pass_config  # what If/While kernels compile their bodies with
        self.feeds = list(feeds)
        self.fetches = list(fetches)
        self.ctx = ctx
        fed = set(self.feeds)
        need = needed_ops(self.fetches, targets, fed)
        self.ops = [op for op in graph.get_operations() if op in need]
        self.num_kernels = 0
        self._steps: list = []  # memory_plan.Step per kernel
        self.label = "tf_graph"  # compile_plan names it after the graph (the function's name)
        self._run = self._plain_run = self._compile(fed, soft_placement)
        if config.nvtx_ranges_enabled() and any(d.type == "cuda" for d in self.devices):
            self._run = self.instrumented(_nvtx_range)[0]
        self._run = parallel_plan.parallel_run(self, self._run)  # TF_NUM_INTEROP_THREADS
        self._memory = memory_plan.static_plan(self._steps)
        self._measure_first_run = self._memory.peak_bytes is None
        self._measure_lock = threading.Lock()
        for observe in BUILD_OBSERVERS:
            observe(self)

    def _compile(self, fed, soft_placement):
        names: dict = {}      # tensor -> python expression
        scope: dict = {"_OpError": OpError}
        lines = []
        for i, t in enumerate(self.feeds):
            names[t] = f"f{i}"
        last_use: dict = {}
        for idx, op in enumerate(self.ops):
            for t in op.inputs:
                last_use[t] = idx
        for t in self.fetches:
            last_use[t] = len(self.ops)
        use_inplace = config.get(config.NDFLOW_INPLACE)  # NDFLOW_INPLACE; runtime/inplace.py
        readers: dict = {}
        for op in self.ops:
            for t in op.inputs:
                readers.setdefault(t, []).append(op)
        nodes = []
        self.devices = []  # per kernel: the ATen device it runs on
        self._knames = []
        self._node_args = []  # per kernel: the expressions of its inputs (for error messages)
        self._node_outs = []  # per kernel: its outputs' variable names ('_' = unused)
        made_on: dict = {}    # tensor -> the device of the op that makes it (feeds: unknown)
        fetched = set(self.fetches)   # (a fetched value stays where its op is placed)
        # (op, ATen device) of every op, the fed ones and constants included
        self.placements = [(op, resolve_device(op.device, True, op))
                           for op in dict.fromkeys(t.op for t in self.feeds)]
        placed = {op: resolve_device(op.device, soft_placement, op) for op in self.ops}
        on_host = host_memory.host_scalar_chains(
            self.ops, readers, lambda op: op in placed and placed[op].type != "cpu", fetched)
        for idx, op in enumerate(self.ops):
            dev = placed[op]
            if dev.type != "cpu" and (op in on_host or (
                    not fetched.intersection(op.outputs)
                    and host_memory.shape_on_host(op, readers))):
                dev = host_memory.HOST
            self.placements.append((op, dev))
            for t in op.outputs:
                made_on[t] = dev
            if op.type == "Const":
                arr = op.attrs["value"]
                dt = op.attrs["dtype"]
                cname = f"c{idx}"
                scope[cname] = numpy_to_torch(arr, dt, dev)  # strings: bytes object arrays
                names[op.outputs[0]] = cname
                continue
            args, moved = [], []
            update = host_memory.is_update(op)
            scalars_stay = not host_memory.spreads(op)
            for j, t in enumerate(op.inputs):
                expr = names[t]
                made = made_on.get(t)
                # (a fed tensor's device is known only when it comes: a function's argument
                # made on the host is copied to the GPU op reading it; handles never are)
                crosses = t.dtype.torch_dtype is not None if made is None else made != dev
                if dev.type != "cpu" and crosses:
                    if expr.startswith("c"):   # a constant: a copy on this device, made once
                        value = scope[expr]
                        there = host_memory.to_device(value, dev, scalars_stay)
                        if there is not value:
                            copy = f"{expr}_{dev.type}{dev.index or 0}"
                            scope.setdefault(copy, there)
                            expr = copy
                    else:
                        moved.append(j)
                elif expr.startswith("c") and host_memory.device_scalar(scope[expr]) and (
                        update or op in on_host):
                    # a device constant an update reads (an L2 scale other ops read too): the
                    # update takes a host copy, made once, as it takes its other scalars
                    if f"{expr}_host" not in scope:
                        scope[f"{expr}_host"] = scope[expr].cpu()
                    expr = f"{expr}_host"
                args.append(expr)
            consts = tuple(t.op.attrs["value"] if names[t].startswith("c") else None
                           for t in op.inputs)
            node = registry.NodeInfo.for_op(op, dev, self.ctx, self.pass_config, consts)
            try:
                fn = registry.kernel_for(node, "GPU" if dev.type == "cuda" else "CPU")(node)
            except OpError as e:   # TF fails at run time, when the kernel is made
                err = type(e)(None, op, f"{e.message}\n\t [[{{{{node {op.name}}}}}]]")
                err.failed_node = (op.name, op._traceback)
                raise err from None
            in_place = inplace.inplace_kernel(
                op, lambda t, i=idx: last_use.get(t) == i and names[t].startswith("v"),
                lambda t: readers.get(t, ())) if use_inplace else None
            if in_place is not None:
                fn = in_place[1]
            for wrap in KERNEL_WRAPPERS:
                fn = wrap(self, op, fn)
            if moved:
                fn = _inputs_moved(fn, moved, dev, scalars_stay)
            kname = f"k{idx}"
            scope[kname] = fn
            nodes.append(op)
            self.devices.append(dev)
            self._knames.append(kname)
            self._node_args.append(args)
            n_out = len(op.outputs)
            outs = []
            for j, t in enumerate(op.outputs):
                if t in last_use and t not in fed:
                    vname = f"v{idx}_{j}"
                    names[t] = vname
                    outs.append(vname)
                else:
                    outs.append("_")
            self._node_outs.append(outs)
            call = f"{kname}({', '.join(args)})"
            if n_out == 0:
                stmt = call
            elif n_out == 1:
                stmt = f"{outs[0]} = {call}" if outs[0] != "_" else call
            else:
                stmt = f"{', '.join(outs)}, = {call}"
            dying = {t for t in op.inputs if last_use.get(t) == idx
                     and names[t].startswith("v")}
            dead = sorted({names[t] for t in dying})
            self._steps.append(memory_plan.Step(
                op, tuple((t, o != "_") for t, o in zip(op.outputs, outs)),
                tuple(sorted(dying, key=lambda t: names[t])),
                op.inputs[in_place[0]] if in_place is not None else None))
            lines.append(f"        s = {len(nodes) - 1}; {stmt}")
            if dead:
                lines.append(f"        del {', '.join(dead)}")
        self.num_kernels = len(nodes)
        logging.vlog("plan", 1, f"Compiled plan: {len(nodes)} kernels, {len(self.feeds)} feeds, "
                     f"{len(self.fetches)} fetches")
        self._nodes = nodes
        self._fetch_exprs = [names[t] for t in self.fetches]
        ret = ", ".join(self._fetch_exprs)
        args = ", ".join(f"f{i}" for i in range(len(self.feeds)))
        src = [f"def run({args}):", "    s = -1", "    try:"] + lines + [
            f"        return [{ret}]",
            "    except _OpError as e:",
            "        raise _node_error(e, s, True) from None",
            "    except Exception as e:",
            "        raise _node_error(e, s, False) from None",
        ]
        scope["_node_error"] = self._node_error
        self.source = "\n".join(src)
        code = compile(self.source, f"<plan {id(self):x}>", "exec")
        exec(code, scope)  # noqa: S102 - our own generated straight-line code
        self._scope = scope
        return scope["run"]

    def _node_error(self, e: Exception, step: int, is_op_error: bool) -> Exception:
        op = self._nodes[step] if 0 <= step < len(self._nodes) else None
        # a check wrapping the kernel may name its own node (runtime/numerics_check.py)
        node_name = getattr(e, "reported_node", None) or (op.name if op is not None else None)
        where = f"\n\t [[{{{{node {node_name}}}}}]]" if op is not None else ""
        if is_op_error:
            err = type(e)(None, op, f"{e.message}{where}")
        else:
            msg = _runtime_message(e, self._input_shapes(e, step))
            kind = f" ({op.type})" if op is not None else ""
            err = InvalidArgumentError(None, op, f"{msg}{kind}{where}")
        # the innermost failing node and where the user made it (also inside If/While bodies)
        err.failed_node = getattr(e, "failed_node", None) or (
            (op.name, op._traceback) if op is not None else None)
        return err

    def _input_shapes(self, e: Exception, step: int) -> list | None:
        """The shapes of the failing kernel's inputs, read from the plan's frame."""
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_name != "run":
            tb = tb.tb_next
        if tb is None or not 0 <= step < len(self._node_args):
            return None
        local, glob = tb.tb_frame.f_locals, tb.tb_frame.f_globals
        vals = [local.get(a, glob.get(a)) for a in self._node_args[step]]
        return [list(v.shape) if isinstance(v, torch.Tensor) else None for v in vals]

    def run(self, feed_values):
        """Runs one step: `feed_values` are ATen tensors in `feeds` order; returns fetches.
        Kernels run with subnormals flushed, as TF's executor runs them (kernels/denormals)."""
        threads.follow_free_cores()
        flushed = denormals.enter()
        try:
            return self._run_flushed(feed_values)
        finally:
            if flushed:
                denormals.leave()

    def _run_flushed(self, feed_values):
        if _profiler is not None:
            return _profiler.run_plan(self, feed_values)
        # One thread measures the first run (it swaps the scope's kernels for recording
        # ones); threads running the plan meanwhile (queue runners) skip measuring.
        if self._measure_first_run and self._measure_lock.acquire(blocking=False):
            try:
                if self._measure_first_run:
                    return self._measured_run(feed_values)
            finally:
                self._measure_lock.release()
        return self._run(*feed_values)

    def instrumented(self, wrap):
        """The plan's generated code with each kernel replaced by `wrap(i, op, kernel)` (i:
        its index among `nodes()`): a separate function, so the plain one stays untouched."""
        scope = dict(self._scope)
        for i, (kname, op) in enumerate(zip(self._knames, self._nodes)):
            scope[kname] = wrap(i, op, self._scope[kname])
        exec(compile(self.source, f"<instrumented plan {id(self):x}>", "exec"), scope)  # noqa: S102
        return scope["run"], scope

    def nodes(self) -> list:
        """The ops that run a kernel, in execution order (Const values are bound, not run)."""
        return list(self._nodes)

    def kernel_names(self) -> list:
        """Per node of `nodes()`: the name its kernel has in the generated code."""
        return list(self._knames)

    def memory_plan(self) -> memory_plan.MemoryPlan:
        """The peak bytes of live intermediates (None until a run measured them)."""
        return self._memory

    def _measured_run(self, feed_values):
        """A run whose kernels record their outputs' buffers, for the memory plan."""
        foreign = {memory_plan.storage_key(v) for v in feed_values}
        foreign.update(memory_plan.storage_key(v) for k, v in self._scope.items()
                       if k.startswith("c"))
        buffers: dict = {}
        originals = {}
        for kname, step in zip(self._knames, self._steps):
            originals[kname] = fn = self._scope[kname]
            self._scope[kname] = _recording(fn, step, buffers, foreign)
        try:
            out = self._plain_run(*feed_values)
        finally:
            self._scope.update(originals)
        self._memory = memory_plan.measured_plan(self._steps, buffers)
        self._measure_first_run = False
        logging.vlog("plan", 1, f"Measured memory plan: peak {self._memory.peak_bytes} bytes")
        return out

    def profile(self, feed_values, steps: int = 10) -> list:
        """Per-node wall time: [(op name, op type, mean seconds per step)], slowest first.

        Kernels are wrapped with timers for `steps` runs, then restored; the plan's normal
        runs never pay for timing.
        """
        seconds = mean_kernel_seconds(self._scope, self._knames,
                                      lambda: self._plain_run(*feed_values), steps)
        rows = [(op.name, op.type, t) for op, t in zip(self._nodes, seconds)]
        return sorted(rows, key=lambda r: -r[2])


def _runtime_message(e: Exception, shapes: list | None) -> str:
    """TF's run-time wording for an ATen error where we recognize it (a failed broadcast is
    BCast's "Incompatible shapes: [3] vs. [4]"), else ATen's first line."""
    text = str(e).strip()
    if shapes and len(shapes) == 2 and None not in shapes and "must match the size" in text:
        return f"Incompatible shapes: {fmt(shapes[0])} vs. {fmt(shapes[1])}"
    return text.splitlines()[0] if text else type(e).__name__


def _recording(fn, step, buffers: dict, foreign: set):
    """`fn`, recording the (buffer, bytes) of each output into `buffers`."""
    outputs = [t for t, _ in step.outputs]
    state = memory_plan.reads_state(step.op)

    def recording(*args):
        out = fn(*args)
        values = [] if not outputs else [out] if len(outputs) == 1 else list(out)
        for t, v in zip(outputs, values):
            if state:  # a variable's own buffer: not an intermediate, nor are its aliases
                foreign.add(memory_plan.storage_key(v))
            buffers[t] = memory_plan.buffer_key(v, foreign)
        return out
    return recording


def _nvtx_range(i: int, op, fn):
    """`fn` inside an NVTX range named `<op type>: <node name>` (Nsight Systems shows it)."""
    name = f"{op.type}: {op.name}"
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop

    def ranged(*args):
        push(name)
        try:
            return fn(*args)
        finally:
            pop()
    return ranged


