"""The reduced-precision report: DLProf's Tensor Core view, for CPUs and GPUs.

An executed node is eligible when its op type (a fused op counts as the op it fuses) is on the
auto-mixed-precision allow list of the mode its device would use: the CUDA float16 lists on a
GPU, the oneDNN bfloat16 lists on a CPU (ndflow/passes/amp/lists.py, with the environment's
edits). For each: whether it ran in float16/bfloat16 (its first output's dtype), and when not,
why — the rewrite is off for its plan, this CPU has no bf16 units, its dtype is not float32,
or the rewrite kept it in float32 (it is fetched, or on a deny path). A GPU node in float16
whose GEMM / channel dims are not multiples of 8 ran, but not on Tensor Cores.
"""

from __future__ import annotations

from ndflow.passes.amp import device as amp_device
from ndflow.passes.amp.lists import AmpListError, Mode, amp_lists, base_lists
from ndflow.profiler import op_costs

REDUCED = frozenset({"float16", "bfloat16"})
_FUSED_AS = {"_FusedMatMul": "MatMul", "_FusedConv2D": "Conv2D", "_FusedConv3D": "Conv3D",
             "_MatMulAddScaled": "MatMul", "BatchMatMulV3": "BatchMatMulV2"}


def _allow(mode: Mode) -> frozenset:
    try:
        return amp_lists(mode, 10000, 8000).allow
    except AmpListError:
        return base_lists(mode, 10000, 8000).allow


def _not_reduced_reason(node, dtype: str, gpu: bool) -> str:
    if not node.amp.get("enabled"):
        return ("rewrite off (set TF_ENABLE_AUTO_MIXED_PRECISION=1 or the "
                "auto_mixed_precision optimizer option)")
    if not gpu and not amp_device.cpu_has_bf16_units() and not node.amp.get("onednn_bfloat16"):
        return "no bf16 units on this CPU (avx512_bf16 / amx_bf16): the rewrite skips CPU nodes"
    if dtype not in ("float32", "?"):
        return f"not float32 ({dtype}): the rewrite converts float32 only"
    return "kept in float32 by the rewrite (fetched or preserved, or on a deny path)"


def report(profile) -> dict:
    """{'nodes': [per eligible node], 'eligible_us', 'reduced_us', 'reduced_share'}."""
    allow = {"GPU": _allow(Mode.CUDA), "CPU": _allow(Mode.BF16)}
    rows = []
    for s in profile.top_nodes:
        n = s.node
        gpu = n.device.startswith("cuda")
        base_type = _FUSED_AS.get(n.op_type, n.op_type)
        if base_type not in allow["GPU" if gpu else "CPU"]:
            continue
        dtype = n.output_dtypes[0] if n.output_dtypes else "?"
        reduced = dtype in REDUCED
        dims = op_costs.tensor_core_dims(n.op_type, n.input_shapes, n.output_shapes, n.attrs)
        odd = {k: v for k, v in (dims or {}).items() if v % 8}
        reason = ""
        if not reduced:
            reason = _not_reduced_reason(n, dtype, gpu)
        elif gpu and odd:
            reason = ("ran in float16 but not on Tensor Cores: dims not multiples of 8 ("
                      + ", ".join(f"{k}={v}" for k, v in odd.items()) + ")")
        rows.append({"plan": n.plan, "name": n.name, "op_type": n.op_type, "device": n.device,
                     "dtype": dtype, "reduced_precision": reduced,
                     "tensor_core_dims": bool(dims) and not odd, "dims": dims or {},
                     "total_us": s.total_ns / 1e3, "reason": reason})
    eligible = sum(r["total_us"] for r in rows)
    reduced = sum(r["total_us"] for r in rows if r["reduced_precision"])
    node_us = profile.node_ns / 1e3
    return {"nodes": sorted(rows, key=lambda r: -r["total_us"]), "eligible_us": eligible,
            "reduced_us": reduced, "reduced_share": reduced / eligible if eligible else 0.0,
            "eligible_share_of_nodes": eligible / node_us if node_us else 0.0}
