"""The profile's numbers: FLOPs/bytes from shapes, the reduced-precision report and its
reasons, recommendations from the data, and profiling-off leaving plans untouched."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.passes.amp import device as amp_device
from ndflow.profiler import advice, analysis, op_costs, precision, recorder
from ndflow.runtime import plan as plan_module


def test_flops_and_bytes_from_shapes():
    assert op_costs.flops("MatMul", [[8, 5], [5, 3]], [[8, 3]], {}) == 2 * 8 * 3 * 5
    # transpose_a: a is [K, M]
    assert op_costs.matmul_dims("MatMul", [[5, 8], [5, 3]], {"transpose_a": True}) == \
        {"M": 8, "N": 3, "K": 5}
    assert op_costs.flops("BatchMatMulV2", [[4, 8, 5], [4, 5, 3]], [[4, 8, 3]], {}) == \
        4 * 2 * 8 * 3 * 5
    # Conv2D NHWC 1x6x6x3, filter 3x3x3x16 -> 1x6x6x16: 2 * 576 * 27
    assert op_costs.flops("Conv2D", [[1, 6, 6, 3], [3, 3, 3, 16]], [[1, 6, 6, 16]], {}) == \
        2 * 576 * 27
    # the filter gradient does the forward's multiply-adds over out_backprop
    assert op_costs.flops("Conv2DBackpropFilter", [[1, 6, 6, 3], [4], [1, 6, 6, 16]],
                          [[3, 3, 3, 16]], {}) == 2 * 576 * 27
    assert op_costs.flops("Relu", [[10, 10]], [[10, 10]], {}) == 100
    assert op_costs.flops("Sum", [[10, 10], [2]], [[]], {}) == 100
    assert op_costs.flops("Reshape", [[10, 10], [1]], [[100]], {}) == 0
    assert op_costs.nbytes([[10, 10], [2]], ["float32", "int32"]) == 408
    assert op_costs.tensor_core_dims("Conv2D", [[1, 6, 6, 3], [3, 3, 3, 16]], [], {}) == \
        {"C": 3, "K": 16}


@pytest.fixture
def options():
    optimizer_options.reset()
    yield optimizer_options
    optimizer_options.reset()


def _profile_function(fn, *args, calls=3):
    fn(*args)
    window = recorder.Window()
    try:
        for _ in range(calls):
            fn(*args)
    finally:
        cap = window.close()
    return analysis.analyze(cap)


def _matmul_fn():
    @tf.function
    def f(x, w):
        return tf.nn.relu(tf.matmul(x, w))
    return f, tf.constant(np.ones((16, 12), np.float32)), tf.constant(np.ones((12, 10),
                                                                              np.float32))


def test_reduced_precision_report_amp_off_and_bf16(options):
    f, x, w = _matmul_fn()
    prof = _profile_function(f, x, w)
    report = precision.report(prof)
    [mm] = report["nodes"]
    assert mm["op_type"] == "MatMul" and mm["dtype"] == "float32"
    assert mm["reason"].startswith("rewrite off") and report["reduced_share"] == 0.0
    # the oneDNN bfloat16 rewrite forced on: the MatMul runs in bfloat16 (casts around it)
    options.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True})
    f, x, w = _matmul_fn()
    prof = _profile_function(f, x, w)
    report = precision.report(prof)
    [mm] = report["nodes"]
    assert mm["dtype"] == "bfloat16" and mm["reduced_precision"] and mm["reason"] == ""
    assert report["reduced_share"] == 1.0
    assert "Cast" in {r["op_type"] for r in prof.op_types()}  # the rewrite's casts show


def test_reasons_for_gpu_dims_and_cpu_without_bf16(monkeypatch):
    def node(dev, dtype, shapes, amp):
        return recorder.NodeInfo(0, "p", 0, "mm", "MatMul", dev, "k", {}, shapes,
                                 ["x", "x"], [[shapes[0][0], shapes[1][1]]], [dtype], amp)

    class Fake:
        def __init__(self, n):
            self.top_nodes = [analysis.NodeStats(n, count=1, total_ns=1000)]
            self.node_ns = 1000
    gpu = node("cuda:0", "float16", [[30, 64], [64, 10]], {"enabled": True})
    [row] = precision.report(Fake(gpu))["nodes"]
    assert row["reduced_precision"] and not row["tensor_core_dims"]
    assert "not on Tensor Cores" in row["reason"] and "M=30" in row["reason"]
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: False)
    cpu = node("cpu", "float32", [[32, 64], [64, 16]], {"enabled": True})
    [row] = precision.report(Fake(cpu))["nodes"]
    assert row["reason"].startswith("no bf16 units on this CPU")
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: True)
    [row] = precision.report(Fake(cpu))["nodes"]
    assert row["reason"].startswith("kept in float32 by the rewrite")


def test_recommendations_follow_the_data(monkeypatch):
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)

    @tf.function
    def elementwise(x):
        return tf.tanh(tf.tanh(x * 1.5 + 0.5) * 2.0)
    prof = _profile_function(elementwise, tf.constant(np.ones((32, 32), np.float32)))
    recs = advice.recommendations(prof, precision.report(prof))
    assert any("TF_XLA_FLAGS=--tf_xla_auto_jit=2" in r for r in recs)
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2")
    assert not any("tf_xla_auto_jit" in r for r in advice.recommendations(
        prof, precision.report(prof)))
    f, x, w = _matmul_fn()  # N=10 is not a multiple of 8
    prof = _profile_function(f, x, w)
    recs = advice.recommendations(prof, precision.report(prof))
    assert any(r.startswith("1 MatMul node(s)") and "N=10" in r for r in recs)


def test_profiling_off_runs_the_plain_generated_code():
    f, x, w = _matmul_fn()
    f(x, w)
    plan = f.get_concrete_function(x, w)._build_plan()
    assert plan_module._profiler is None
    assert "clock" not in plan.source and "append" not in plan.source
    window = recorder.Window()
    assert plan_module._profiler is recorder.active_recorder()
    f(x, w)
    window.close()
    assert plan_module._profiler is None and recorder.active_recorder() is None
    assert plan._run is not None and "clock" not in plan.source  # the plain code is untouched
