"""The auto-mixed-precision graph rewrite (TensorFlow's grappler `auto_mixed_precision`).

A pure pass `(graph, ctx) -> graph` in the pipeline after constant folding and before CSE.
It runs when the pass configuration (ndflow/passes/pass_config.py, which resolves the
RewriterConfig toggles `auto_mixed_precision`, `auto_mixed_precision_onednn_bfloat16` /
`..._mkl` and `auto_mixed_precision_cpu`, the flag of `enable_mixed_precision_graph_rewrite`
and NVIDIA's variables) asks for it, or for explicit `auto_mixed_precision_modes` (tools,
tests).

Device policy: `auto_mixed_precision` converts GPU nodes to float16 when there is a GPU with
compute capability >= 7.0; without one, ndflow converts CPU nodes to bfloat16 when the CPU
has bf16 units (AVX512_BF16 / AMX-BF16), else it warns `No (suitable) GPUs detected,
skipping auto_mixed_precision graph optimizer` as TensorFlow does (once per process, not at
every graph compile as TensorFlow). The oneDNN toggle converts CPU nodes to bfloat16
whenever oneDNN's optimizations are on (TF_ENABLE_ONEDNN_OPTS, by default on CPUs with
AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX, as TensorFlow's `IsMKLEnabled()`), and is a
no-op otherwise, as in TensorFlow; `auto_mixed_precision_cpu` runs the float16 lists on CPU
nodes with float16 emulation (testing). Graphs with fewer than `min_graph_nodes` nodes
(default 4) are skipped, and `disable_meta_optimizer` turns the pass off.

Any failure (conflicting lists, an op that does not match its OpDef, ...) leaves the graph
unchanged with `WARNING <name> graph optimizer FAILED: <status>`.
"""

from __future__ import annotations

import time

from ndflow.core import config, dtypes, logging
from ndflow.core.graph import Graph
from ndflow.kernels import registry as kernels
from ndflow.passes.amp import device as amp_device
from ndflow.passes.amp import dump as amp_dump
from ndflow.passes.amp.casts import change_types_and_add_casts
from ndflow.passes.amp.graph import AmpGraphError, TypeGraph, amp_nodes
from ndflow.passes.amp.lists import AmpListError, Mode, amp_lists
from ndflow.passes.amp.painting import MODULE, AmpPaintError, Painter
from ndflow.passes.pass_context import PassContext

OPTIMIZER_NAMES = {
    Mode.CUDA: "auto_mixed_precision",
    Mode.BF16: "auto_mixed_precision_onednn_bfloat16",
    Mode.FP16_CPU: "auto_mixed_precision_onednn_float16",
    Mode.CPU: "auto_mixed_precision_cpu",
}

_WARNED_NO_DEVICE: list = []  # non-empty once the no-device warning was logged


def target_dtype(mode: Mode):
    return dtypes.bfloat16 if mode is Mode.BF16 else dtypes.float16


# -- when the pass runs --------------------------------------------------------------------

def _gpu(ctx: PassContext):
    override = ctx.config.auto_mixed_precision_gpu
    if override is not None:
        return amp_device.GpuProperties.parse(override) if override else None
    return amp_device.detect_gpu()


def modes_to_run(ctx: PassContext, gpu) -> list[Mode]:
    """The rewrite variants to run on this graph, in TensorFlow's meta-optimizer order."""
    cfg = ctx.config
    if cfg.auto_mixed_precision_modes is not None:
        return [Mode(m) if not isinstance(m, Mode) else m
                for m in cfg.auto_mixed_precision_modes]
    if cfg.meta_optimizer_disabled:
        return []
    modes: list[Mode] = []
    if cfg.auto_mixed_precision:
        gpu_ok = amp_device.suitable_gpu(gpu)
        if gpu_ok:
            modes.append(Mode.CUDA)
        # beside a real GPU, ops without a device run on the CPU: bfloat16 there too
        if amp_device.cpu_has_bf16_units() and (not gpu_ok or not gpu.virtual):
            modes.append(Mode.BF16)
        elif not gpu_ok and not _WARNED_NO_DEVICE:
            _WARNED_NO_DEVICE.append(True)   # once per process: every compile would repeat it
            logging.warning("No (suitable) GPUs detected, skipping auto_mixed_precision "
                            "graph optimizer")
    if cfg.auto_mixed_precision_onednn_bfloat16 and Mode.BF16 not in modes:
        if amp_device.onednn_enabled():
            modes.append(Mode.BF16)
        else:  # TensorFlow's meta-optimizer does not register the pass (IsMKLEnabled())
            logging.vlog(MODULE, 1, "oneDNN optimizations are off on this CPU "
                         "(TF_ENABLE_ONEDNN_OPTS): skipping auto_mixed_precision_onednn_bfloat16")
    if cfg.auto_mixed_precision_cpu:
        modes.append(Mode.CPU)
    return modes


# -- one rewrite ----------------------------------------------------------------------------

def _processed_nodes(graph: Graph, ctx: PassContext, mode: Mode, gpu) -> set[str]:
    logging.vlog(MODULE, 2, "Identifying nodes that should be processed")
    preserved = ctx.preserved_op_names()
    want = "GPU" if mode is Mode.CUDA else "CPU"
    suitable = mode is not Mode.CUDA or amp_device.suitable_gpu(gpu)
    processed = set()
    for op in graph.get_operations():
        must_preserve = op.name in preserved
        on_device = amp_device.node_device_type(op.device, gpu) == want
        if not must_preserve and on_device and suitable:
            processed.add(op.name)
        else:
            why = ("must be preserved" if must_preserve
                   else "is not on the GPU, or the GPU arch is not suitable")
            logging.vlog(MODULE, 2, f"Skipping {op.type} node {op.name} because it {why}")
    return processed


def _batch_norm_renames(graph: Graph, processed: set[str]) -> dict:
    renames = {}
    for op in graph.get_operations():
        if op.name in processed and op.type in ("FusedBatchNorm", "FusedBatchNormGrad"):
            new = op.type + "V2"
            logging.vlog(MODULE, 2, f"Changing op of {op.type} node {op.name} to {new}")
            renames[op.name] = (new, {"U": dtypes.float32})
    return renames


def rewrite(graph: Graph, ctx: PassContext, mode: Mode, gpu=None) -> Graph:
    """One variant of the rewrite (raises on failure; see `auto_mixed_precision`)."""
    if mode is Mode.FP16_CPU and not amp_device.cpu_has_fp16_units():
        logging.vlog(MODULE, 1, "No AMX-FP16 or AVX-NE-CONVERT on this CPU, skipping "
                                f"{OPTIMIZER_NAMES[mode]} graph optimizer")
        return graph
    target = target_dtype(mode)
    if mode is Mode.CUDA and gpu is None:
        gpu = amp_device.SIMULATED_GPU
    cuda, cudnn = (gpu.cuda, gpu.cudnn) if mode is Mode.CUDA else (0, 0)
    lists = amp_lists(mode, cuda, cudnn)
    graph_id = ctx.graph_id
    timestamp = int(time.time() * 1000)
    amp_dump.dump(graph, True, graph_id, timestamp)
    processed = _processed_nodes(graph, ctx, mode, gpu)
    logging.vlog(MODULE, 2, "Converting FusedBatchNorm* ops to V2")
    nodes = amp_nodes(graph, _batch_norm_renames(graph, processed))
    logging.vlog(MODULE, 2, "Building node type map for graph")
    view = TypeGraph(nodes)

    def supports_kernel(node) -> bool:
        device = amp_device.node_device_type(node.device, gpu)
        return device in kernels.DEVICE_TYPES and kernels.has_kernel(node.op_def, device)

    painter = Painter(view, lists, processed, target, supports_kernel,
                      bf16_mode=mode is Mode.BF16)
    allow = painter.run()
    if not allow:
        return graph
    logging.vlog(MODULE, 2, "Beginning final pass to change type attributes and insert Cast "
                            "ops at paint boundaries")
    emulate = mode is Mode.CPU and config.get(
        config.TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_EMULATE_FP16)
    out, stats = change_types_and_add_casts(graph, view, allow, target, emulate)
    logging.vlog(MODULE, 2, "Finished final pass")
    logging.log(logging.INFO, stats.message(target))
    amp_dump.dump(out, False, graph_id, timestamp, lists)
    return out


_STATUS = ((AmpListError, "INVALID_ARGUMENT"), (AmpGraphError, "INVALID_ARGUMENT"),
           (AmpPaintError, "FAILED_PRECONDITION"))


def _status(e: Exception) -> str:
    for cls, code in _STATUS:
        if isinstance(e, cls):
            return f"{code}: {e}"
    return f"INTERNAL: {type(e).__name__}: {e}"


def auto_mixed_precision(graph: Graph, ctx: PassContext) -> Graph:
    """The pipeline pass (see module doc). Returns `graph` itself when nothing changes."""
    gpu = _gpu(ctx)
    modes = modes_to_run(ctx, gpu)
    if not modes:
        return graph
    minimum = ctx.config.effective_min_graph_nodes()
    if len(graph.get_operations()) < minimum:
        logging.vlog(MODULE, 1, f"Skipping optimization, graph has "
                                f"{len(graph.get_operations())} nodes, fewer than {minimum}")
        return graph
    out = graph
    for mode in modes:
        name = OPTIMIZER_NAMES[mode]
        if ctx.graph_id == "tf_graph":
            logging.info(f"Running {name} graph optimizer")
        else:
            logging.vlog(MODULE, 1, f"Running {name} graph optimizer on {ctx.graph_id}")
        try:
            out = rewrite(out, ctx, mode, gpu)
        except Exception as e:  # noqa: BLE001 - TF restores the input graph on any failure
            logging.warning(f"{name} graph optimizer FAILED: {_status(e)}")
    return out
