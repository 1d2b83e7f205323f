"""The profile as text: what `python -m ndflow.profiler` prints at the end of a run."""

from __future__ import annotations

from ndflow.core.build_info import cpu_model_and_flags


def _shapes(shapes: list) -> str:
    return " ".join("x".join(map(str, s)) if s else "()" for s in shapes if s is not None)


def render(profile, precision: dict, advice: list, top: int = 10) -> str:
    lines = []
    kept = profile.kept
    lines.append(f"ndflow.profiler: {len(profile.iterations)} iteration(s), key node "
                 f"{profile.key or '(none)'} ({profile.key_reason}); statistics over "
                 f"iterations {kept[0]}..{kept[-1]}" if kept else
                 "ndflow.profiler: no iteration kept")
    for w in profile.warnings:
        lines.append(f"  warning: {w}")
    if kept:
        n = len(kept)
        lines.append(f"  CPU: {cpu_model_and_flags()[0]}")
        durations = sorted(profile.iterations[i]["duration_us"] / 1e3 for i in kept)
        lines.append(f"  mean iteration {profile.iteration_ns / n / 1e6:.3f} ms (median "
                     f"{durations[n // 2]:.3f}, min {durations[0]:.3f}, max {durations[-1]:.3f})"
                     f", op time {profile.node_ns / n / 1e6:.3f} ms per iteration")
    lines.append("")
    lines.append(f"Top op types by time ({'share':>6s}):")
    for r in profile.op_types()[:top]:
        lines.append(f"  {r['op_type']:28s} {100 * r['share']:5.1f}%  {r['count']:7d} calls "
                     f"{r['total_us'] / 1e3:9.3f} ms  {r['gflops_per_s']:7.2f} GFLOP/s")
    lines.append("")
    lines.append("Top nodes by time:")
    for s in profile.nodes[:top]:
        n = s.node
        lines.append(f"  {n.op_type + ': ' + n.name:48.48s} {s.count:6d} x {s.mean_ns / 1e3:9.1f}"
                     f" us  {s.gflops_per_s:7.2f} GFLOP/s  {_shapes(n.input_shapes)} "
                     f"{','.join(n.output_dtypes)} {n.device}")
    lines.append("")
    rows = precision["nodes"]
    if rows:
        lines.append(f"Reduced precision: {100 * precision['reduced_share']:.0f}% of the "
                     f"eligible op time ran in float16/bfloat16 ({len(rows)} eligible node(s), "
                     f"{100 * precision['eligible_share_of_nodes']:.0f}% of op time)")
        for r in rows[:top]:
            state = r["dtype"] if r["reduced_precision"] else f"{r['dtype']}: {r['reason']}"
            if r["reduced_precision"] and r["reason"]:
                state += f" ({r['reason']})"
            lines.append(f"  {r['op_type'] + ': ' + r['name']:48.48s} {state}")
    else:
        lines.append("Reduced precision: no op eligible for it ran")
    lines.append("")
    lines.append("Recommendations:")
    lines.extend(f"  - {a}" for a in advice) if advice else lines.append("  (none)")
    return "\n".join(lines)
