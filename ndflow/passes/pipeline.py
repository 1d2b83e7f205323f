"""The ordered pass pipeline a graph goes through before it is compiled into a plan.

Each pass is a pure function `(graph, ctx) -> graph`: it returns a new graph (or its input,
unchanged, when it has nothing to do) and never mutates its input. `run_pipeline` applies
the enabled passes in order and returns the final graph plus the map from the caller's
fetch/feed/target names to their names in that graph:

    graph2, names = run_pipeline(graph, PassContext(fetches=["y:0"], feeds=["x:0"]))
    y = graph2.get_tensor_by_name(names["y:0"])

A pass may name the RewriterConfig toggle that switches it (`option="remapping"`), so a
Session's ConfigProto and `tf.config.optimizer.set_experimental_options` turn it off with no
further code (ndflow/passes/pass_config.py resolves them); `prune` is required and always runs
(it is what cuts the graph at the feeds). Adding a pass is the pass module, one entry here and
its test; other areas may also `register_pass("layout", layout, after="remapper")`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ndflow.core import logging
from ndflow.core.graph import Graph
from ndflow.passes import remapper
from ndflow.passes.amp.auto_mixed_precision import auto_mixed_precision
from ndflow.passes.arithmetic_optimizer import arithmetic_optimizer
from ndflow.passes.constant_folding import constant_folding
from ndflow.passes.cse import cse
from ndflow.passes.encapsulate_clusters import encapsulate_clusters
from ndflow.passes.loop_forward_reuse import loop_forward_reuse
from ndflow.passes.mark_for_compilation import mark_for_compilation
from ndflow.passes.pass_context import PassContext
from ndflow.passes.prune import prune
from ndflow.passes.shape_specialization import specialize_shapes

GraphPass = Callable[[Graph, PassContext], Graph]


@dataclass(frozen=True)
class PassSpec:
    name: str
    fn: GraphPass
    required: bool = False
    option: str | None = None  # the RewriterConfig toggle that switches the pass
    group: str | None = None   # a name switching off all the passes of a group (remapper)


PIPELINE: list[PassSpec] = [
    PassSpec("prune", prune, required=True),
    PassSpec("loop_forward_reuse", loop_forward_reuse, option="loop_optimization"),
    # the run's feed shapes, where known, before the passes that use static shapes
    PassSpec("shape_specialization", specialize_shapes),
    PassSpec("constant_folding", constant_folding, option="constant_folding"),
    PassSpec("auto_mixed_precision", auto_mixed_precision),  # its own toggles (pass_config)
    PassSpec("cse", cse, option="common_subgraph_elimination"),
    PassSpec("arithmetic_optimizer", arithmetic_optimizer, option="arithmetic_optimization"),
    *(PassSpec(name, step, option="remapping", group=remapper.GROUP)
      for name, step in remapper.STEPS),
    # Auto-clustering (TF's POST_REWRITE_FOR_EXEC passes): always part of the pipeline, they do
    # nothing unless auto-jit is on or an op asks for compilation (jit_scope, jit_compile).
    PassSpec("mark_for_compilation", mark_for_compilation, required=True),
    PassSpec("encapsulate_clusters", encapsulate_clusters, required=True),
]


def register_pass(name: str, fn: GraphPass, before: str | None = None,
                  after: str | None = None, option: str | None = None) -> None:
    """Inserts a pass into `PIPELINE` (at the end unless `before`/`after` names a pass)."""
    if any(p.name == name for p in PIPELINE):
        raise ValueError(f"A graph pass named '{name}' is already registered")
    if before is not None and after is not None:
        raise ValueError("Give at most one of `before` and `after`")
    pos = len(PIPELINE)
    anchor = before or after
    if anchor is not None:   # a group's name: before its first pass, after its last
        idx = [i for i, p in enumerate(PIPELINE) if anchor in (p.name, p.group)]
        if not idx:
            raise ValueError(f"No graph pass named '{anchor}' in the pipeline")
        pos = idx[-1] + 1 if after is not None else idx[0]
    PIPELINE.insert(pos, PassSpec(name, fn, option=option))


def pass_names() -> list[str]:
    return [p.name for p in PIPELINE]


def run_pipeline(graph: Graph, ctx: PassContext,
                 passes: list[PassSpec] | None = None) -> tuple[Graph, dict]:
    """Runs the enabled passes in order; returns (new graph, user name -> name in it)."""
    out = graph
    for spec in PIPELINE if passes is None else passes:
        if not spec.required and not ctx.config.pass_enabled(spec.name, spec.option,
                                                              spec.group):
            continue
        before = len(out.get_operations())
        result = spec.fn(out, ctx)
        if not isinstance(result, Graph):
            raise TypeError(f"Graph pass '{spec.name}' returned {type(result).__name__}, "
                            "not a Graph")
        logging.vlog("pipeline", 1, f"Graph pass {spec.name}: {before} -> "
                     f"{len(result.get_operations())} nodes")
        out = result
    if out is graph:  # no pass ran: still never hand the caller's graph to be compiled
        out, _ = graph.copy()
    return out, ctx.name_map()
