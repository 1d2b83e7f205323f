"""The pass configuration: one frozen, typed value resolved in one place from all of
TensorFlow's sources.

    config = resolve_pass_config()                       # tf.function, Session(config=None)
    config = resolve_pass_config(session_config_proto)   # Session(config=ConfigProto(...))

Sources, as TensorFlow reads them:
- `tf.config.optimizer.set_experimental_options` / `set_jit` and the flag of
  `enable_mixed_precision_graph_rewrite` (ndflow/core/optimizer_options.py) for every graph
  run without an explicit ConfigProto: tf.function graphs and `Session()` (TF's Session
  takes the eager context's config when given none);
- a Session's `ConfigProto`: `graph_options.rewrite_options` (toggles, disable_meta_optimizer,
  min_graph_nodes) and `graph_options.optimizer_options` (opt_level L0,
  max_folded_constant_in_bytes); the experimental options do not apply to it;
- NVIDIA's environment variables (ndflow/core/config.py) for `auto_mixed_precision` left at
  DEFAULT.

Passes read only this value (on their PassContext). A pipeline pass that a RewriterConfig
toggle switches declares the toggle's name (`PassSpec(..., option="remapping")`); it runs
unless `pass_enabled` says otherwise, so a new pass needs no new field here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndflow.core import config as env
from ndflow.core import logging, optimizer_options

DEFAULT_MAX_CONSTANT_SIZE_IN_BYTES = 10 * 1024 * 1024
DEFAULT_MIN_GRAPH_NODES = 4
_ON, _OFF, _AGGRESSIVE = 1, 2, 3  # RewriterConfig.Toggle
# OptimizerOptions.L0 turns off the classic graph optimizations (TF: constant folding and CSE);
# ndflow's remapper is switched with them.
_L0_OPTIONS = frozenset({"constant_folding", "common_subgraph_elimination", "remapping"})
_L0 = -1  # OptimizerOptions.Level.L0


@dataclass(frozen=True)
class PassConfig:
    """What the graph passes are told to do for one compile."""

    # RewriterConfig toggles set OFF (option names, e.g. "constant_folding", "remapping").
    options_off: frozenset[str] = frozenset()
    # Pipeline passes switched off by name or group (e.g. {"cse"}, {"grouped_updates"},
    # {"remapper"}): tools, tests, and outside Sessions `set_experimental_options({name:
    # False})` for a name that is not one of TF's options.
    disabled_passes: frozenset[str] = frozenset()
    # disable_meta_optimizer: only the required passes (prune) run.
    meta_optimizer_disabled: bool = False
    # Graphs with fewer nodes skip the mixed-precision rewrite (0: the default of 4; < 0: none).
    min_graph_nodes: int = 0
    max_constant_size_in_bytes: int = DEFAULT_MAX_CONSTANT_SIZE_IN_BYTES
    # The mixed-precision rewrite's switches, resolved (toggles, the enable flag, env vars).
    auto_mixed_precision: bool = False
    auto_mixed_precision_onednn_bfloat16: bool = False
    auto_mixed_precision_cpu: bool = False
    # Overrides for tools and tests: the variants to run (Mode values) and the GPU to assume
    # ({'architecture': '8.0', 'cuda': ..., 'cudnn': ...}; {} = no GPU; None = detect).
    auto_mixed_precision_modes: tuple | None = None
    auto_mixed_precision_gpu: dict | None = None
    # tf.config.optimizer.set_jit: '' or 'autoclustering'.
    jit: str = ""
    # The session's auto-clustering level as TF maps OptimizerOptions.global_jit_level:
    # DEFAULT(0) and OFF are -1, ON_1 is 1, ON_2 is 2; set_jit(True) gives ON_1. The
    # clustering pass applies --tf_xla_auto_jit on top (ndflow/passes/mark_for_compilation.py).
    global_jit_level: int = -1

    def pass_enabled(self, name: str, option: str | None = None,
                     group: str | None = None) -> bool:
        """Whether the optional pipeline pass `name` (of `group`), switched by `option`,
        runs."""
        if self.meta_optimizer_disabled or name in self.disabled_passes or \
                (group is not None and group in self.disabled_passes):
            return False
        return option is None or option not in self.options_off

    def effective_min_graph_nodes(self) -> int:
        return DEFAULT_MIN_GRAPH_NODES if self.min_graph_nodes == 0 else self.min_graph_nodes


def resolve_pass_config(session_config=None) -> PassConfig:
    """The configuration for graphs run with `session_config` (a ConfigProto), or, when None,
    for tf.function graphs and Sessions created without one."""
    if session_config is None:
        rewrite, off = None, frozenset(name for name in optimizer_options.TOGGLES
                                       if optimizer_options.rewriter_toggle(name) is False)
        meta_disabled = optimizer_options.rewriter_bool("disable_meta_optimizer")
        min_nodes = optimizer_options.min_graph_nodes()
        max_constant = DEFAULT_MAX_CONSTANT_SIZE_IN_BYTES
        jit_level = 1 if optimizer_options.get_jit() else -1
    else:
        rewrite = session_config.graph_options.rewrite_options
        opt = session_config.graph_options.optimizer_options
        off = frozenset(f.name for f in rewrite.DESCRIPTOR.fields
                        if f.enum_type is not None and f.enum_type.name == "Toggle"
                        and getattr(rewrite, f.name) == _OFF)
        if opt.opt_level == _L0:
            off |= _L0_OPTIONS
        meta_disabled = bool(rewrite.disable_meta_optimizer)
        min_nodes = rewrite.min_graph_nodes
        max_constant = opt.max_folded_constant_in_bytes or DEFAULT_MAX_CONSTANT_SIZE_IN_BYTES
        jit_level = opt.global_jit_level if opt.global_jit_level > 0 else -1
    amp = _toggle(rewrite, "auto_mixed_precision")
    if amp is None:
        amp = _env_enabled()
    return PassConfig(
        options_off=off, meta_optimizer_disabled=meta_disabled, min_graph_nodes=min_nodes,
        disabled_passes=optimizer_options.passes_off(),
        max_constant_size_in_bytes=max_constant, auto_mixed_precision=amp,
        auto_mixed_precision_onednn_bfloat16=bool(
            _toggle(rewrite, "auto_mixed_precision_onednn_bfloat16")
            or _toggle(rewrite, "auto_mixed_precision_mkl")),
        auto_mixed_precision_cpu=bool(_toggle(rewrite, "auto_mixed_precision_cpu")),
        jit=optimizer_options.get_jit(), global_jit_level=jit_level)


def _toggle(rewrite, name: str) -> bool | None:
    """True (ON/AGGRESSIVE), False (OFF) or None (DEFAULT) for a RewriterConfig toggle; with
    no ConfigProto, the experimental options. `auto_mixed_precision` at DEFAULT is ON once
    enable_mixed_precision_graph_rewrite ran (TF's Session turns it on in every config)."""
    if rewrite is None:
        value = optimizer_options.rewriter_toggle(name)
    else:
        raw = getattr(rewrite, name, 0)
        value = True if raw in (_ON, _AGGRESSIVE) else False if raw == _OFF else None
    if value is None and name == "auto_mixed_precision" and \
            optimizer_options.mixed_precision_graph_rewrite_enabled():
        return True
    return value


def _env_enabled() -> bool:
    """NVIDIA's switch: ..._GRAPH_REWRITE when set, else TF_ENABLE_AUTO_MIXED_PRECISION; a
    malformed value is reported and counts as off (the rewrite never fails a run)."""
    try:
        return env.auto_mixed_precision_graph_rewrite()
    except ValueError as e:
        logging.warning(str(e))
        return False
