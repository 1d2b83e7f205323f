"""Which fusions fire on each model benchmark (issue 54: the fusions must fire on every model
written as users write them, not only on MNIST).

For each model of benchmarks/models/ it traces the training step (Keras `fit`'s train
function, or the custom loop's `tf.function`) at the benchmark's shapes, runs the graph pass
pipeline on it and counts, nothing being run:

- graph mode: the fused ops the passes emit (`_FusedConv2D`, `_FusedMatMul`,
  `_FusedBatchNormEx`, `_GroupedApplyAdam`, ...: op types beginning with `_`), by type;
- `jit_compile=True`: the compiled clusters, and in them the kernels the JIT generates (fusion
  groups of two or more ops, as `ndflow.jit.fusion.plan_fusions` splits each cluster at its
  static shapes) and how many ops they hold, beside the ops left as library calls.

    python benchmarks/fusion_census.py [--models resnet20,dcgan_loop] [--no-jit]

tests/test_fusion_census.py holds the floor each model must keep.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "models"))
sys.path.insert(0, HERE)

MODELS = ("resnet20", "transformer_classifier", "lstm_classifier", "tabular_mlp",
          "dcgan_loop", "raw_mlp_loop", "mnist_tf2")
_NOT_FUSIONS = {"_XlaClusterCall"}


def graph_census(graph) -> dict:
    """{fused op type: count} in an optimized graph (its functions' bodies included)."""
    counts: collections.Counter = collections.Counter()
    for op in _all_ops(graph):
        if op.type.startswith("_") and op.type not in _NOT_FUSIONS:
            counts[op.type] += 1
    return dict(sorted(counts.items()))


def jit_census(graph) -> dict:
    """Clusters of an optimized graph and the kernels the JIT generates for them."""
    from ndflow.jit import executable, fusion
    clusters = kernels = fused_ops = library = 0
    for op in _all_ops(graph):
        if op.type != "_XlaClusterCall":
            continue
        clusters += 1
        fg = op.attrs["function"]
        if not all(t.shape.is_fully_defined() for t in fg.inputs):
            continue   # shapes known only when it runs (not counted)
        specs = [(t.dtype, tuple(t.shape.as_list())) for t in fg.inputs]
        g, inputs, _ = executable.specialize_graph(fg, specs)
        ins = set(inputs)
        ops = [o for o in g.get_operations()
               if not (o.type == "Placeholder" and o.outputs[0] in ins)]
        for item in fusion.plan_fusions(ops):
            members = getattr(item, "ops", None)
            if members is None:
                library += 1
            elif len(members) >= 2:
                kernels += 1
                fused_ops += len(members)
    return {"clusters": clusters, "generated_kernels": kernels, "ops_in_kernels": fused_ops,
            "library_calls": library}


def _all_ops(graph):
    seen = set()
    stack = [graph]
    while stack:
        g = stack.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        for op in g.get_operations():
            yield op
            for value in op.attrs.values():
                if hasattr(value, "get_operations") and op.type != "_XlaClusterCall":
                    stack.append(value)   # If/While branches and bodies


def census(tf, name: str, jit: bool) -> dict:
    """The census of model `name`'s training step, in graph mode or under jit_compile."""
    import importlib

    import harness
    module = importlib.import_module(name)
    graph = harness.concrete_step(tf, module.setup(tf, jit)).optimized_graph()
    return jit_census(graph) if jit else graph_census(graph)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-jit", action="store_true")
    args = parser.parse_args()
    import ndflow as tf
    for name in args.models.split(","):
        fused = census(tf, name, False)
        print(f"{name}:\n  graph: " + ", ".join(f"{k} {v}" for k, v in fused.items()))
        if not args.no_jit:
            jit = census(tf, name, True)
            print("  jit_compile: " + ", ".join(f"{k} {v}" for k, v in jit.items()))


if __name__ == "__main__":
    main()
