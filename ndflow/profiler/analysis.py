"""From a capture to a profile: iterations found by a key node, per-node, per-op-type, per-plan
and per-iteration statistics over the iterations kept.

Iterations are delimited by the key node's executions, as DLProf does: iteration 0 runs from
the start of profiling to the end of the key node's first execution, iteration i from the end
of its i-th to the end of its (i+1)-th; what runs after the last one is an unfinished iteration
and is left out. The key is a node name (every plan's node of that name counts) or
`plan:<label>`, one iteration per call of that plan (a tf.function's step), or `trace:<name>`,
one per `tf.profiler.experimental.Trace(name, step_num=...)` span (preferred when present).
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass, field

from ndflow.profiler import op_costs
from ndflow.profiler.recorder import Capture, NodeInfo

PLAN_KEY_PREFIX = "plan:"
TRACE_KEY_PREFIX = "trace:"  # tf.profiler.experimental.Trace spans of that name (step_num)


class KeyNodeError(ValueError):
    """The key node given is not a node that executed (the message lists candidates)."""


@dataclass
class NodeStats:
    node: NodeInfo
    count: int = 0
    total_ns: int = 0
    min_ns: int = 0
    max_ns: int = 0
    flops: int = 0       # per execution, from the first execution's shapes
    bytes: int = 0

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0

    @property
    def gflops_per_s(self) -> float:
        return self.flops * self.count / self.total_ns if self.total_ns else 0.0

    def row(self) -> dict:
        n = self.node
        return {
            "plan": n.plan, "name": n.name, "op_type": n.op_type, "device": n.device,
            "input_shapes": n.input_shapes, "input_dtypes": n.input_dtypes,
            "output_shapes": n.output_shapes, "output_dtypes": n.output_dtypes,
            "count": self.count, "total_us": self.total_ns / 1e3, "mean_us": self.mean_ns / 1e3,
            "min_us": self.min_ns / 1e3, "max_us": self.max_ns / 1e3,
            "flops": self.flops, "bytes": self.bytes, "gflops_per_s": self.gflops_per_s,
            "category": op_costs.category(n.op_type),
        }


@dataclass
class Profile:
    key: str
    key_reason: str
    iter_start: int
    iterations: list          # dicts: iteration, start_us, duration_us, plans_us, nodes_us
    kept: list                # the indices of the iterations the statistics cover
    nodes: list               # NodeStats, slowest first (top-level plans' nodes and nested)
    capture: Capture
    bounds: list              # perf_counter_ns: iteration i is (bounds[i], bounds[i + 1]]
    warnings: list = field(default_factory=list)

    @property
    def top_nodes(self) -> list:
        """Nodes of plans run directly (a nested plan's nodes are inside one of these)."""
        nested = {p.index for p in self.capture.plans if p.nested}
        return [s for s in self.nodes if s.node.plan_index not in nested]

    @property
    def node_ns(self) -> int:
        return sum(s.total_ns for s in self.top_nodes)

    @property
    def iteration_ns(self) -> int:
        lo, hi = self._bounds
        return max(hi - lo, 0)

    def op_types(self) -> list:
        """Per op type: count, total time, share of the top-level node time, FLOPs, GFLOP/s."""
        by: dict = {}
        for s in self.top_nodes:
            row = by.setdefault(s.node.op_type, {"op_type": s.node.op_type, "nodes": 0,
                                                 "count": 0, "total_ns": 0, "flops": 0})
            row["nodes"] += 1
            row["count"] += s.count
            row["total_ns"] += s.total_ns
            row["flops"] += s.flops * s.count
        total = self.node_ns or 1
        rows = []
        for r in sorted(by.values(), key=lambda r: -r["total_ns"]):
            rows.append({"op_type": r["op_type"], "category": op_costs.category(r["op_type"]),
                         "nodes": r["nodes"], "count": r["count"],
                         "total_us": r["total_ns"] / 1e3, "share": r["total_ns"] / total,
                         "flops": r["flops"],
                         "gflops_per_s": r["flops"] / r["total_ns"] if r["total_ns"] else 0.0})
        return rows

    def plans(self) -> list:
        by: dict = {}
        for idx, t0, t1, _ in self._kept_events(self.capture.plan_events):
            info = self.capture.plans[idx]
            row = by.setdefault(idx, {"plan": info.label, "nested": info.nested,
                                      "kernels": info.num_nodes, "calls": 0, "total_ns": 0})
            row["calls"] += 1
            row["total_ns"] += t1 - t0
        return [dict(r, total_us=r.pop("total_ns") / 1e3)
                for r in sorted(by.values(), key=lambda r: -r["total_ns"])]

    def _kept_events(self, events):
        lo, hi = self._bounds
        return [e for e in events if lo < e[1] <= hi]

    @property
    def _bounds(self) -> tuple:
        if not self.kept:
            return (0, -1)
        return self.bounds[self.kept[0]], self.bounds[self.kept[-1] + 1]


# -- the key node --------------------------------------------------------------------------

def _counts(cap: Capture) -> tuple[dict, dict]:
    node_counts: dict = {}
    for key, *_ in cap.node_events:
        node_counts[key] = node_counts.get(key, 0) + 1
    plan_calls: dict = {}
    for idx, *_ in cap.plan_events:
        plan_calls[idx] = plan_calls.get(idx, 0) + 1
    return node_counts, plan_calls


def candidates(cap: Capture, limit: int = 10) -> list[str]:
    """What could delimit steps: nodes run once per call of a plan called more than once,
    variable increments first (a step counter's first), then such plans themselves (a
    tf.function step), then the other nodes; busiest plans first."""
    node_counts, plan_calls = _counts(cap)
    plan_time: dict = {}
    for idx, t0, t1, _ in cap.plan_events:
        plan_time[idx] = plan_time.get(idx, 0) + t1 - t0
    once = [n for n in cap.nodes if plan_calls.get(n.plan_index, 0) >= 2
            and node_counts.get(n.key, 0) == plan_calls[n.plan_index]
            and not cap.plans[n.plan_index].nested]

    def rank(n: NodeInfo):
        var = str(n.attrs.get("variable", "")).lower()
        stepish = "step" in var or "iteration" in var
        return (not stepish, n.op_type != "AssignAddVariableOp", -plan_time.get(n.plan_index, 0))
    ranked = sorted(once, key=rank)
    increments = [n.name for n in ranked if n.op_type == "AssignAddVariableOp"]
    others = [n.name for n in ranked if n.op_type != "AssignAddVariableOp"]
    plans = sorted((i for i, c in plan_calls.items() if c >= 2 and not cap.plans[i].nested),
                   key=lambda i: -plan_time.get(i, 0))
    # a step counter first, else a whole plan call (a tf.function step), else any node
    names = increments + [PLAN_KEY_PREFIX + cap.plans[i].label for i in plans[:3]] + others
    return list(dict.fromkeys(names))[:limit]


def propose_key(cap: Capture) -> tuple[str | None, str]:
    """The program's own step spans (Trace with step_num) when it has them; else DLProf's
    choice: a variable increment run once per step (the global step's AssignAddVariableOp),
    else the busiest plan called more than once."""
    steps = [e[0] for e in cap.user_events if "step_num" in e[4]]
    if len(steps) >= 1:
        return (TRACE_KEY_PREFIX + steps[0],
                f"the program's Trace({steps[0]!r}, step_num=...) spans are its steps")
    cands = candidates(cap)
    if not cands:
        return None, "no node or plan ran more than once: the whole run is one iteration"
    key = cands[0]
    node_counts, plan_calls = _counts(cap)
    if key.startswith(PLAN_KEY_PREFIX):
        return key, f"each call of plan {key[len(PLAN_KEY_PREFIX):]!r} is one iteration"
    node = next(n for n in cap.nodes if n.name == key)
    return key, (f"{node.op_type} node {key!r} runs once per call of plan {node.plan!r} "
                 f"({node_counts[node.key]} times)")


def key_end_times(cap: Capture, key: str) -> list[int]:
    """When the key ended, each time it ran; KeyNodeError when nothing of that name ran."""
    if key.startswith(TRACE_KEY_PREFIX):
        name = key[len(TRACE_KEY_PREFIX):]
        ends = [t1 for n, _, t1, _, _ in cap.user_events if n == name]
    elif key.startswith(PLAN_KEY_PREFIX):
        label = key[len(PLAN_KEY_PREFIX):]
        idx = {p.index for p in cap.plans if p.label == label}
        ends = [t1 for i, _, t1, _ in cap.plan_events if i in idx]
    else:
        keys = {n.key for n in cap.nodes if n.name == key}
        if not keys:
            keys = {n.key for n in cap.nodes if n.name.lower() == key.lower()}
        ends = [t1 for k, _, t1, _ in cap.node_events if k in keys]
    if not ends:
        names = sorted({n.name for n in cap.nodes})
        close = difflib.get_close_matches(key, names, n=5)
        listed = ", ".join(dict.fromkeys(close + candidates(cap))) or "(no node ran)"
        raise KeyNodeError(f"Key node {key!r} did not execute in any profiled plan. "
                           f"Candidates: {listed}")
    return sorted(ends)


# -- the profile ---------------------------------------------------------------------------

def analyze(cap: Capture, key_node: str | None = None, iter_start: int = 0,
            iter_stop: int | None = None) -> Profile:
    if key_node:
        key, reason = key_node, "given"
    else:
        key, reason = propose_key(cap)
    ends = key_end_times(cap, key) if key else []
    bounds = [cap.t_start] + ends if ends else [cap.t_start, cap.t_end]
    n_iter = len(bounds) - 1
    warnings = []
    stop = n_iter if iter_stop is None else min(iter_stop, n_iter)
    kept = list(range(min(iter_start, n_iter), max(stop, 0)))
    if not kept:
        warnings.append(f"only {n_iter} iteration(s) ran: none left after --iter_start "
                        f"{iter_start}" + (f" and --iter_stop {iter_stop}" if iter_stop else ""))
    nested = {p.index for p in cap.plans if p.nested}
    iterations = [{"iteration": i, "start_us": (bounds[i] - cap.t_start) / 1e3,
                   "duration_us": (bounds[i + 1] - bounds[i]) / 1e3, "plans_us": 0.0,
                   "nodes_us": 0.0, "input_us": 0.0} for i in range(n_iter)]

    def iteration_of(t0: int) -> int:
        i = bisect.bisect_left(bounds, t0) - 1  # (b_i, b_i+1] holds t0
        return i if 0 <= i < n_iter else -1

    for idx, t0, t1, _ in cap.plan_events:
        i = iteration_of(t0)
        if i >= 0 and idx not in nested:
            iterations[i]["plans_us"] += (t1 - t0) / 1e3
    keep = set(kept)
    stats: dict = {}
    for key_, t0, t1, _ in cap.node_events:
        i = iteration_of(t0)
        if i < 0:
            continue
        node = cap.nodes[key_]
        dt = t1 - t0
        if node.plan_index not in nested:
            iterations[i]["nodes_us"] += dt / 1e3
            if op_costs.category(node.op_type) == "input":
                iterations[i]["input_us"] += dt / 1e3
        if i not in keep:
            continue
        s = stats.get(key_)
        if s is None:
            s = stats[key_] = NodeStats(node, min_ns=dt, max_ns=dt)
            s.flops = op_costs.flops(node.op_type, node.input_shapes, node.output_shapes,
                                     node.attrs)
            s.bytes = (op_costs.nbytes(node.input_shapes, node.input_dtypes)
                       + op_costs.nbytes(node.output_shapes, node.output_dtypes))
        s.count += 1
        s.total_ns += dt
        s.min_ns = min(s.min_ns, dt)
        s.max_ns = max(s.max_ns, dt)
    nodes = sorted(stats.values(), key=lambda s: -s.total_ns)
    return Profile(key or "", reason, iter_start, iterations, kept, nodes, cap, bounds,
                   warnings)
