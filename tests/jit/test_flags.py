"""TF_XLA_FLAGS / XLA_FLAGS parsing (ndflow/jit/flags.py) with TensorFlow's rules and defaults."""

from __future__ import annotations

import pytest

from ndflow.jit import flags as flags_module
from ndflow.jit.flags import INT32_MAX, INT64_MAX, XlaFlags, parse_flags, xla_flags


def test_defaults_are_tensorflows():
    f = parse_flags("", "")
    assert f == XlaFlags()
    assert (f.tf_xla_auto_jit, f.tf_xla_min_cluster_size, f.tf_xla_max_cluster_size) == \
        ("0", 4, INT32_MAX)
    assert f.tf_xla_clustering_fuel == INT64_MAX
    assert f.tf_xla_enable_lazy_compilation and not f.tf_xla_always_defer_compilation
    assert not f.tf_xla_async_compilation and not f.tf_xla_cpu_global_jit
    assert f.tf_xla_persistent_cache_prefix == "xla_compile_cache"
    assert f.persistent_cache_dir == "" and f.ops_to_cluster == ""
    assert f.auto_jit_override() is None


def test_flags_of_every_kind():
    f = parse_flags("--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=7 --tf_xla_cpu_global_jit "
                    "--tf_xla_enable_lazy_compilation=false --tf_xla_async_compilation=1 "
                    "--tf_xla_ops_to_cluster=PW,MatMul --tf_xla_clustering_fuel=12",
                    "--xla_gpu_autotune_level=2 --xla_dump_to='/tmp/a b'")
    assert f.tf_xla_auto_jit == "2" and f.auto_jit_override() == 2
    assert f.tf_xla_min_cluster_size == 7 and f.tf_xla_cpu_global_jit
    assert not f.tf_xla_enable_lazy_compilation and f.tf_xla_async_compilation
    assert f.ops_to_cluster == "PW,MatMul" and f.tf_xla_clustering_fuel == 12
    assert f.xla_gpu_autotune_level == 2 and f.xla_dump_to == "/tmp/a b"


@pytest.mark.parametrize("value, override, single_gpu", [
    ("0", None, False), ("-1", -1, False), ("1", 1, False), ("2", 2, False),
    ("fusible", 1, False), ("single-gpu(2)", 2, True), ("single-gpu(2)", None, False)])
def test_auto_jit_values(value, override, single_gpu):
    f = parse_flags(f"--tf_xla_auto_jit={value}")
    assert f.auto_jit_override(single_gpu_graph=single_gpu) == override


def test_fusible_means_the_fusible_allowlist():
    assert parse_flags("--tf_xla_auto_jit=fusible").ops_to_cluster == "FUSIBLE"
    assert parse_flags("--tf_xla_auto_jit=fusible --tf_xla_ops_to_cluster=PW").ops_to_cluster \
        == "PW"


def test_value_not_starting_with_dash_is_a_flag_file(tmp_path):
    path = tmp_path / "flags.txt"
    path.write_text("--tf_xla_auto_jit=1\n  --tf_xla_min_cluster_size=3\n")
    f = parse_flags(str(path))
    assert f.tf_xla_auto_jit == "1" and f.tf_xla_min_cluster_size == 3
    with pytest.raises(ValueError, match="names a file of flags, which cannot be read"):
        parse_flags(str(tmp_path / "missing.txt"))


def test_persistent_cache_directory_and_the_containers_alias():
    assert parse_flags("--tf_xla_persistent_cache_directory=/a").persistent_cache_dir == "/a"
    assert parse_flags("", "--xla_gpu_persistent_cache_dir=/b").persistent_cache_dir == "/b"
    assert parse_flags("--xla_gpu_persistent_cache_dir=/c").persistent_cache_dir == "/c"
    both = parse_flags("--tf_xla_persistent_cache_directory=/a",
                       "--xla_gpu_persistent_cache_dir=/b")
    assert both.persistent_cache_dir == "/a"


def test_unknown_flags_are_tensorflows_error():
    with pytest.raises(ValueError) as e:
        parse_flags("--tf_xla_auto_jit=1 --xla_gpu_autotune_level=2")
    assert str(e.value) == ("Unknown flag in TF_XLA_FLAGS: --xla_gpu_autotune_level=2\n"
                            "Perhaps you meant to specify these on the XLA_FLAGS envvar?")
    with pytest.raises(ValueError, match=r"Unknown flags in XLA_FLAGS: --tf_xla_auto_jit=1 "
                                         r"--nope\nPerhaps you meant to specify these on the "
                                         r"TF_XLA_FLAGS envvar\?"):
        parse_flags("", "--tf_xla_auto_jit=1 --nope")
    with pytest.raises(ValueError, match="Unknown flag in TF_XLA_FLAGS: --tf_xla_async_io_level"):
        parse_flags("--tf_xla_async_io_level=1")  # NVIDIA forks only: upstream dies on it


@pytest.mark.parametrize("text, message", [
    ("--tf_xla_min_cluster_size=abc",
     "Couldn't interpret value abc for flag tf_xla_min_cluster_size. (expected an int32)"),
    ("--tf_xla_cpu_global_jit=yes", "Couldn't interpret value yes for flag "
                                    "tf_xla_cpu_global_jit. (expected true, false, 1 or 0)"),
    ("--tf_xla_min_cluster_size=99999999999", "value 99999999999 for"),
    ("--tf_xla_auto_jit=3x", "value 3x for flag tf_xla_auto_jit. (expected 0, -1, 1, 2, "
                             "fusible or single-gpu(N))"),
    ("--tf_xla_auto_jit=single-gpu(x)", "value single-gpu(x) for flag"),
    ("--xla_dump_to='unterminated", "No closing quotation"),
])
def test_malformed_values_name_the_flag(text, message):
    with pytest.raises(ValueError, match="Failed to parse TF_XLA_FLAGS") as e:
        parse_flags(text.replace("--xla_dump_to", "--tf_xla_persistent_cache_directory"))
    assert message in str(e.value)


def test_every_tensorflow_flag_is_accepted_and_a_bare_non_boolean_is_unknown():
    f = parse_flags("--tf_mlir_enable_mlir_bridge --tf_xla_sparse_core_stacking_mem_limit_bytes="
                    "4294967296 --tf_xla_persistent_cache_read_only=true "
                    "--tf_xla_call_module_disabled_checks=shape_assertions")
    assert f.tf_mlir_enable_mlir_bridge and f.tf_xla_persistent_cache_read_only
    assert f.tf_xla_sparse_core_stacking_mem_limit_bytes == 2**32
    with pytest.raises(ValueError, match="Unknown flag in TF_XLA_FLAGS: "
                                         "--tf_xla_max_cluster_size\n"):
        parse_flags("--tf_xla_max_cluster_size")


def test_parsed_once_per_process_until_reset(monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_min_cluster_size=9")
    flags_module.reset_xla_flags_for_test()
    try:
        assert xla_flags().tf_xla_min_cluster_size == 9
        monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_min_cluster_size=5")
        assert xla_flags().tf_xla_min_cluster_size == 9  # read once
        flags_module.reset_xla_flags_for_test()
        assert xla_flags().tf_xla_min_cluster_size == 5
        monkeypatch.setenv("TF_XLA_FLAGS", "--bogus")
        flags_module.reset_xla_flags_for_test()
        with pytest.raises(ValueError, match="Unknown flag in TF_XLA_FLAGS: --bogus"):
            xla_flags()
    finally:
        monkeypatch.delenv("TF_XLA_FLAGS")
        flags_module.reset_xla_flags_for_test()


def test_threshold_for_megamorphic():
    # TensorFlow master's flag (newer than 2.21): default 0 (TF's threshold of 10), -1 disables,
    # any positive count replaces 10; below -1 is TF's "out of range" (fatal there)
    assert parse_flags("").tf_xla_threshold_for_megamorphic == 0
    assert parse_flags("--tf_xla_threshold_for_megamorphic=-1"
                       ).tf_xla_threshold_for_megamorphic == -1
    assert parse_flags("--tf_xla_threshold_for_megamorphic=3"
                       ).tf_xla_threshold_for_megamorphic == 3
    assert parse_flags(f"--tf_xla_threshold_for_megamorphic={INT64_MAX}"
                       ).tf_xla_threshold_for_megamorphic == INT64_MAX
    with pytest.raises(ValueError, match=r"tf_xla_threshold_for_megamorphic flag is out of "
                       r"range.\nAllowed ranges are \(-1\) to 9223372036854775807 got -2."):
        parse_flags("--tf_xla_threshold_for_megamorphic=-2")
    with pytest.raises(ValueError, match="Couldn't interpret value x for flag "
                       "tf_xla_threshold_for_megamorphic"):
        parse_flags("--tf_xla_threshold_for_megamorphic=x")
