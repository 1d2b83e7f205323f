"""Auto mixed precision: the acceptance cases of TF's auto_mixed_precision_test.cc
(reference amp.md section 5). "h" float16, "f" float32; fetches are preserved."""

from __future__ import annotations

import pytest

from ndflow.core.graph import Graph
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import lookup
from ndflow.passes.amp.lists import Mode
from tests.passes.amp_helpers import B, F, H, casts, const, op, ph, run_amp, type_attrs


def _dtypes(graph, expected: dict):
    for name, want in expected.items():
        got = type_attrs(graph, name)
        if isinstance(want, dict):
            for attr, dt in want.items():
                assert got[attr] is dt, (name, attr, got)
        else:
            assert got["T"] is want, (name, got)


def test_case1_no_allow_op_leaves_graph_unchanged():
    g = Graph()
    with g.as_default():
        x = const("input")
        d = op("Exp", x, name="deny1")
        c = op("Relu", d, name="clr1")
        i = op("Sqrt", c, name="infer1")
        c2 = op("Relu", i, name="clr2")
        op("Identity", c2, name="fetch")
    out = run_amp(g, ["fetch"])
    assert out is g
    _dtypes(out, {n: F for n in ("deny1", "clr1", "infer1", "clr2", "fetch")})


def test_case2_already_fp16_is_untouched():
    g = Graph()
    with g.as_default():
        x = const("input")
        c1 = op("Cast", x, name="cst1", DstT=H)
        a = op("MatMul", c1, c1, name="allow1")
        r = op("Relu", a, name="clr1")
        c2 = op("Cast", r, name="cst2", DstT=F)
        r2 = op("Relu", c2, name="clr2")
        op("Identity", r2, name="fetch")
    out = run_amp(g, ["fetch"])
    assert casts(out) == []
    assert len(out.get_operations()) == len(g.get_operations())
    _dtypes(out, {"cst1": {"SrcT": F, "DstT": H}, "allow1": H, "clr1": H,
                  "cst2": {"SrcT": H, "DstT": F}, "clr2": F})


def test_case3_simple():
    g = Graph()
    with g.as_default():
        x = const("input")
        d1 = op("Exp", x, name="deny1")
        c1 = op("Relu", d1, name="clr1")
        i1 = op("Sqrt", c1, name="infer1")
        c2 = op("Relu", i1, name="clr2")
        a1 = op("MatMul", c2, c2, name="allow1")
        c3 = op("Relu", a1, name="clr3")
        i2 = op("Log", c3, name="infer2")
        c4 = op("Relu", i2, name="clr4")
        d2 = op("SparseMatMul", c4, c4, name="deny2")
        c5 = op("Relu", d2, name="clr5")
        op("Identity", c5, name="fetch")
    out = run_amp(g, ["fetch"])
    assert len(out.get_operations()) == len(g.get_operations()) + 2
    _dtypes(out, {"deny1": F, "clr1": F, "infer1": F, "clr2": H, "allow1": H, "clr3": H,
                  "infer2": F, "clr4": F, "deny2": {"Ta": F, "Tb": F}, "clr5": F})
    assert sorted(casts(out)) == ["clr3-0-CastToFp32-0-AutoMixedPrecision",
                                  "infer1-0-CastToFp16-0-AutoMixedPrecision"]
    assert [t.op.name for t in out.get_operation_by_name("allow1").inputs] == ["clr2", "clr2"]
    assert out.get_operation_by_name("clr2").inputs[0].op.name == \
        "infer1-0-CastToFp16-0-AutoMixedPrecision"


def test_case4_fetched_nodes_are_preserved():
    g = Graph()
    with g.as_default():
        x = const("input")
        a1 = op("MatMul", x, x, name="allow1")
        c1 = op("Relu", a1, name="clr1")
        i1 = op("Sqrt", c1, name="infer1")
        d1 = op("Exp", i1, name="deny1")
        c2 = op("Relu", d1, name="clr2")
        a2 = op("MatMul", c2, c2, name="allow2")
        c3 = op("Relu", a2, name="clr3")
        d2 = op("Exp", c3, name="deny2")
        op("Relu", d2, name="clr4")
    out = run_amp(g, ["allow1", "clr2", "clr3"])
    assert len(out.get_operations()) == len(g.get_operations()) + 2
    _dtypes(out, {"allow1": F, "clr1": F, "infer1": F, "deny1": F, "clr2": F, "allow2": H,
                  "clr3": F, "deny2": F, "clr4": F})


def test_case5_cpu_nodes_are_not_processed_in_cuda_mode():
    g = Graph()
    with g.as_default():
        x = const("input")
        c1 = op("Relu", x, name="clr1")
        a1 = op("MatMul", c1, c1, name="allow1")
        i1 = op("Tanh", a1, name="infer1")
        with g.device("/cpu:0"):
            a2 = op("MatMul", i1, i1, name="allow2")
        c2 = op("Relu", a2, name="clr2")
        op("Identity", c2, name="fetch")
    out = run_amp(g, ["fetch"])
    assert len(out.get_operations()) == len(g.get_operations()) + 2
    _dtypes(out, {"clr1": H, "allow1": H, "infer1": F, "allow2": F, "clr2": F})


def test_case6_fused_batch_norm_becomes_v2_with_u_float():
    g = Graph()
    with g.as_default():
        x = const("input", shape=(8, 56, 56, 16))
        w = const("weight", 2.0, (3, 3, 16, 16))
        scale = const("scale", 3.0, (16,))
        offset = const("offset", 4.0, (16,))
        mean = const("mean", 5.0, (0,))
        var = const("variance", 6.0, (0,))
        conv = dict(strides=[1, 1, 1, 1], padding="SAME", data_format="NHWC")
        a1 = op("Conv2D", x, w, name="allow1", **conv)
        fbn = apply_op(lookup("FusedBatchNorm"), [a1, scale, offset, mean, var],
                       {"data_format": "NHWC"}, name="fbn1")
        y, rs1, rs2 = fbn.outputs[0], fbn.outputs[3], fbn.outputs[4]
        bng = op("FusedBatchNormGrad", y, a1, scale, rs1, rs2, name="bng1",
                 data_format="NHWC")
        i1 = op("Add", y, bng, name="infer1")
        a2 = op("Conv2D", i1, w, name="allow2", **conv)
        op("Identity", a2, name="fetch")
    out = run_amp(g, ["fetch"])
    assert len(out.get_operations()) == len(g.get_operations()) + 3
    assert out.get_operation_by_name("fbn1").type == "FusedBatchNormV2"
    assert out.get_operation_by_name("bng1").type == "FusedBatchNormGradV2"
    _dtypes(out, {"allow1": H, "fbn1": {"T": H, "U": F}, "bng1": {"T": H, "U": F},
                  "infer1": H, "allow2": H})
    weight_cast = "weight-0-CastToFp16-0-AutoMixedPrecision"
    for conv_name in ("allow1", "allow2"):
        assert out.get_operation_by_name(conv_name).inputs[1].op.name == weight_cast


def test_case7_existing_cast_is_reused():
    g = Graph()
    with g.as_default():
        x = const("input", True, dtype=bool)
        c = op("Cast", x, name="cst1", DstT=F)
        a = op("MatMul", c, c, name="allow1")
        op("Identity", a, name="fetch")
    out = run_amp(g, ["fetch"])
    assert len(out.get_operations()) == len(g.get_operations()) + 1
    _dtypes(out, {"cst1": {"DstT": H}, "allow1": H})
    assert [t.op.name for t in out.get_operation_by_name("allow1").inputs] == ["cst1", "cst1"]


@pytest.mark.parametrize("infer_op", ["Elu", "Erf", "Erfc", "Inv", "Log", "Log1p",
                                      "LogSoftmax", "Reciprocal", "Sigmoid", "Softmax",
                                      "Softplus", "Sqrt", "Tanh"])
def test_case8_unary_infer_op_between_allow_ops(infer_op):
    g = Graph()
    with g.as_default():
        x = ph("input")
        a1 = op("MatMul", x, x, name="allow1")
        i1 = op(infer_op, a1, name="infer1")
        a2 = op("MatMul", i1, i1, name="allow2")
        op("Identity", a2, name="fetch1")
    out = run_amp(g, ["fetch1"])
    _dtypes(out, {"allow1": H, "infer1": H, "allow2": H})
    assert len(casts(out)) == 2


def _conv_bias_relu(first: str):
    g = Graph()
    with g.as_default():
        x = const("input1", shape=(8, 56, 56, 16))
        if first == "Conv2D":
            w = const("weight", 2.0, (3, 3, 16, 16))
            a = op("Conv2D", x, w, name="allow", strides=[1, 1, 1, 1], padding="SAME")
        else:
            a = op("Pow", x, const("input2", shape=(16,)), name="deny")
        i = op("BiasAdd", a, const("input3", shape=(16,)), name="infer")
        c = op("Relu", i, name="clr")
        op("Identity", c, name="fetch")
    return g


def test_case9_bf16_infer_follows_upstream_allow():
    g = _conv_bias_relu("Conv2D")
    out = run_amp(g, ["fetch"], mode=Mode.BF16, gpu=None)
    assert len(out.get_operations()) == len(g.get_operations()) + 4
    _dtypes(out, {"allow": B, "infer": B, "clr": B, "fetch": F})


def test_case9_bf16_infer_after_deny_stays_float():
    g = _conv_bias_relu("Pow")
    out = run_amp(g, ["fetch"], mode=Mode.BF16, gpu=None)
    assert len(out.get_operations()) == len(g.get_operations())
    _dtypes(out, {"deny": F, "infer": F, "clr": F})
