"""The NVIDIA TensorFlow container's environment variables, parsed in one place.

Every variable ndflow honours is declared here once (`VARIABLES`: name, kind, default, what it
does) and read through a typed accessor at call time, so a test can `monkeypatch.setenv` and
the next call sees it. Malformed values raise `ValueError` naming the variable; nothing is
silently ignored.

Parsing follows TensorFlow's readers:

- booleans as `tsl::ReadBoolFromEnvVar`: "1"/"true" and "0"/"false", case-insensitive, no
  surrounding spaces; anything else is an error;
- integers as `tsl::ReadInt64FromEnvVar` (`safe_strto64`): optional sign and digits, surrounding
  spaces allowed;
- `TF_CPP_VMODULE` as TensorFlow's logging: "module=level,module2=level" with a module being a
  source file's base name without extension (here a Python module's last component);
- the mixed-precision list overrides as `AutoMixedPrecisionLists::UpdateList`: split on ","
  without trimming (`str_util::Split`; "Exp, Log" adds " Log"), added, then removed, per list,
  the legacy WHITELIST/GRAYLIST/BLACKLIST names after the current ones;
- TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL compared, upper-cased, with TF's level names;
  anything else is the default level (TF ignores it; ndflow also warns);
- NVIDIA's graph-rewrite switch as its meta_optimizer.cc reads it: ..._GRAPH_REWRITE when
  non-empty, else TF_ENABLE_AUTO_MIXED_PRECISION (empty = unset).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ndflow.core import openmp_values


@dataclass(frozen=True)
class EnvVar:
    """A declared environment variable: `kind` is bool, int, str, vmodule or oplist."""

    name: str
    kind: str
    default: bool | int | str | None
    help: str


VARIABLES: dict[str, EnvVar] = {}


def _declare(name: str, kind: str, default: bool | int | str | None, help: str) -> str:
    VARIABLES[name] = EnvVar(name, kind, default, help)
    return name


# Mixed precision (NVIDIA container knobs).
TF_ENABLE_AUTO_MIXED_PRECISION = _declare(
    "TF_ENABLE_AUTO_MIXED_PRECISION", "bool", False,
    "Turns on both the mixed-precision graph rewrite and automatic loss scaling.")
TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE = _declare(
    "TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE", "bool", None,
    "Turns the mixed-precision graph rewrite on or off alone "
    "(default: TF_ENABLE_AUTO_MIXED_PRECISION).")
TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING = _declare(
    "TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING", "bool", None,
    "Turns automatic dynamic loss scaling in optimizers on or off alone "
    "(default: TF_ENABLE_AUTO_MIXED_PRECISION).")
TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE = _declare(
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE", "bool", False,
    "Runs the mixed-precision rewrite even on devices where it is not expected to be faster.")
TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL = _declare(
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "str", "",
    "Empty (normal), TENSOR_CORES_ONLY (only allow-list ops convert), TREAT_INFER_AS_DENY "
    "(infer-list ops stay in float32) or UNSAFE_FORCE_ALL (every op that can run in reduced "
    "precision does).")
TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH = _declare(
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH", "str", "",
    "A directory: each rewritten graph is written there before and after the pass.")
TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_EMULATE_FP16 = _declare(
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_EMULATE_FP16", "bool", True,
    "In the CPU float16 mode, keeps allow-list ops in float32 with float16 rounding.")
TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU = _declare(
    "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU", "bool", False,
    "Pretends a GPU of compute capability 8.0 is present (float16 mode without a GPU).")
AMP_LISTS = ("ALLOWLIST", "INFERLIST", "DENYLIST", "CLEARLIST")
_AMP_LEGACY = {"ALLOWLIST": "WHITELIST", "INFERLIST": "GRAYLIST", "DENYLIST": "BLACKLIST"}
for _list in AMP_LISTS:
    for _name in (_list, _AMP_LEGACY.get(_list)):
        if _name is None:
            continue
        for _op in ("ADD", "REMOVE"):
            _declare(f"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{_name}_{_op}", "oplist", "",
                     f"Comma-separated op types to {_op.lower()} "
                     f"{'to' if _op == 'ADD' else 'from'} the mixed-precision "
                     f"{_list.lower()}" + (" (legacy name)" if _name != _list else "") + ".")
TF_ENABLE_ONEDNN_OPTS = _declare(
    "TF_ENABLE_ONEDNN_OPTS", "bool", None,
    "oneDNN's CPU optimizations, on which the bfloat16 rewrite "
    "(auto_mixed_precision_onednn_bfloat16) depends (default: on for CPUs with AVX512_VNNI, "
    "AVX512_BF16, AVX_VNNI or AMX, as TensorFlow's Linux build).")

# Layout, tracing, GPU math.
TF_ENABLE_NHWC = _declare(
    "TF_ENABLE_NHWC", "bool", False,
    "Computes NCHW convolutions on channels-last (NHWC) memory too; NHWC graphs always are.")
TF_DISABLE_NVTX_RANGES = _declare(
    "TF_DISABLE_NVTX_RANGES", "bool", False,
    "Turns NVTX ranges off, whatever TF_ENABLE_NVTX_RANGES says.")
TF_ENABLE_NVTX_RANGES = _declare(
    "TF_ENABLE_NVTX_RANGES", "bool", True,
    "Wraps each executed op in an NVTX range `<op type>: <node name>` for Nsight Systems "
    "(GPU only; on by default, as in NVIDIA's build).")
TF_CUDNN_USE_AUTOTUNE = _declare(
    "TF_CUDNN_USE_AUTOTUNE", "bool", True,
    "Lets cuDNN benchmark convolution algorithms and pick the fastest (GPU), and ndflow time "
    "each large CPU convolution of an NHWC graph in both memory layouts and as an FFT "
    "product and keep the fastest (kernels/autotune.py).")
TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32 = _declare(
    "TF_ENABLE_CUBLAS_TENSOR_OP_MATH_FP32", "bool", False,
    "Allows Tensor Core (TF32) math for float32 cuBLAS matmuls.")
TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32 = _declare(
    "TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32", "bool", False,
    "Allows Tensor Core (TF32) math for float32 cuDNN convolutions.")
TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32 = _declare(
    "TF_ENABLE_CUDNN_RNN_TENSOR_OP_MATH_FP32", "bool", False,
    "Allows Tensor Core (TF32) math for float32 cuDNN RNNs.")
TF_DISABLE_CUBLAS_TENSOR_OP_MATH = _declare(
    "TF_DISABLE_CUBLAS_TENSOR_OP_MATH", "bool", False,
    "Keeps cuBLAS matmuls off Tensor Core shortcuts: no TF32, no reduced-precision "
    "float16/bfloat16 reductions, whatever the switches above say.")
TF_DISABLE_CUDNN_TENSOR_OP_MATH = _declare(
    "TF_DISABLE_CUDNN_TENSOR_OP_MATH", "bool", False,
    "Keeps cuDNN convolutions off TF32, whatever TF_ENABLE_CUDNN_TENSOR_OP_MATH_FP32 says.")
TF_AUTOTUNE_THRESHOLD = _declare(
    "TF_AUTOTUNE_THRESHOLD", "int", 1,
    "How many times TensorFlow's autotuner must pick the same convolution algorithm before "
    "the choice is final (values below 1 count as 1).")
TF_ENABLE_WINOGRAD_NONFUSED = _declare(
    "TF_ENABLE_WINOGRAD_NONFUSED", "bool", True,
    "Lets cuDNN's autotuner consider the non-fused Winograd convolution algorithms.")
CUDA_DEVICE_MAX_CONNECTIONS = _declare(
    "CUDA_DEVICE_MAX_CONNECTIONS", "int", 8,
    "Hardware work queues per GPU (1-32), read by the CUDA driver when the process's CUDA "
    "context is created.")

# Threads.
TF_NUM_INTEROP_THREADS = _declare(
    "TF_NUM_INTEROP_THREADS", "int", 0,
    "Threads running independent ops concurrently; 0 lets ndflow choose, negative runs every "
    "op in the caller's thread.")
TF_NUM_INTRAOP_THREADS = _declare(
    "TF_NUM_INTRAOP_THREADS", "int", 0,
    "Threads one kernel may use (ATen's intra-op pool); 0 lets ndflow choose.")

# OpenMP (ATen's intra-op pool), read by torch's libgomp when torch is first imported;
# ndflow only validates them, so a typo is an error naming the variable instead of libgomp's
# silent default.
OMP_NUM_THREADS = _declare(
    "OMP_NUM_THREADS", "int", 0,
    "OpenMP's team size (ATen's intra-op threads); TF_NUM_INTRAOP_THREADS and "
    "tf.config.threading win. A positive integer (or a comma list of them, per nesting level).")
OMP_WAIT_POLICY = _declare(
    "OMP_WAIT_POLICY", "str", "",
    "ACTIVE (idle OpenMP threads spin) or PASSIVE (they sleep at once); unset: libgomp spins "
    "about 300,000 times (~8 ms on the Zen 4 EPYC) before sleeping.")
GOMP_SPINCOUNT = _declare(
    "GOMP_SPINCOUNT", "str", "",
    "libgomp's spin count before an idle thread sleeps: a count with an optional k, M, G or T "
    "suffix, or 'infinite'.")
NDFLOW_FOLLOW_FREE_CORES = _declare(
    "NDFLOW_FOLLOW_FREE_CORES", "bool", True,
    "Lowers a kernel's intra-op threads to the cores other processes leave free, and restores "
    "them when the cores are free again (ndflow/core/core_monitor.py); 0 keeps the "
    "configured count whatever the load.")
NDFLOW_SHARE_CROWDED_THREADS = _declare(
    "NDFLOW_SHARE_CROWDED_THREADS", "bool", True,
    "While a capped thread still waits for a core (others leave it less than one), runs its "
    "chunked kernels and large products over its configured threads on ndflow's own "
    "work-sharing pool (ndflow/kernels/work_pool.py); 0 keeps them on the capped count.")
NDFLOW_DATA_THREAD_NICENESS = _declare(
    "NDFLOW_DATA_THREAD_NICENESS", "int", 0,
    "How much lower (in nice steps) tf.data's pipeline threads run than the training thread "
    "during a training loop; 0 (the default) leaves them at the same priority.")
TF_DUMP_GRAPH_PREFIX = _declare(
    "TF_DUMP_GRAPH_PREFIX", "str", "",
    "A directory for the graphs the XLA flags ask to dump (--tf_xla_clustering_debug).")
KERAS_HOME = _declare(
    "KERAS_HOME", "str", "",
    "Keras' cache directory for downloaded datasets and weights (default ~/.keras).")
KERAS_MAX_EPOCHS = _declare(
    "KERAS_MAX_EPOCHS", "int", None,
    "Caps the epochs of every `fit` (Keras 3's testing knob); unset: no cap.")
KERAS_MAX_STEPS_PER_EPOCH = _declare(
    "KERAS_MAX_STEPS_PER_EPOCH", "int", None,
    "Caps the steps of every epoch of `fit` (Keras 3's testing knob); unset: no cap.")
NDFLOW_KEEP_FREED_MEMORY = _declare(
    "NDFLOW_KEEP_FREED_MEMORY", "bool", True,
    "Keeps freed tensor memory in the process heap (glibc thresholds) so that each step reuses "
    "the previous step's buffers; 0 leaves malloc as it is.")
NDFLOW_JIT_NATIVE_SEGMENTS = _declare(
    "NDFLOW_JIT_NATIVE_SEGMENTS", "bool", True,
    "Compiles runs of a CPU cluster's small products and generated kernels into one native "
    "function each (ndflow/jit/native_segments.py); 0 calls each from Python.")
NDFLOW_INPLACE = _declare(
    "NDFLOW_INPLACE", "bool", True,
    "Lets an execution plan run elementwise ops in place when an input dies at the op "
    "(ndflow/runtime/inplace.py); 0 always allocates a new output.")

# tf.image color adjustments (NVIDIA container switches).
TF_ADJUST_HUE_FUSED = _declare(
    "TF_ADJUST_HUE_FUSED", "bool", True,
    "tf.image.adjust_hue runs one fused kernel (RGB->HSV->shift->RGB in one pass); 0 runs "
    "RGBToHSV, the hue shift and HSVToRGB as separate ops.")
TF_ADJUST_SATURATION_FUSED = _declare(
    "TF_ADJUST_SATURATION_FUSED", "bool", True,
    "tf.image.adjust_saturation runs one fused kernel; 0 runs RGBToHSV, the saturation "
    "scaling and HSVToRGB as separate ops.")

# Versions.
TF_FORWARD_COMPATIBILITY_DELTA_DAYS = _declare(
    "TF_FORWARD_COMPATIBILITY_DELTA_DAYS", "int", None,
    "Days added to the forward-compatibility horizon `tf.compat.forward_compatible` compares "
    "with (TF 2.21's: 2026-01-16).")

# Logging.
TF_CPP_MIN_LOG_LEVEL = _declare(
    "TF_CPP_MIN_LOG_LEVEL", "int", 0,
    "Hides log lines below a severity: 0 shows all, 1 hides INFO, 2 also WARNING, "
    "3 also ERROR.")
TF_CPP_MIN_VLOG_LEVEL = _declare(
    "TF_CPP_MIN_VLOG_LEVEL", "int", 0,
    "Shows verbose (VLOG) lines up to this level in every module.")
TF_CPP_MAX_VLOG_LEVEL = _declare(
    "TF_CPP_MAX_VLOG_LEVEL", "int", None,
    "Newer TensorFlow's name for TF_CPP_MIN_VLOG_LEVEL; wins when both are set.")
TF_CPP_VMODULE = _declare(
    "TF_CPP_VMODULE", "vmodule", "",
    "Per-module verbose levels, e.g. 'constant_folding=2,plan=1' (module = file name "
    "without .py).")

# JIT (kept raw here; ndflow.jit parses the flags).
TF_XLA_FLAGS = _declare(
    "TF_XLA_FLAGS", "str", "",
    "TensorFlow-side JIT flags such as --tf_xla_auto_jit=2 (parsed by ndflow.jit).")
XLA_FLAGS = _declare(
    "XLA_FLAGS", "str", "",
    "Compiler-side flags such as --xla_dump_to=DIR (parsed by ndflow.jit).")

del _list, _name, _op

# Declared and validated, but nothing in ndflow acts on them yet (README's "in effect"
# column and `python -m ndflow.info` read this).
PARSED_ONLY = frozenset({
    # ATen's cuDNN benchmark mode times each convolution shape once and has no re-check
    # count, nor a way to leave Winograd algorithms out of its search.
    TF_AUTOTUNE_THRESHOLD, TF_ENABLE_WINOGRAD_NONFUSED,
})

_INT_RE = re.compile(r"\s*[+-]?[0-9]+\s*\Z")


def _raw(name: str) -> str | None:
    return os.environ.get(name)


def parse_bool(name: str, value: str) -> bool:
    """`value` of variable `name` as TensorFlow reads a boolean; ValueError otherwise."""
    lowered = value.lower()
    if lowered in ("1", "true"):
        return True
    if lowered in ("0", "false"):
        return False
    raise ValueError(f"Failed to parse the env-var ${{{name}}} into bool: {value!r}; "
                     "expected 1, 0, true or false (any case)")


def parse_int(name: str, value: str, minimum: int | None = None) -> int:
    """`value` of variable `name` as a decimal integer (at least `minimum`)."""
    if not _INT_RE.match(value):
        raise ValueError(f"Failed to parse the env-var ${{{name}}} into int: {value!r}")
    result = int(value)
    if minimum is not None and result < minimum:
        raise ValueError(f"The env-var ${{{name}}} must be at least {minimum}, got {result}")
    return result


def env_bool(name: str, default: bool) -> bool:
    """Boolean variable `name`, or `default` when it is unset."""
    value = _raw(name)
    return default if value is None else parse_bool(name, value)


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """Integer variable `name`, or `default` when it is unset."""
    value = _raw(name)
    return default if value is None else parse_int(name, value, minimum)


def env_str(name: str, default: str = "") -> str:
    """String variable `name` as given, or `default` when it is unset."""
    value = _raw(name)
    return default if value is None else value


# ---------------------------------------------------------------------------------------------
# Logging levels

@lru_cache(maxsize=32)
def parse_vmodule(value: str) -> dict[str, int]:
    """'mod=1,other=2' -> {'mod': 1, 'other': 2}. Empty items are skipped; a later entry for
    the same module wins (as TensorFlow's map insertion)."""
    result: dict[str, int] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        module, sep, level = item.partition("=")
        module = module.strip()
        if not sep or not module:
            raise ValueError(f"Failed to parse the env-var ${{{TF_CPP_VMODULE}}}: {item!r} is "
                             "not of the form module=level (e.g. 'plan=2,constant_folding=1')")
        result[module] = parse_int(TF_CPP_VMODULE, level)
    return result


def vmodule() -> dict[str, int]:
    """TF_CPP_VMODULE as a dict (a copy; empty when unset)."""
    return dict(parse_vmodule(env_str(TF_CPP_VMODULE)))


def module_key(module: str) -> str:
    """The name TF_CPP_VMODULE matches: a file's base name without extension, or the last
    component of a dotted module name ('ndflow.passes.cse' and '.../cse.py' -> 'cse')."""
    base = module.replace("\\", "/").rsplit("/", 1)[-1]
    if base.endswith((".py", ".pyc")):
        return base.split(".", 1)[0]
    return base.rsplit(".", 1)[-1]


def min_log_level() -> int:
    """TF_CPP_MIN_LOG_LEVEL: 0 INFO and up, 1 WARNING and up, 2 ERROR and up, 3 FATAL only."""
    return env_int(TF_CPP_MIN_LOG_LEVEL, 0, minimum=0)


def max_vlog_level() -> int:
    """The VLOG level enabled in every module (TF_CPP_MAX_VLOG_LEVEL, else
    TF_CPP_MIN_VLOG_LEVEL, else 0)."""
    if _raw(TF_CPP_MAX_VLOG_LEVEL) is not None:
        return env_int(TF_CPP_MAX_VLOG_LEVEL, 0, minimum=0)
    return env_int(TF_CPP_MIN_VLOG_LEVEL, 0, minimum=0)


def vmodule_level(module: str) -> int:
    """The highest VLOG level shown for `module`: the larger of the global level and the
    module's TF_CPP_VMODULE entry (TensorFlow's `VLOG_IS_ON` rule)."""
    per_module = parse_vmodule(env_str(TF_CPP_VMODULE))
    key = module_key(module)
    level = max_vlog_level()
    for name in (module, key):
        if name in per_module:
            level = max(level, per_module[name])
    return level


def vlog_is_on(module: str, level: int) -> bool:
    return level <= vmodule_level(module)


# ---------------------------------------------------------------------------------------------
# Typed accessors for the container's knobs

def auto_mixed_precision() -> bool:
    """TF_ENABLE_AUTO_MIXED_PRECISION (empty = unset)."""
    value = env_str(TF_ENABLE_AUTO_MIXED_PRECISION)
    return value != "" and parse_bool(TF_ENABLE_AUTO_MIXED_PRECISION, value)


def auto_mixed_precision_graph_rewrite() -> bool:
    """The mixed-precision graph rewrite, as NVIDIA's meta_optimizer.cc reads it: its own
    switch when set to a non-empty value, else TF_ENABLE_AUTO_MIXED_PRECISION (empty = unset)."""
    rewrite = env_str(TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE)
    if rewrite != "":
        return parse_bool(TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE, rewrite)
    return auto_mixed_precision()


def auto_mixed_precision_loss_scaling() -> bool:
    """Automatic loss scaling: its own switch, else TF_ENABLE_AUTO_MIXED_PRECISION."""
    return env_bool(TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING, auto_mixed_precision())


AMP_LEVELS = ("", "TENSOR_CORES_ONLY", "TREAT_INFER_AS_DENY", "UNSAFE_FORCE_ALL")


def auto_mixed_precision_level() -> str:
    """TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL upper-cased: '', 'TENSOR_CORES_ONLY',
    'TREAT_INFER_AS_DENY' or 'UNSAFE_FORCE_ALL'. TensorFlow compares the value with those
    names and treats anything else as the default level (see `unknown_..._level`)."""
    value = env_str(TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL).upper()
    return value if value in AMP_LEVELS else ""


def unknown_auto_mixed_precision_level() -> str | None:
    """The LEVEL value when it is none of TensorFlow's names (the pass warns about it)."""
    value = env_str(TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL)
    return None if value.upper() in AMP_LEVELS else value


def _op_list(name: str) -> list[str]:
    """TF's `str_util::Split(value, ",")`: no trimming; empty pieces add nothing."""
    return [op for op in env_str(name).split(",") if op]


def apply_amp_list_overrides(list_name: str, ops: Iterable[str]) -> frozenset[str]:
    """`ops` (a mixed-precision list: ALLOWLIST, INFERLIST, DENYLIST or CLEARLIST) with the
    TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_<LIST>_ADD / _REMOVE overrides applied, current names
    first, then the legacy WHITELIST/GRAYLIST/BLACKLIST ones, adds before removes."""
    if list_name not in AMP_LISTS:
        raise ValueError(f"Unknown mixed-precision list {list_name!r}; expected one of "
                         f"{', '.join(AMP_LISTS)}")
    result = set(ops)
    for name in (list_name, _AMP_LEGACY.get(list_name)):
        if name is None:
            continue
        result.update(_op_list(f"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{name}_ADD"))
        result.difference_update(_op_list(f"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{name}_REMOVE"))
    return frozenset(result)


def onednn_opts() -> bool | None:
    """TF_ENABLE_ONEDNN_OPTS as set, None when unset (the CPU decides: passes/amp/device.py)."""
    value = _raw(TF_ENABLE_ONEDNN_OPTS)
    return None if value is None else parse_bool(TF_ENABLE_ONEDNN_OPTS, value)


def nvtx_ranges_enabled() -> bool:
    """NVTX ranges (runtime/plan.py, GPU plans only): on unless TF_DISABLE_NVTX_RANGES is
    true or TF_ENABLE_NVTX_RANGES false."""
    disabled = env_bool(TF_DISABLE_NVTX_RANGES, False)
    enabled = env_bool(TF_ENABLE_NVTX_RANGES, True)
    return enabled and not disabled


def autotune_threshold() -> int:
    """TF_AUTOTUNE_THRESHOLD (TensorFlow raises values below 1 to 1)."""
    return max(env_int(TF_AUTOTUNE_THRESHOLD, 1), 1)


def cuda_device_max_connections() -> int:
    """CUDA_DEVICE_MAX_CONNECTIONS as the CUDA driver accepts it: 1 to 32 (default 8)."""
    n = env_int(CUDA_DEVICE_MAX_CONNECTIONS, 8, minimum=1)
    if n > 32:
        raise ValueError(f"The env-var ${{{CUDA_DEVICE_MAX_CONNECTIONS}}} must be at most 32, "
                         f"got {n}")
    return n


def num_intraop_threads() -> int:
    """0 = choose automatically."""
    return env_int(TF_NUM_INTRAOP_THREADS, 0, minimum=0)


def omp_num_threads() -> int:
    """OMP_NUM_THREADS' first level (0 when unset)."""
    return openmp_values.num_threads(OMP_NUM_THREADS, _raw(OMP_NUM_THREADS))


def omp_wait_policy() -> str:
    """OMP_WAIT_POLICY as ACTIVE or PASSIVE ('' when unset)."""
    return openmp_values.wait_policy(OMP_WAIT_POLICY, _raw(OMP_WAIT_POLICY))


def gomp_spincount() -> int | None:
    """GOMP_SPINCOUNT in spins (None when unset; -1 for 'infinite')."""
    return openmp_values.spin_count(GOMP_SPINCOUNT, _raw(GOMP_SPINCOUNT))


_ACCESSORS = {
    TF_ENABLE_AUTO_MIXED_PRECISION: auto_mixed_precision,
    TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE: auto_mixed_precision_graph_rewrite,
    TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING: auto_mixed_precision_loss_scaling,
    TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: auto_mixed_precision_level,
    TF_ENABLE_ONEDNN_OPTS: onednn_opts,
    TF_DISABLE_NVTX_RANGES: nvtx_ranges_enabled,
    TF_ENABLE_NVTX_RANGES: nvtx_ranges_enabled,
    TF_AUTOTUNE_THRESHOLD: autotune_threshold,
    CUDA_DEVICE_MAX_CONNECTIONS: cuda_device_max_connections,
    TF_NUM_INTRAOP_THREADS: num_intraop_threads,
    OMP_NUM_THREADS: omp_num_threads,
    OMP_WAIT_POLICY: omp_wait_policy,
    GOMP_SPINCOUNT: gomp_spincount,
    TF_CPP_MIN_LOG_LEVEL: min_log_level,
    TF_CPP_MIN_VLOG_LEVEL: max_vlog_level,
    TF_CPP_MAX_VLOG_LEVEL: max_vlog_level,
    TF_CPP_VMODULE: vmodule,
}


def get(name: str):
    """Declared variable `name` parsed by its kind (bool, int, str) as TensorFlow reads it, or
    its default when it is unset (an int without a default also when empty, as Keras reads its
    caps); ValueError when it is malformed."""
    var = VARIABLES[name]
    value = _raw(name)
    if value is None or (value == "" and var.kind == "int" and var.default is None):
        return var.default
    if var.kind == "bool":
        return parse_bool(name, value)
    if var.kind == "int":
        return parse_int(name, value)
    return value


def raw(name: str) -> str | None:
    """Variable `name` as set (None when unset), for reports that show what was given."""
    return _raw(name)


def snapshot_one(name: str) -> object:
    """One declared variable's parsed value; ValueError when it is malformed."""
    if name in _ACCESSORS:
        return _ACCESSORS[name]()
    if VARIABLES[name].kind in ("bool", "int", "str"):
        return get(name)
    return tuple(_op_list(name))  # the mixed-precision list overrides


def snapshot() -> dict[str, object]:
    """Every declared variable's parsed value (the effective one for derived switches); raises
    ValueError on the first malformed variable. Call it at start-up to fail early."""
    return {name: snapshot_one(name) for name in VARIABLES}
