"""The fusions fire on every model benchmark, not only on MNIST (issue 54): each model of
benchmarks/models/, traced at its benchmark's shapes, gets its epilogue and optimizer fusions
from the graph passes, and under `jit_compile=True` compiles into one cluster in which the JIT
generates kernels (benchmarks/fusion_census.py prints the whole census)."""

from __future__ import annotations

import os
import sys

import pytest

import ndflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))

import fusion_census  # noqa: E402

# What the graph passes must emit for each model as users write it.
GRAPH_FUSIONS = {
    "resnet20": {"_FusedConv2D", "_FusedBatchNormEx", "_FusedMatMul", "_GroupedApplyAdam"},
    "transformer_classifier": {"_FusedMatMul", "_ScaledDotProductAttention",
                               "_ScaledDotProductAttentionGrad", "_GroupedApplyAdam",
                               # its token and position embeddings' updates, as one op
                               "_GroupedSparseApplyKerasAdam", "_DropoutSelect"},
    "lstm_classifier": {"_FusedMatMul", "_GroupedApplyAdam", "_ResourceSparseApplyKerasAdam"},
    "tabular_mlp": {"_FusedMatMul", "_GroupedApplyAdam", "_DropoutSelect"},
    "dcgan_loop": {"_FusedConv2D", "_FusedMatMul", "_GroupedApplyAdam", "_DropoutSelect"},
    "raw_mlp_loop": {"_FusedMatMul", "_GroupedApplyAdam"},
    "mnist_tf2": {"_FusedConv2D", "_FusedMatMul", "_MaxPoolWithIndices",
                  "_MaxPoolGradWithIndices", "_GroupedApplyMomentum", "_DropoutSelect"},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", fusion_census.MODELS)
def test_fusions_fire_on_each_benchmark_model(name):
    fused = fusion_census.census(tf, name, jit=False)
    assert GRAPH_FUSIONS[name] <= set(fused), fused
    jit = fusion_census.census(tf, name, jit=True)
    assert jit["clusters"] == 1, jit
    # the JIT generates kernels of several ops in each model (elementwise chains, reductions
    # with their producers, the optimizer's and the loss's math)
    assert jit["generated_kernels"] >= 4 and jit["ops_in_kernels"] >= 2 * jit[
        "generated_kernels"], jit
