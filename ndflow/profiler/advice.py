"""Recommendations from a profile, as DLProf's expert system gives them: each rule looks at the
measured data and, when its condition holds, says what it saw and what to try."""

from __future__ import annotations

from ndflow.core import config
from ndflow.passes.amp import device as amp_device
from ndflow.profiler import op_costs

ELEMENTWISE_SHARE = 0.25   # of node time, outside fused kernels: worth a JIT
INPUT_SHARE = 0.10         # of iteration time waiting on the input pipeline
HOST_SHARE = 0.30          # of iteration time outside any plan
AMP_ELIGIBLE_SHARE = 0.20  # of node time eligible for reduced precision while AMP is off
ODD_DIMS_SHARE = 0.02      # of node time in products whose dims are not multiples of 8


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def recommendations(profile, precision: dict) -> list[str]:
    out = []
    node_ns = profile.node_ns or 1
    iter_ns = profile.iteration_ns or 1
    # 1. matrix products / convolutions with dims that are not multiples of 8
    odd: dict = {}
    for s in profile.top_nodes:
        n = s.node
        dims = op_costs.tensor_core_dims(n.op_type, n.input_shapes, n.output_shapes, n.attrs)
        bad = {k: v for k, v in (dims or {}).items() if v % 8}
        if bad:
            entry = odd.setdefault(n.op_type, [0, 0, None])
            entry[0] += 1
            entry[1] += s.total_ns
            entry[2] = entry[2] or (n.name, bad)
    for op_type, (count, ns, (name, bad)) in sorted(odd.items(), key=lambda kv: -kv[1][1]):
        if ns / node_ns >= ODD_DIMS_SHARE:
            dims = ", ".join(f"{k}={v}" for k, v in bad.items())
            out.append(f"{count} {op_type} node(s) ({_pct(ns / node_ns)} of op time) have "
                       f"dims not a multiple of 8 (e.g. {name}: {dims}): pad them (batch, "
                       "units, channels) to multiples of 8 so Tensor Cores (GPU) or AMX "
                       "tiles (CPU) can run them.")
    # 2. elementwise time outside fused kernels
    elementwise = sum(s.total_ns for s in profile.top_nodes
                      if op_costs.category(s.node.op_type) == "elementwise")
    auto_jit = "tf_xla_auto_jit" in (config.get(config.TF_XLA_FLAGS) or "")
    if elementwise / node_ns >= ELEMENTWISE_SHARE and not auto_jit:
        out.append(f"{_pct(elementwise / node_ns)} of the op time is elementwise ops outside "
                   "any fused kernel: try TF_XLA_FLAGS=--tf_xla_auto_jit=2 (fuses them into "
                   "generated kernels).")
    # 3. the input pipeline and the host
    kept = [profile.iterations[i] for i in profile.kept]
    if kept:
        input_us = sum(it["input_us"] for it in kept)
        plans_us = sum(it["plans_us"] for it in kept)
        total_us = iter_ns / 1e3
        if input_us / total_us >= INPUT_SHARE:
            out.append(f"The input pipeline stalls the step {_pct(input_us / total_us)} of the "
                       "time (IteratorGetNext waits): add .prefetch(tf.data.AUTOTUNE) and "
                       "num_parallel_calls=tf.data.AUTOTUNE to the dataset's map.")
        host = max(total_us - plans_us, 0.0) / total_us
        if host >= HOST_SHARE:
            out.append(f"{_pct(host)} of each iteration runs outside graph execution (Python, "
                       "input preparation, feed_dict conversion, eager ops): feed from "
                       "tf.data with prefetch and run the step in one tf.function.")
    # 4. reduced precision
    eligible_share = precision["eligible_share_of_nodes"]
    off = [r for r in precision["nodes"] if r["reason"].startswith("rewrite off")]
    if off and eligible_share >= AMP_ELIGIBLE_SHARE:
        on_gpu = any(r["device"].startswith("cuda") for r in off)
        if on_gpu or amp_device.cpu_has_bf16_units():
            out.append(f"{_pct(eligible_share)} of the op time is in ops eligible for reduced "
                       "precision, but the mixed-precision rewrite is off: set "
                       "TF_ENABLE_AUTO_MIXED_PRECISION=1 (float16 on Tensor Cores, bfloat16 on "
                       "this CPU's bf16 units).")
        else:
            out.append(f"{_pct(eligible_share)} of the op time is in ops eligible for reduced "
                       "precision, but this CPU has no bf16 units (avx512_bf16 / amx_bf16): "
                       "mixed precision would not speed it up here; a GPU or a CPU with AMX "
                       "would.")
    kept32 = [r for r in precision["nodes"] if r["reason"].startswith("kept in float32")]
    if kept32 and precision["eligible_us"] and \
            sum(r["total_us"] for r in kept32) / precision["eligible_us"] >= 0.2:
        out.append(f"{len(kept32)} eligible node(s) stayed in float32 although the rewrite ran "
                   f"(e.g. {kept32[0]['name']}): they are fetched or sit on a deny path; "
                   "TF_CPP_VMODULE=auto_mixed_precision=2 shows why each was painted.")
    return out
