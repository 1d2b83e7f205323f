"""Auto mixed precision: lists and their env edits, LEVEL, log-path dumps, VLOG lines,
custom ops, switches (ConfigProto, tf.config.optimizer, NVIDIA variables)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from tensorboard.compat.proto import graph_pb2

import ndflow as tf
from ndflow.core import optimizer_options
from ndflow.core.graph import Graph
from ndflow.passes.amp import device as amp_device
from ndflow.passes.amp import lists as amp_lists
from ndflow.passes.amp.auto_mixed_precision import auto_mixed_precision
from ndflow.passes.amp.lists import AmpListError, Mode
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.passes.pass_context import PassContext
from ndflow.runtime.config_proto import ConfigProto, RewriterConfig
from tests.passes.amp_helpers import B, F, H, casts, const, op, run_amp, type_attrs

ENV = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for k in list(os.environ):
        if k.startswith(ENV) or k.startswith("TF_ENABLE_AUTO_MIXED") or k == "TF_CPP_VMODULE":
            monkeypatch.delenv(k)
    optimizer_options.reset()
    yield
    optimizer_options.reset()


def _chain(middle: str = "Exp", device: str = ""):
    """input -> MatMul a1 -> <middle> m -> MatMul a2 -> fetch (all on `device`)."""
    g = Graph()
    with g.as_default(), tf.device(device):
        x = const("input")
        a1 = op("MatMul", x, x, name="a1")
        m = op(middle, a1, name="m")
        a2 = op("MatMul", m, m, name="a2")
        op("Identity", a2, name="fetch")
    return g


# -- lists -----------------------------------------------------------------------------------

def test_lists_match_the_reference():
    cuda = amp_lists.base_lists(Mode.CUDA, 9010, 0)
    assert {"BatchMatMulV2", "MatMul", "Conv2D", "CudnnRNN"} <= cuda.allow
    assert "Conv3D" not in cuda.allow and "DepthwiseConv2dNative" not in cuda.allow
    assert {"Conv3D", "DepthwiseConv2dNative"} <= amp_lists.base_lists(Mode.CUDA, 0, 8000).allow
    assert "BatchMatMul" not in amp_lists.base_lists(Mode.CUDA, 9000, 0).allow
    bf16 = amp_lists.base_lists(Mode.BF16)
    assert {"Mean", "Sum", "Rsqrt", "Square"} <= bf16.infer and "Mean" not in bf16.deny
    assert "OneHot" not in bf16.clear and "ScatterNd" in bf16.clear
    assert "CudnnRNN" not in bf16.allow
    cpu16 = amp_lists.base_lists(Mode.FP16_CPU)
    assert "CudnnRNN" not in cpu16.allow and "Conv3D" in cpu16.allow and "Square" in cpu16.infer
    assert len(cuda.infer) == 43 and len(cuda.deny) == 9


def test_env_add_remove_and_legacy_names(monkeypatch):
    monkeypatch.setenv(ENV + "ALLOWLIST_ADD", "Exp,NdflowTestCustomOp")
    monkeypatch.setenv(ENV + "DENYLIST_REMOVE", "Exp")
    monkeypatch.setenv(ENV + "WHITELIST_REMOVE", "MatMul")
    monkeypatch.setenv(ENV + "GRAYLIST_ADD", "Foo")
    lists = amp_lists.amp_lists(Mode.CUDA, 9010, 0)
    assert "Exp" in lists.allow and "Exp" not in lists.deny
    assert "MatMul" not in lists.allow and "Foo" in lists.infer


def test_env_values_are_not_trimmed(monkeypatch):
    monkeypatch.setenv(ENV + "CLEARLIST_ADD", "Exp, Log")   # " Log": no conflict with INFER
    monkeypatch.setenv(ENV + "DENYLIST_REMOVE", "Exp")
    lists = amp_lists.amp_lists(Mode.CUDA)
    assert " Log" in lists.clear and "Log" in lists.infer and "Exp" in lists.clear


def test_conflicting_lists_leave_graph_unchanged_with_warning(monkeypatch, capsys):
    monkeypatch.setenv(ENV + "ALLOWLIST_ADD", "Exp")   # Exp stays on DENY too
    with pytest.raises(AmpListError, match="Op lists have conflicting entries"):
        amp_lists.amp_lists(Mode.CUDA)
    g = _chain()
    out = run_amp(g, ["fetch"])
    assert out is g
    err = capsys.readouterr().err
    assert "Op present in multiple lists: Exp" in err
    assert "auto_mixed_precision graph optimizer FAILED: INVALID_ARGUMENT: Op lists have " \
           "conflicting entries" in err


@pytest.mark.parametrize("level, a1, m, a2", [
    ("", H, H, H), ("tensor_cores_only", H, F, H), ("TREAT_INFER_AS_DENY", H, F, H),
    ("UNSAFE_FORCE_ALL", H, H, H), ("bogus", H, H, H)])
def test_level(monkeypatch, level, a1, m, a2):
    monkeypatch.setenv(ENV + "LEVEL", level)
    out = run_amp(_chain("Tanh"), ["fetch"])
    got = [type_attrs(out, n)["T"] for n in ("a1", "m", "a2")]
    assert got == [a1, m, a2]


def test_unsafe_force_all_paints_deny_ops_and_fails_in_bf16(monkeypatch, capsys):
    monkeypatch.setenv(ENV + "LEVEL", "UNSAFE_FORCE_ALL")
    out = run_amp(_chain("Exp"), ["fetch"])
    assert type_attrs(out, "m")["T"] is H
    g = _chain("Exp")
    assert run_amp(g, ["fetch"], mode=Mode.BF16, gpu=None) is g
    assert "cannot be set to UNSAFE_FORCE_ALL" in capsys.readouterr().err


# -- custom ops ------------------------------------------------------------------------------

def test_custom_op_is_left_alone_with_casts_and_movable_onto_a_list(monkeypatch):
    out = run_amp(_chain("NdflowTestCustomOp"), ["fetch"])
    assert type_attrs(out, "m")["T"] is F
    assert len(casts(out)) == 4    # input->a1, a1->m, m->a2, a2->fetch
    monkeypatch.setenv(ENV + "INFERLIST_ADD", "NdflowTestCustomOp")
    out = run_amp(_chain("NdflowTestCustomOp"), ["fetch"])
    assert type_attrs(out, "m")["T"] is H and len(casts(out)) == 2


# -- diagnostics -----------------------------------------------------------------------------

def test_log_path_dumps_are_protobuf_readable(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV + "LOG_PATH", str(tmp_path))
    g = _chain("Tanh")
    out = run_amp(g, ["fetch"])
    names = sorted(os.listdir(tmp_path))
    assert [n.split("_")[0] + "_" + n.split("_")[1] for n in names] == [
        "graphdef_AutoMixedPrecision", "graphdef_AutoMixedPrecision", "graphdef_preop",
        "graphdef_preop", "paintbuckets_AutoMixedPrecision"]
    post = [n for n in names if n.startswith("graphdef_Auto") and n.endswith(".pb")][0]
    assert "_tf_graph_" in post
    gd = graph_pb2.GraphDef()
    gd.ParseFromString((tmp_path / post).read_bytes())
    assert len(gd.node) == len(out.get_operations())
    pre = [n for n in names if n.startswith("graphdef_preop") and n.endswith(".pb.txt")][0]
    from google.protobuf import text_format
    gd2 = text_format.Parse((tmp_path / pre).read_text(), graph_pb2.GraphDef())
    assert len(gd2.node) == len(g.get_operations())
    buckets = (tmp_path / [n for n in names if n.startswith("paint")][0]).read_text()
    for section in ("AllowList:", "DenyList:", "InferList:", "ClearList:"):
        assert section in buckets
    assert "\nMatMul\n" in buckets


def test_log_path_missing_directory_warns_and_rewrites(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(ENV + "LOG_PATH", str(tmp_path / "missing"))
    out = run_amp(_chain("Tanh"), ["fetch"])
    assert type_attrs(out, "a1")["T"] is H
    assert "Could not write" in capsys.readouterr().err


def test_vlog_painting_lines_and_converted_line(monkeypatch, capsys):
    monkeypatch.setenv("TF_CPP_VMODULE", "auto_mixed_precision=2")
    run_amp(_chain("Exp"), ["fetch"])
    err = capsys.readouterr().err
    for line in ("Identifying nodes that should be processed",
                 "Skipping Identity node fetch because it must be preserved",
                 "Beginning pass 1 to add allowlist ops",
                 "Painting type T of node a1 ALLOW because its op MatMul is on the allowlist",
                 "Painting type T of Exp node m DENY",
                 "Beginning pass 5 to propagate allow from allow nodes through clearlist ops",
                 "Finding existing casts that can be made allow",
                 "Converted 2/5 nodes to float16 precision using 1 cast(s) to float16 "
                 "(excluding Const and Variable casts)"):
        assert line in err, line
    assert "Beginning pass 4" not in err      # bf16 only


def test_bf16_converted_line(capsys):
    run_amp(_chain("Tanh"), ["fetch"], mode=Mode.BF16, gpu=None)
    assert "Converted 3/5 nodes to bfloat16 precision using 0 cast(s) to bfloat16" in \
        capsys.readouterr().err


def test_cpu_emulation_mode_keeps_float32_and_rounds_at_boundaries():
    out = run_amp(_chain("Tanh"), ["fetch"], mode=Mode.CPU, gpu=None)
    assert [type_attrs(out, n)["T"] for n in ("a1", "m", "a2")] == [F, F, F]
    kinds = {(o.attrs["SrcT"], o.attrs["DstT"]) for o in out.get_operations()
             if o.type == "Cast"}
    assert kinds == {(F, H), (H, F)}
    assert out.get_operation_by_name("m").inputs[0].op.type == "Cast"


# -- switches --------------------------------------------------------------------------------

def _ctx(session_config=None, **overrides):
    """A PassContext whose config is resolved as a graph run with `session_config` (a
    ConfigProto, None for tf.function) would get it, with test overrides applied."""
    config = dataclasses.replace(resolve_pass_config(session_config), **overrides)
    return PassContext(fetches=["fetch:0"], config=config)


def test_off_by_default_and_small_graphs_skipped():
    g = _chain("Tanh")
    assert auto_mixed_precision(g, _ctx()) is g
    optimizer_options.set_experimental_options({"auto_mixed_precision_onednn_bfloat16": True})
    assert type_attrs(auto_mixed_precision(g, _ctx()), "a1")["T"] is B
    optimizer_options.set_experimental_options({"min_graph_nodes": 6})
    assert auto_mixed_precision(g, _ctx()) is g


@pytest.mark.parametrize("env,flags,converts", [
    ("0", {"avx512_bf16", "avx512_vnni"}, False),   # switched off on any CPU
    ("1", {"avx2"}, True),                           # switched on on any CPU
    (None, {"avx2", "fma"}, False),                  # AVX2-only: TensorFlow's default is off
    (None, {"avx512f", "avx512_vnni"}, True),        # Cascade Lake: on
    (None, {"amx_tile", "amx_bf16"}, True),
])
def test_onednn_bfloat16_rewrite_needs_onednn_opts(monkeypatch, env, flags, converts):
    """TensorFlow registers auto_mixed_precision_onednn_bfloat16 only when IsMKLEnabled():
    TF_ENABLE_ONEDNN_OPTS, by default on for CPUs with AVX512_VNNI/AVX512_BF16/AVX_VNNI/AMX."""
    if env is None:
        monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    else:
        monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", env)
    monkeypatch.setattr(amp_device, "cpu_flags", lambda: frozenset(flags))
    g = _chain("Tanh")
    cfg = ConfigProto()
    cfg.graph_options.rewrite_options.auto_mixed_precision_onednn_bfloat16 = RewriterConfig.ON
    out = auto_mixed_precision(g, _ctx(cfg))
    assert (out is not g) is converts
    if converts:
        assert type_attrs(out, "a1")["T"] is B


def test_session_rewriter_config_and_global_flag(monkeypatch):
    g = _chain("Tanh")
    cfg = ConfigProto()
    rw = cfg.graph_options.rewrite_options
    rw.auto_mixed_precision_onednn_bfloat16 = RewriterConfig.ON
    assert type_attrs(auto_mixed_precision(g, _ctx(cfg)), "a1")["T"] is B
    rw.auto_mixed_precision_onednn_bfloat16 = RewriterConfig.DEFAULT
    assert auto_mixed_precision(g, _ctx(cfg)) is g
    optimizer_options.set_mixed_precision_graph_rewrite_enabled(True)
    # no GPU here: ndflow's policy converts CPU nodes to bf16 when the CPU has bf16 units
    out = auto_mixed_precision(g, _ctx(cfg, auto_mixed_precision_gpu={}))
    assert (out is not g) == amp_device.cpu_has_bf16_units()
    rw.auto_mixed_precision = RewriterConfig.OFF
    assert auto_mixed_precision(g, _ctx(cfg)) is g


def test_a_real_gpu_converts_only_the_ops_placed_on_it(monkeypatch):
    # ndflow runs ops without a device on the CPU, also beside a GPU: the float16 rewrite
    # leaves them alone (a virtual GPU, TF's test device, takes them as TF's placer would)
    real = amp_device.GpuProperties((8, 0), 11050, 8302, virtual=False)
    monkeypatch.setattr(amp_device, "detect_gpu", lambda: real)
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: False)
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    unplaced = _chain("Tanh")
    assert auto_mixed_precision(unplaced, _ctx()) is unplaced
    assert type_attrs(auto_mixed_precision(_chain("Tanh", "/GPU:0"), _ctx()), "a1")["T"] is H
    # with bf16 units, the CPU's ops get the bfloat16 rewrite beside the GPU's float16 one
    monkeypatch.setattr(amp_device, "cpu_has_bf16_units", lambda: True)
    assert type_attrs(auto_mixed_precision(unplaced, _ctx()), "a1")["T"] is B
    virtual = {"architecture": "8.0", "cuda": 11050}
    assert type_attrs(auto_mixed_precision(unplaced, _ctx(auto_mixed_precision_gpu=virtual)),
                      "a1")["T"] is H


def test_nvidia_variables_precedence(monkeypatch):
    g = _chain("Tanh")
    gpu = {"auto_mixed_precision_gpu": {"architecture": "8.0", "cuda": 11050}}
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    assert type_attrs(auto_mixed_precision(g, _ctx(**gpu)), "a1")["T"] is H
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "0")
    assert auto_mixed_precision(g, _ctx(**gpu)) is g
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "0")
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "1")
    assert type_attrs(auto_mixed_precision(g, _ctx(**gpu)), "a1")["T"] is H
    optimizer_options.set_experimental_options({"auto_mixed_precision": False})
    assert auto_mixed_precision(g, _ctx(**gpu)) is g
    old_gpu = {"auto_mixed_precision_gpu": {"architecture": "6.1"}}
    optimizer_options.set_experimental_options({"auto_mixed_precision": True})
    out = auto_mixed_precision(g, _ctx(**old_gpu))   # Pascal: not suitable -> CPU policy
    assert out is g or type_attrs(out, "a1")["T"] is not H


def test_optimizer_options_api():
    import ndflow as tf
    tf.config.optimizer.set_experimental_options({"auto_mixed_precision": 1, "bogus": 3,
                                                  "min_graph_nodes": 2})
    assert tf.config.optimizer.get_experimental_options() == {
        "disable_model_pruning": False, "auto_mixed_precision": True,
        "disable_meta_optimizer": False, "min_graph_nodes": 2}
    assert tf.config.optimizer.get_jit() == ""
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() == "autoclustering"
    with pytest.raises(TypeError):
        tf.config.optimizer.set_experimental_options({"min_graph_nodes": "4"})
