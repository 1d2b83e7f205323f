"""A capture as Chrome / Perfetto trace-event JSON (the `*.trace.json.gz` TensorBoard's trace
viewer and ui.perfetto.dev open).

One process per device (`/host:CPU` for plans, user `Trace` spans and CPU nodes;
`/device:GPU:<n>` for GPU nodes), one thread track per Python thread. Spans are complete
events (`ph: "X"`, `ts`/`dur` in microseconds from the start of profiling) nested as
plan -> node (`<op type>: <node name>`, the NVTX range's name) -> kernel (the kernel function
ndflow's registry gave the node); a node whose kernel runs a plan of its own (If/While bodies,
compiled clusters) holds that plan's spans. Process and thread names are metadata events.
"""

from __future__ import annotations

import socket
import threading

from ndflow.profiler.recorder import Capture

HOST_PID = 1


def _device_pid(device: str) -> tuple[int, str]:
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        return 100 + index, f"/device:GPU:{index}"
    return HOST_PID, f"/host:CPU ({socket.gethostname()})"


def trace(cap: Capture) -> dict:
    """The trace-event document for `cap`."""
    events: list = []
    processes: dict = {HOST_PID: _device_pid("cpu")[1]}
    threads: dict = {}

    def tid_of(pid: int, ident: int) -> int:
        key = (pid, ident)
        if key not in threads:
            threads[key] = sum(1 for p, _ in threads if p == pid) + 1
        return threads[key]

    def span(name, cat, t0, t1, pid, ident, args=None):
        ev = {"name": name, "cat": cat, "ph": "X", "ts": (t0 - cap.t_start) / 1e3,
              "dur": (t1 - t0) / 1e3, "pid": pid, "tid": tid_of(pid, ident)}
        if args:
            ev["args"] = args
        events.append(ev)

    for idx, t0, t1, ident in cap.plan_events:
        info = cap.plans[idx]
        span(info.label, "plan", t0, t1, HOST_PID, ident, {"kernels": info.num_nodes})
    for key, t0, t1, ident in cap.node_events:
        n = cap.nodes[key]
        pid, pname = _device_pid(n.device)
        processes[pid] = pname
        args = {"op": n.op_type, "node": n.name, "plan": n.plan,
                "input_shapes": str(n.input_shapes), "output_dtypes": ",".join(n.output_dtypes)}
        span(f"{n.op_type}: {n.name}", "node", t0, t1, pid, ident, args)
        span(n.kernel, "kernel", t0, t1, pid, ident)
    for name, t0, t1, ident, args in cap.user_events:
        span(name, "user", t0, t1, HOST_PID, ident, {k: str(v) for k, v in args.items()})
    # parents before children at equal start times: longer first, then plan > node > kernel
    rank = {"user": 0, "plan": 1, "node": 2, "kernel": 3}
    events.sort(key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"], rank[e["cat"]]))
    meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "ts": 0,
             "args": {"name": name}} for pid, name in sorted(processes.items())]
    main = threading.main_thread().ident
    meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "ts": 0,
              "args": {"name": "main thread" if ident == main else f"thread {tid}"}}
             for (pid, ident), tid in sorted(threads.items(), key=lambda kv: kv[1])]
    return {"displayTimeUnit": "ns", "traceEvents": meta + events,
            "otherData": {"producer": "ndflow.profiler"}}
