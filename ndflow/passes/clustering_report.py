"""What the clustering pass reports: TF's "*** Clustering info" summary (VLOG 2) with op
histograms (VLOG 3), the annotated-graph dump of `--tf_xla_clustering_debug`, and a one-time
warning naming jit_compile=True ops that stay out of compiled clusters.

    report(graph, marked)        # `marked`: the named clusters (Cluster objects)
    dump_clustering(graph, marked)
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import Counter

from google.protobuf import text_format

from ndflow.core import config, dtypes, logging
from ndflow.core.graph import Graph

VLOG_MODULE = "mark_for_compilation_pass"
CLUSTER_ATTR = "_XlaCluster"
MUST_COMPILE_ATTR = "_XlaMustCompile"
_lock = threading.Lock()
_dump_seq = itertools.count()


def report(graph: Graph, marked: list) -> None:
    """TF's clustering summary (VLOG 2) with op histograms (VLOG 3); sizes count _SOURCE and
    _SINK, as TF's graph->num_nodes() does."""
    if not logging.vlog_is_on(VLOG_MODULE, 2):
        return
    ops = graph.get_operations()
    total = len(ops) + 2
    clustered = sum(len(c.ops) for c in marked)
    detail = logging.vlog_is_on(VLOG_MODULE, 3)

    def pct(n):
        return f"{n} / {total} ({100.0 * n / total:.2f}%)"

    def histogram(types, indent):
        return [f"{indent}{t}: {n} instances" for t, n in sorted(Counter(types).items())]

    lines = [f"*** Clustering info for graph of size {total}",
             f" Built {len(marked)} clusters, size {pct(clustered)}"]
    for c in marked:
        lines.append(f"  {c.name} {pct(len(c.ops))}")
        if detail:
            lines += histogram([op.type for op in c.ops], "   ")
    inside = {op for c in marked for op in c.ops}
    lines.append(f" Unclustered nodes: {pct(total - clustered)}")
    if detail:
        lines += histogram([op.type for op in ops if op not in inside] + ["NoOp", "NoOp"], "  ")
    for line in lines:
        logging.vlog(VLOG_MODULE, 2, line)


_warned_must_compile: set = set()


def warn_uncompiled_must_compile(graph: Graph, marked: list) -> None:
    """jit_compile=True ops the JIT cannot compile run outside the compiled cluster (TF would
    fail the call); said once per op-type set. Variable reads and writes are not named: they
    always run outside clusters in ndflow, by design."""
    inside = {op for c in marked for op in c.ops}

    def variable_op(op):
        return any(t.dtype == dtypes.resource for t in list(op.inputs) + op.outputs)
    left = sorted({op.type for op in graph.get_operations()
                   if op.attrs.get(MUST_COMPILE_ATTR) is True and op not in inside
                   and op.type not in ("Placeholder", "NoOp") and not variable_op(op)})
    key = tuple(left)
    if left and key not in _warned_must_compile:
        _warned_must_compile.add(key)
        logging.warning("tf.function(jit_compile=True): ndflow's JIT cannot compile "
                        f"{', '.join(left)}; these ops run outside the compiled cluster.")


def dump_clustering(graph: Graph, marked: list) -> None:
    """--tf_xla_clustering_debug: the graph with its `_XlaCluster` attrs as a GraphDef text
    file under TF_DUMP_GRAPH_PREFIX (TF's mark_for_compilation_annotated dump)."""
    prefix = config.get(config.TF_DUMP_GRAPH_PREFIX)
    name = "mark_for_compilation_annotated"
    if not prefix:
        logging.warning(f"Failed to dump {name} because dump location is not specified "
                        "through either TF_DUMP_GRAPH_PREFIX environment variable or function "
                        "argument.")
        return
    gd = graph.as_graph_def()
    cluster_of = {op.name: c.name for c in marked for op in c.ops}
    for node in gd.node:
        if node.name in cluster_of:
            node.attr[CLUSTER_ATTR].s = cluster_of[node.name].encode()
    os.makedirs(prefix, exist_ok=True)
    with _lock:
        path = os.path.join(prefix, f"{name}_{next(_dump_seq)}.pbtxt")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text_format.MessageToString(gd))
    os.replace(tmp, path)
    logging.info(f"Dumped {name} to {path}")
