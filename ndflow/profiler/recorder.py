"""Recording what plans execute: one process-wide recorder, shared by every profiling session.

While at least one session (the `python -m ndflow.profiler` command, `tf.profiler.experimental
.start`, Keras' `profile_batch`) is open, the recorder is installed as the runtime's profiler
(`runtime.plan.set_profiler`): each `Plan.run` goes to `run_plan`, which runs an instrumented
copy of that plan's generated code (built once per plan) whose kernels append
`(node key, start ns, end ns, thread)` to one list. A node's shapes and dtypes are read on its
first call only (then the wrapper replaces itself with a timing-only one), so a profiled step
pays two clock reads and one append per kernel. On a GPU each kernel also synchronizes (its
time is the device's, not the launch's) and runs inside its NVTX range.

Sessions are windows on the shared lists (`Window.capture()` slices them): the recorder is
uninstalled, and its lists dropped, when the last window closes.
"""

from __future__ import annotations

import array
import threading
import time
import weakref
from dataclasses import dataclass, field

import torch

from ndflow.core import config
from ndflow.runtime import plan as plan_module

clock = time.perf_counter_ns


@dataclass
class NodeInfo:
    """One executed node of one plan: what it is, and its first call's shapes and dtypes."""

    key: int
    plan: str
    plan_index: int
    name: str
    op_type: str
    device: str
    kernel: str
    attrs: dict
    input_shapes: list = field(default_factory=list)
    input_dtypes: list = field(default_factory=list)
    output_shapes: list = field(default_factory=list)
    output_dtypes: list = field(default_factory=list)
    amp: dict = field(default_factory=dict)  # the plan's mixed-precision settings


@dataclass
class PlanInfo:
    index: int
    label: str
    num_nodes: int
    nested: bool = False  # ran inside another plan's node (an If/While body, a cluster)


def _shape_and_dtype(v) -> tuple:
    if isinstance(v, torch.Tensor):
        return list(v.shape), str(v.dtype).replace("torch.", "")
    return None, type(v).__name__


def _amp_settings(plan) -> dict:
    cfg = plan.pass_config
    if cfg is None:
        return {"enabled": False}
    modes = cfg.auto_mixed_precision_modes
    enabled = not cfg.meta_optimizer_disabled and bool(
        cfg.auto_mixed_precision or cfg.auto_mixed_precision_onednn_bfloat16
        or cfg.auto_mixed_precision_cpu) or bool(modes)
    return {"enabled": enabled, "onednn_bfloat16": bool(cfg.auto_mixed_precision_onednn_bfloat16)}


def _plain_attrs(op) -> dict:
    """The op's attributes a report can show (no tensors, graphs or dtypes), plus for a
    variable update the variable it updates (what the key-node proposal looks for)."""
    attrs = {k: v for k, v in op.attrs.items()
             if isinstance(v, (bool, int, float, str)) or (
                 isinstance(v, (list, tuple)) and all(isinstance(x, (int, float)) for x in v))}
    if op.type.startswith("Assign") and op.inputs:
        src = op.inputs[0].op
        attrs["variable"] = src.attrs.get("shared_name") or src.name
    return attrs


class _Instrumented:
    """A plan's instrumented run function and its record."""

    def __init__(self, info: PlanInfo, run):
        self.info = info
        self.run = run


class Recorder:
    """The events of every plan run while installed (see the module docstring)."""

    def __init__(self):
        self.nodes: list[NodeInfo] = []
        self.plans: list[PlanInfo] = []
        # (node key, t0, t1, thread id) flat in one array: 32 bytes per kernel execution
        self.node_events = array.array("Q")
        self.plan_events: list = []   # (plan index, t0, t1, thread id)
        self.user_events: list = []   # (name, t0, t1, thread id, args): Trace spans
        self._instrumented: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._depth = threading.local()  # plans running on this thread (nested: > 1)
        self._nvtx = config.nvtx_ranges_enabled()

    # -- the runtime's profiler interface --------------------------------------------------
    def run_plan(self, plan, feed_values):
        inst = self._instrumented.get(plan)
        if inst is None:
            inst = self._instrument(plan)
        depth = self._depth
        level = getattr(depth, "n", 0)
        if level:
            inst.info.nested = True
        depth.n = level + 1
        t0 = clock()
        try:
            return inst.run(*feed_values)
        finally:
            self.plan_events.append((inst.info.index, t0, clock(), threading.get_ident()))
            depth.n = level

    def _instrument(self, plan) -> _Instrumented:
        with self._lock:
            inst = self._instrumented.get(plan)
            if inst is not None:
                return inst
            info = PlanInfo(len(self.plans), getattr(plan, "label", "tf_graph"),
                            len(plan.nodes()))
            amp = _amp_settings(plan)
            scope_box: list = []
            devices, knames = plan.devices, plan.kernel_names()

            def wrap(i, op, fn):
                return self._wrap(knames[i], op, fn, info, devices[i], amp, scope_box)
            run, scope = plan.instrumented(wrap)
            scope_box.append(scope)
            self.plans.append(info)
            inst = self._instrumented[plan] = _Instrumented(info, run)
            return inst

    def _wrap(self, kname: str, op, fn, info: PlanInfo, device, amp: dict, scope_box: list):
        key = len(self.nodes)
        dev = str(device)
        node = NodeInfo(key, info.label, info.index, op.name, op.type, dev,
                        getattr(fn, "__qualname__", type(fn).__name__),
                        _plain_attrs(op), amp=amp)
        self.nodes.append(node)
        append, ident = self.node_events.extend, threading.get_ident
        if device.type == "cuda":
            sync = torch.cuda.synchronize
            push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
            label = f"{op.type}: {op.name}" if self._nvtx else None

            def timed(*args):
                if label is not None:
                    push(label)
                t0 = clock()
                try:
                    out = fn(*args)
                    sync(device)
                finally:
                    if label is not None:
                        pop()
                append((key, t0, clock(), ident()))
                return out
        else:
            def timed(*args):
                t0 = clock()
                out = fn(*args)
                append((key, t0, clock(), ident()))
                return out

        n_out = len(op.outputs)

        def first_call(*args):
            for a in args:
                s, d = _shape_and_dtype(a)
                node.input_shapes.append(s)
                node.input_dtypes.append(d)
            out = timed(*args)
            values = [] if n_out == 0 else [out] if n_out == 1 else list(out)
            for v in values:
                s, d = _shape_and_dtype(v)
                node.output_shapes.append(s)
                node.output_dtypes.append(d)
            scope_box[0][kname] = timed  # later calls only time
            return out
        return first_call

    # -- user spans ------------------------------------------------------------------------
    def add_user_event(self, name: str, t0: int, t1: int, args: dict) -> None:
        self.user_events.append((name, t0, t1, threading.get_ident(), args))


class Events:
    """A slice of the recorder's flat event array, iterated as (key, t0, t1, thread) tuples."""

    def __init__(self, flat: array.array):
        self._flat = flat

    def __len__(self) -> int:
        return len(self._flat) // 4

    def __iter__(self):
        it = iter(self._flat)
        return zip(it, it, it, it)


@dataclass
class Capture:
    """What one window saw: node infos (all, by key), and its slices of the event lists."""

    nodes: list
    plans: list
    node_events: Events
    plan_events: list
    user_events: list
    t_start: int
    t_end: int


_state_lock = threading.Lock()
_recorder: Recorder | None = None
_open_windows: list = []


class Window:
    """One profiling session's view of the shared recorder."""

    def __init__(self):
        global _recorder
        with _state_lock:
            if _recorder is None:
                _recorder = Recorder()
                plan_module.set_profiler(_recorder)
            self.recorder = _recorder
            _open_windows.append(self)
        r = self.recorder
        # where this window starts in each list (node_events: 4 array items per event)
        self._marks = (len(r.node_events), len(r.plan_events), len(r.user_events))
        self.t_start = clock()
        self.closed = False

    def capture(self) -> Capture:
        r = self.recorder
        n, p, u = self._marks
        return Capture(list(r.nodes), list(r.plans), Events(r.node_events[n:]),
                       r.plan_events[p:], r.user_events[u:], self.t_start, clock())

    def close(self) -> Capture:
        """The window's capture; uninstalls the recorder when no other window is open."""
        global _recorder
        cap = self.capture()
        with _state_lock:
            if not self.closed:
                self.closed = True
                _open_windows.remove(self)
                if not _open_windows:
                    plan_module.set_profiler(None)
                    _recorder = None
        return cap


def active_recorder() -> Recorder | None:
    return _recorder
