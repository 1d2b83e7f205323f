"""ndflow.core.config: TensorFlow's parsing of the NVIDIA container's variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndflow.core import config

BOOL_VARS = [
    "TF_ENABLE_AUTO_MIXED_PRECISION", "TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE",
    "TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "TF_ENABLE_NHWC", "TF_DISABLE_NVTX_RANGES",
    "TF_ENABLE_NVTX_RANGES", "TF_CUDNN_USE_AUTOTUNE", "TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32",
    "TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32", "TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32",
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in config.VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("value,expected", [
    ("1", True), ("true", True), ("TRUE", True), ("True", True), ("tRuE", True),
    ("0", False), ("false", False), ("FALSE", False), ("False", False),
])
def test_bool_accepts_tf_spellings(monkeypatch, value, expected):
    monkeypatch.setenv("TF_ENABLE_NHWC", value)
    assert config.env_bool("TF_ENABLE_NHWC", not expected) is expected
    assert config.get(config.TF_ENABLE_NHWC) is expected


@pytest.mark.parametrize("value", ["", "yes", "no", "on", "off", "2", "-1", " 1", "1 ", "t"])
def test_bool_rejects_everything_else(monkeypatch, value):
    monkeypatch.setenv("TF_ENABLE_NHWC", value)
    with pytest.raises(ValueError, match=r"TF_ENABLE_NHWC.*bool"):
        config.get(config.TF_ENABLE_NHWC)


def test_bool_default_when_unset():
    assert config.env_bool("TF_ENABLE_NHWC", True) is True
    assert config.env_bool("TF_ENABLE_NHWC", False) is False


def test_declared_bools_are_bools():
    for name in BOOL_VARS:
        assert config.VARIABLES[name].kind == "bool", name


@pytest.mark.parametrize("name", BOOL_VARS)
def test_every_bool_variable_validated_by_snapshot(monkeypatch, name):
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ValueError, match=name):
        config.snapshot()


def test_defaults_match_the_container():
    values = config.snapshot()
    assert values["TF_ENABLE_AUTO_MIXED_PRECISION"] is False
    assert values["TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE"] is False
    assert values["TF_CUDNN_USE_AUTOTUNE"] is True
    assert values["TF_ENABLE_NVTX_RANGES"] is True  # on by default, as in NVIDIA's build
    assert values["TF_NUM_INTEROP_THREADS"] == 0
    assert values["TF_CPP_MIN_LOG_LEVEL"] == 0
    assert values["TF_CPP_VMODULE"] == {}
    assert values["TF_XLA_FLAGS"] == "" and values["XLA_FLAGS"] == ""


def test_amp_umbrella_switch_and_overrides(monkeypatch):
    assert not config.auto_mixed_precision_graph_rewrite()
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION", "1")
    assert config.auto_mixed_precision_graph_rewrite()
    assert config.auto_mixed_precision_loss_scaling()
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "0")
    assert config.auto_mixed_precision_graph_rewrite()
    assert not config.auto_mixed_precision_loss_scaling()
    monkeypatch.delenv("TF_ENABLE_AUTO_MIXED_PRECISION")
    monkeypatch.setenv("TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "true")
    assert config.auto_mixed_precision_graph_rewrite()
    assert not config.auto_mixed_precision_loss_scaling()


def test_nvtx_disable_wins(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_NVTX_RANGES", "1")
    assert config.nvtx_ranges_enabled()
    monkeypatch.setenv("TF_DISABLE_NVTX_RANGES", "1")
    assert not config.nvtx_ranges_enabled()


@pytest.mark.parametrize("value,expected", [("4", 4), ("0", 0), (" 8 ", 8), ("+2", 2)])
def test_int_parsing(monkeypatch, value, expected):
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", value)
    assert config.num_intraop_threads() == expected


@pytest.mark.parametrize("value", ["", "four", "4.0", "1_000", "0x10", "4 threads"])
def test_int_rejects_malformed(monkeypatch, value):
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", value)
    with pytest.raises(ValueError, match="TF_NUM_INTEROP_THREADS"):
        config.get(config.TF_NUM_INTEROP_THREADS)


def test_int_minimum(monkeypatch):
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "-1")
    assert config.get(config.TF_NUM_INTEROP_THREADS) == -1  # caller's thread, as ConfigProto
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "-1")
    with pytest.raises(ValueError, match="TF_NUM_INTRAOP_THREADS.*at least 0"):
        config.num_intraop_threads()
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "-2")
    with pytest.raises(ValueError, match="TF_CPP_MIN_LOG_LEVEL"):
        config.min_log_level()


def test_env_read_at_call_time(monkeypatch):
    assert config.min_log_level() == 0
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    assert config.min_log_level() == 2
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    assert config.min_log_level() == 3


def test_parse_vmodule():
    assert config.parse_vmodule("") == {}
    assert config.parse_vmodule("plan=2,constant_folding=1") == {"plan": 2, "constant_folding": 1}
    assert config.parse_vmodule("a=1,,b=3,") == {"a": 1, "b": 3}
    assert config.parse_vmodule("a=1,a=4") == {"a": 4}
    for bad in ("plan", "plan=x", "=2", "plan=2,cse", "plan:2"):
        with pytest.raises(ValueError, match="TF_CPP_VMODULE"):
            config.parse_vmodule(bad)


def test_vmodule_level(monkeypatch):
    monkeypatch.setenv("TF_CPP_VMODULE", "constant_folding=2,plan=1")
    assert config.vmodule() == {"constant_folding": 2, "plan": 1}
    assert config.vmodule_level("ndflow.passes.constant_folding") == 2
    assert config.vmodule_level("ndflow/passes/constant_folding.py") == 2
    assert config.vmodule_level("constant_folding") == 2
    assert config.vmodule_level("ndflow.runtime.plan") == 1
    assert config.vmodule_level("ndflow.passes.cse") == 0
    monkeypatch.setenv("TF_CPP_MIN_VLOG_LEVEL", "3")
    assert config.vmodule_level("ndflow.passes.cse") == 3
    assert config.vmodule_level("ndflow.passes.constant_folding") == 3  # max of both
    assert config.vlog_is_on("ndflow.runtime.plan", 3)
    assert not config.vlog_is_on("ndflow.runtime.plan", 4)


def test_max_vlog_level_wins_over_min(monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_VLOG_LEVEL", "1")
    assert config.max_vlog_level() == 1
    monkeypatch.setenv("TF_CPP_MAX_VLOG_LEVEL", "4")
    assert config.max_vlog_level() == 4


def test_xla_flags_kept_raw(monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit")
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    assert config.get(config.TF_XLA_FLAGS) == "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"
    assert config.get(config.XLA_FLAGS) == "--xla_dump_to=/tmp/x"


def test_amp_level(monkeypatch):
    """TF's auto_mixed_precision_lists.h: the upper-cased value compared with the level names;
    anything else is the default level (reported to the pass, which warns)."""
    assert config.auto_mixed_precision_level() == ""
    for value, level in (("treat_infer_as_deny", "TREAT_INFER_AS_DENY"),
                         ("Tensor_Cores_Only", "TENSOR_CORES_ONLY"),
                         ("UNSAFE_FORCE_ALL", "UNSAFE_FORCE_ALL")):
        monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", value)
        assert config.auto_mixed_precision_level() == level
        assert config.unknown_auto_mixed_precision_level() is None
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "FAST")
    assert config.auto_mixed_precision_level() == ""
    assert config.unknown_auto_mixed_precision_level() == "FAST"


def test_amp_list_overrides(monkeypatch):
    base = {"MatMul", "Conv2D"}
    assert config.apply_amp_list_overrides("ALLOWLIST", base) == frozenset(base)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADD", "BatchMatMulV2, Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_REMOVE", "Conv2D,Relu,")
    # str_util::Split without trimming: ", Relu" adds " Relu", which REMOVE "Relu" misses.
    assert config.apply_amp_list_overrides("ALLOWLIST", base) == {
        "MatMul", "BatchMatMulV2", " Relu"}
    # Legacy names apply after the current ones: WHITELIST_ADD brings Relu back.
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_WHITELIST_ADD", "Relu")
    assert "Relu" in config.apply_amp_list_overrides("ALLOWLIST", base)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_ADD", "Identity")
    assert config.apply_amp_list_overrides("CLEARLIST", ()) == {"Identity"}
    with pytest.raises(ValueError, match="Unknown mixed-precision list"):
        config.apply_amp_list_overrides("GREYLIST", ())


def test_module_key():
    assert config.module_key("ndflow.passes.cse") == "cse"
    assert config.module_key("ndflow/passes/cse.py") == "cse"
    assert config.module_key("cse") == "cse"


def test_docs_document_every_variable():
    page = Path(__file__).resolve().parents[2] / "docs" / "environment.md"
    section = page.read_text(encoding="utf-8").split("# Environment variables", 1)[1]
    for name, var in config.VARIABLES.items():
        if var.kind == "oplist":
            assert "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{ALLOWLIST,INFERLIST,DENYLIST," \
                   "CLEARLIST}_{ADD,REMOVE}" in section
        else:
            assert f"`{name}`" in section, f"{name} is not listed in docs/environment.md"


# -- OpenMP's variables (read by torch's libgomp; ndflow validates them) ----------------------

@pytest.mark.parametrize("value,expected", [("4", 4), (" 2 ", 2), ("4,2", 4), ("", 0)])
def test_omp_num_threads_reads_the_first_level(monkeypatch, value, expected):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert config.omp_num_threads() == expected


@pytest.mark.parametrize("value", ["0", "-1", "two", "4,", "4,0"])
def test_malformed_omp_num_threads_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    with pytest.raises(ValueError, match=r"OMP_NUM_THREADS.*positive integer"):
        config.omp_num_threads()


@pytest.mark.parametrize("value,expected", [("passive", "PASSIVE"), ("ACTIVE", "ACTIVE"),
                                            (" Passive ", "PASSIVE")])
def test_omp_wait_policy(monkeypatch, value, expected):
    monkeypatch.setenv("OMP_WAIT_POLICY", value)
    assert config.omp_wait_policy() == expected


def test_malformed_omp_wait_policy_names_the_variable(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "sleepy")
    with pytest.raises(ValueError, match=r"OMP_WAIT_POLICY.*'sleepy'.*ACTIVE or PASSIVE"):
        config.omp_wait_policy()


@pytest.mark.parametrize("value,expected", [
    ("0", 0), ("300000", 300000), ("10k", 10_000), ("2M", 2_000_000), ("1g", 10**9),
    ("infinite", -1), ("INFINITY", -1)])
def test_gomp_spincount_as_libgomp_reads_it(monkeypatch, value, expected):
    monkeypatch.setenv("GOMP_SPINCOUNT", value)
    assert config.gomp_spincount() == expected


@pytest.mark.parametrize("value", ["-5", "10x", "1.5k", "lots"])
def test_malformed_gomp_spincount_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("GOMP_SPINCOUNT", value)
    with pytest.raises(ValueError, match="GOMP_SPINCOUNT"):
        config.gomp_spincount()


def test_follow_free_cores_switch(monkeypatch):
    assert config.get(config.NDFLOW_FOLLOW_FREE_CORES) is True
    monkeypatch.setenv("NDFLOW_FOLLOW_FREE_CORES", "0")
    assert config.get(config.NDFLOW_FOLLOW_FREE_CORES) is False
    monkeypatch.setenv("NDFLOW_FOLLOW_FREE_CORES", "maybe")
    with pytest.raises(ValueError, match="NDFLOW_FOLLOW_FREE_CORES"):
        config.get(config.NDFLOW_FOLLOW_FREE_CORES)
