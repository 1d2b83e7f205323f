"""TF_XLA_FLAGS and XLA_FLAGS, parsed once per process with TensorFlow's rules.

    flags = xla_flags()            # an XlaFlags (frozen): every field with TF's default
    flags.tf_xla_min_cluster_size  # 4
    flags.persistent_cache_dir     # --tf_xla_persistent_cache_directory or its alias

Rules (tsl's ParseFlagsFromEnvAndDieIfUnknown and TF's flags.cc):
- a value whose first non-space character is `-` is a list of flags; any other non-empty
  value is the name of a file holding the flags (whitespace- and newline-separated);
- each flag is `--name=value`, or `--name` for a boolean (true; a bare non-boolean is unknown);
  booleans take true/false/1/0, integers decimal digits; anything else is TF's "Couldn't
  interpret value V for flag NAME." error; every flag TF 2.21 knows is accepted (those steering
  parts ndflow lacks, as the MLIR bridge or TPU embeddings, change nothing);
- single or double quotes group a value holding spaces (`--xla_dump_to='/tmp/a b'`);
- an unknown flag is an error in TensorFlow's words: "Unknown flag in TF_XLA_FLAGS: --x
  Perhaps you meant to specify these on the XLA_FLAGS envvar?" (and the reverse for XLA_FLAGS).

`--tf_xla_auto_jit` takes 0, -1, 1, 2, `fusible` (level 1 plus ops_to_cluster=FUSIBLE) or
`single-gpu(N)` (level N only for graphs whose ops use exactly one GPU). The container's
`--xla_gpu_persistent_cache_dir=DIR` spelling is accepted in either variable as an alias of
`--tf_xla_persistent_cache_directory`. A malformed variable raises ValueError on the first
`xla_flags()` call; `reset_xla_flags_for_test()` makes the next call read the environment again.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import threading
from dataclasses import dataclass

from ndflow.core import config

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class XlaFlags:
    """Every TF_XLA_FLAGS field (TensorFlow's defaults) plus the XLA_FLAGS ndflow reads."""

    # --tf_xla_auto_jit, as given ("0", "-1", "1", "2", "fusible", "single-gpu(N)").
    tf_xla_auto_jit: str = "0"
    tf_xla_min_cluster_size: int = 4
    tf_xla_max_cluster_size: int = INT32_MAX
    tf_xla_ops_to_cluster: str = ""
    tf_xla_cluster_exclude_ops: str = ""
    tf_xla_clustering_debug: bool = False
    tf_xla_cpu_global_jit: bool = False
    tf_xla_clustering_fuel: int = INT64_MAX
    tf_xla_disable_deadness_safety_checks_for_debugging: bool = False
    tf_xla_disable_resource_variable_safety_checks_for_debugging: bool = False
    tf_xla_deterministic_cluster_names: bool = False
    tf_xla_persistent_cache_directory: str = ""
    tf_xla_persistent_cache_prefix: str = "xla_compile_cache"
    tf_xla_disable_strict_signature_checks: bool = False
    tf_xla_enable_lazy_compilation: bool = True
    tf_xla_always_defer_compilation: bool = False
    tf_xla_async_compilation: bool = False
    tf_xla_disable_constant_folding: bool = False
    tf_xla_print_cluster_outputs: bool = False
    tf_xla_check_cluster_input_numerics: bool = False
    tf_xla_check_cluster_output_numerics: bool = False
    tf_xla_compile_on_demand: bool = False
    tf_xla_enable_xla_devices: bool = False
    tf_xla_persistent_cache_device_types: str = ""
    tf_xla_persistent_cache_read_only: bool = False
    # Newer than TF 2.21 (TensorFlow master's flags.cc / device_compilation_profiler.cc; 2.21
    # itself rejects it as unknown): the compile count above which a cluster with fewer than
    # 50 executions per compile turns megamorphic. 0: TF's 10; -1: never megamorphic; below
    # -1: an error (TF's LOG(FATAL) "out of range").
    tf_xla_threshold_for_megamorphic: int = 0
    # Accepted as TF 2.21 accepts them; they steer parts ndflow does not have (TPU embedding,
    # the MLIR bridge, PjRt device API), so they change nothing.
    tf_xla_disable_full_embedding_pipelining: bool = False
    tf_xla_disable_full_embedding_pipelining_with_summaries: bool = True
    tf_xla_embedding_parallel_iterations: int = 0
    tf_xla_use_device_api_for_xla_launch: bool = True
    tf_xla_use_device_api_for_compile_on_demand: bool = True
    tf_xla_use_device_api_for_auto_jit: bool = True
    tf_xla_use_device_api: bool = False
    tf_xla_enable_device_api_for_gpu: bool = True
    tf_xla_call_module_disabled_checks: str = ""
    tf_mlir_enable_mlir_bridge: bool = False
    tf_mlir_enable_merge_control_flow_pass: bool = True
    tf_mlir_enable_convert_control_to_data_outputs_pass: bool = False
    tf_mlir_composite_tpuexecute_side_effects: bool = False
    tf_mlir_enable_strict_clusters: bool = False
    tf_mlir_enable_multiple_local_cpu_devices: bool = False
    tf_mlir_enable_debug_info_serialization: bool = True
    tf_dump_graphs_in_tfg: bool = False
    tf_mlir_enable_tpu_variable_runtime_reformatting_pass: bool = True
    tf_serialize_mlir_to_compressed_bytecode: bool = False
    tf_xla_sparse_core_disable_table_stacking: bool = False
    tf_xla_sparse_core_minibatch_max_division_level: int = 6
    tf_xla_sparse_core_stacking_mem_limit_bytes: int = 2097152
    tf_xla_sparse_core_stacking_table_shard_limit_bytes: int = 2147483648
    # XLA_FLAGS (DebugOptions) ndflow reads.
    xla_gpu_autotune_level: int = 4
    xla_dump_to: str = ""
    xla_dump_hlo_as_text: bool = False
    xla_cpu_enable_fast_math: bool = False
    # Row kernels (jit/fusion.py): per-row reductions computed inside the kernel that reads
    # them back, ndflow's form of XLA's reduction epilogue fusion; false keeps every reduction
    # a kernel root.
    xla_gpu_enable_reduction_epilogue_fusion: bool = True
    xla_gpu_persistent_cache_dir: str = ""   # the container's spelling (alias, see below)
    xla_gpu_kernel_cache_file: str = ""
    xla_gpu_per_fusion_autotune_cache_dir: str = ""

    # -- derived ----------------------------------------------------------------------------
    @property
    def persistent_cache_dir(self) -> str:
        """The compile cache directory: --tf_xla_persistent_cache_directory, else the
        container's --xla_gpu_persistent_cache_dir alias ('' = no persistent cache)."""
        return self.tf_xla_persistent_cache_directory or self.xla_gpu_persistent_cache_dir

    def auto_jit_override(self, single_gpu_graph: bool = False) -> int | None:
        """The level --tf_xla_auto_jit imposes (-1 off, 1, 2), or None to use the session's
        (0, or single-gpu(N) on a graph that does not use exactly one GPU)."""
        value = self.tf_xla_auto_jit
        if value == "fusible":
            return 1
        m = _SINGLE_GPU.fullmatch(value)
        if m:
            n = int(m.group(1))
            return (n if n != 0 else None) if single_gpu_graph else None
        n = int(value)
        return None if n == 0 else n

    @property
    def ops_to_cluster(self) -> str:
        """The allowlist spec: `fusible` auto-jit means FUSIBLE (TF's flags.cc)."""
        if self.tf_xla_auto_jit == "fusible" and not self.tf_xla_ops_to_cluster:
            return "FUSIBLE"
        return self.tf_xla_ops_to_cluster


_SINGLE_GPU = re.compile(r"single-gpu\((-?[0-9]+)\)")
_FIELDS = {f.name: f for f in dataclasses.fields(XlaFlags)}
_TF_NAMES = frozenset(n for n in _FIELDS if n.startswith("tf_"))
_INT64_NAMES = frozenset({"tf_xla_clustering_fuel", "tf_xla_threshold_for_megamorphic",
                          "tf_xla_sparse_core_stacking_mem_limit_bytes",
                          "tf_xla_sparse_core_stacking_table_shard_limit_bytes"})
_XLA_NAMES = frozenset(n for n in _FIELDS if n.startswith("xla_"))
_ALIAS = "xla_gpu_persistent_cache_dir"  # accepted in TF_XLA_FLAGS too


def _parse_value(name: str, raw: str, var: str):
    """A flag's value (`raw` is None for a bare `--name`, which only booleans allow)."""
    kind = _FIELDS[name].type
    if kind == "bool":
        if raw is None or raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
        expected = "true, false, 1 or 0"
    elif kind == "int":
        if re.fullmatch(r"[+-]?[0-9]+", raw.strip()):
            value = int(raw)
            limit = INT64_MAX if name in _INT64_NAMES else INT32_MAX
            if -limit - 1 <= value <= limit:
                if name == "tf_xla_threshold_for_megamorphic" and value < -1:
                    # TF checks this when the profiler first reads it and dies; here: at parse
                    raise ValueError(
                        f"The value for the {name} flag is out of range.\nAllowed ranges are "
                        f"(-1) to {INT64_MAX} got {value}.")
                return value
        expected = f"an int{'64' if name in _INT64_NAMES else '32'}"
    elif name == "tf_xla_auto_jit":
        if raw == "fusible" or _SINGLE_GPU.fullmatch(raw) or re.fullmatch(r"-?[0-9]+", raw):
            return raw
        expected = "0, -1, 1, 2, fusible or single-gpu(N)"
    else:
        return raw
    # TF's words (tsl command_line_flags.cc), then what would have parsed.
    raise ValueError(f"Failed to parse {var}: Couldn't interpret value {raw} for flag "
                     f"{name}. (expected {expected})")


def _tokens(var: str, value: str) -> list[str]:
    """The flag tokens of a variable: its value, or the content of the file it names."""
    text = value.strip()
    if not text:
        return []
    if not text.startswith("-"):
        try:
            with open(text, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"Failed to parse {var}: its value {value!r} does not start "
                             f"with '-', so it names a file of flags, which cannot be read: "
                             f"{e.strerror or e}") from None
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise ValueError(f"Failed to parse {var}: {e} in {text!r}") from None


def parse_flags(tf_xla_flags: str = "", xla_flags_value: str = "") -> XlaFlags:
    """XlaFlags from the two variables' values (pure: no caching, no environment)."""
    values: dict = {}
    for var, raw, known in (("TF_XLA_FLAGS", tf_xla_flags, _TF_NAMES | {_ALIAS}),
                            ("XLA_FLAGS", xla_flags_value, _XLA_NAMES)):
        unknown = []
        for tok in _tokens(var, raw):
            m = re.fullmatch(r"--?([A-Za-z0-9_]+)(?:=(.*))?", tok, re.S)
            if not m or m.group(1) not in known or \
                    (m.group(2) is None and _FIELDS[m.group(1)].type != "bool"):
                # tsl matches `--name=` for non-booleans: a bare one is an unknown flag
                unknown.append(tok)
                continue
            values[m.group(1)] = _parse_value(m.group(1), m.group(2), var)
        if unknown:
            other = "XLA_FLAGS" if var == "TF_XLA_FLAGS" else "TF_XLA_FLAGS"
            raise ValueError(f"Unknown flag{'s' if len(unknown) > 1 else ''} in {var}: "
                             f"{' '.join(unknown)}\nPerhaps you meant to specify these on the "
                             f"{other} envvar?")
    return XlaFlags(**values)


_lock = threading.Lock()
_cached: XlaFlags | None = None


def xla_flags() -> XlaFlags:
    """The process's flags, parsed from TF_XLA_FLAGS and XLA_FLAGS on the first call."""
    global _cached
    if _cached is None:
        with _lock:
            if _cached is None:
                _cached = parse_flags(config.get(config.TF_XLA_FLAGS), config.get(config.XLA_FLAGS))
    return _cached


def reset_xla_flags_for_test() -> None:
    """The next `xla_flags()` reads the environment again."""
    global _cached
    with _lock:
        _cached = None
