"""Process-wide graph-optimizer options: `tf.config.optimizer.set_experimental_options`.

TensorFlow keeps a dict in the eager context; every option is a RewriterConfig toggle
(True -> ON, False -> OFF, missing -> DEFAULT), a plain bool (`disable_model_pruning`,
`disable_meta_optimizer`) or `min_graph_nodes`. `get_experimental_options()` reports the
options in RewriterConfig order with TensorFlow's types: toggles only when set, the two
plain bools always, `min_graph_nodes` only when non-zero. Unknown keys are accepted and
ignored, as TensorFlow does.

ndflow extension: `auto_mixed_precision_cpu` (a RewriterConfig field that TensorFlow's
Python context does not forward) is kept here too so tests can force the CPU float16
emulation mode; it is reported after `auto_mixed_precision_mkl`.

The "mixed precision graph rewrite enabled" flag that
`tf.train.experimental.enable_mixed_precision_graph_rewrite` sets alongside the
`auto_mixed_precision` option lives here as well (TF's `mixed_precision_global_state`).

    set_experimental_options({'auto_mixed_precision_onednn_bfloat16': True})
    rewriter_toggle('auto_mixed_precision_onednn_bfloat16')  # -> True (None = DEFAULT)
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ndflow.core.api_export import tf_export

# RewriterConfig toggles in the order TensorFlow's context reports them ("toggle") and the
# plain bools ("bool").
_OPTIONS: tuple[tuple[str, str], ...] = (
    ("layout_optimizer", "toggle"),
    ("constant_folding", "toggle"),
    ("shape_optimization", "toggle"),
    ("remapping", "toggle"),
    ("arithmetic_optimization", "toggle"),
    ("dependency_optimization", "toggle"),
    ("loop_optimization", "toggle"),
    ("function_optimization", "toggle"),
    ("debug_stripper", "toggle"),
    ("disable_model_pruning", "bool"),
    ("scoped_allocator_optimization", "toggle"),
    ("pin_to_host_optimization", "toggle"),
    ("implementation_selector", "toggle"),
    ("auto_mixed_precision", "toggle"),
    ("use_plugin_optimizers", "toggle"),
    ("disable_meta_optimizer", "bool"),
    ("auto_mixed_precision_onednn_bfloat16", "toggle"),
    ("auto_mixed_precision_mkl", "toggle"),
    ("auto_mixed_precision_cpu", "toggle"),
)
TOGGLES = tuple(name for name, kind in _OPTIONS if kind == "toggle")
BOOLS = tuple(name for name, kind in _OPTIONS if kind == "bool")

_lock = threading.Lock()
_options: dict[str, Any] = {}
_jit: bool | None = None
_graph_rewrite_enabled = False
_non_mixed_precision_session_created = False
_version = 0
# Each distinct setting of the options gets one id, which `version()` returns: a plan cached
# per id stays valid when a setting is turned off and on again (TF caches a function's
# instantiation per config proto the same way), so toggling `set_jit` between calls of two
# functions does not rebuild either's plan.
_state_ids: dict = {}
_next_id = 1


def _state_key() -> tuple:
    return (tuple(sorted((k, repr(v)) for k, v in _options.items())), _jit,
            _graph_rewrite_enabled)


def _bump(fresh: bool = False) -> None:
    """The options changed (under `_lock`); `fresh`: forget every earlier id."""
    global _version, _next_id
    if fresh:
        _state_ids.clear()
    key = _state_key()
    if key not in _state_ids:
        _state_ids[key] = _next_id
        _next_id += 1
    _version = _state_ids[key]


@tf_export("config.optimizer.set_experimental_options")
def set_experimental_options(options: Mapping[str, Any]) -> None:
    """Merges `options` into the process-wide options (TF: dict.update; unknown keys kept
    but without effect). `min_graph_nodes` must be an int (TypeError otherwise, as the
    RewriterConfig proto field would raise)."""
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict, got {type(options).__name__}")
    nodes = options.get("min_graph_nodes")
    if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, int)):
        raise TypeError(f"{nodes!r} has type {type(nodes).__name__}, but expected one of: int")
    with _lock:
        _options.update(options)
        _bump()


def passes_off() -> frozenset:
    """The keys set to False that are not TensorFlow's options: names of ndflow's own graph
    passes to switch off (TensorFlow keeps unknown keys without effect)."""
    known = {name for name, _ in _OPTIONS} | {"min_graph_nodes"}
    with _lock:
        return frozenset(k for k, v in _options.items() if v is False and k not in known)


@tf_export("config.optimizer.get_experimental_options")
def get_experimental_options() -> dict[str, Any]:
    """The options in effect, typed and ordered as TensorFlow reports them."""
    with _lock:
        result: dict[str, Any] = {}
        for name, kind in _OPTIONS:
            value = _options.get(name)
            if kind == "bool":
                result[name] = bool(value) if value is not None else False
            elif value is not None:
                result[name] = bool(value)
        nodes = _options.get("min_graph_nodes")
        if nodes:
            result["min_graph_nodes"] = int(nodes)
        return result


def rewriter_toggle(name: str) -> bool | None:
    """True (ON), False (OFF) or None (DEFAULT: not set) for a RewriterConfig toggle."""
    with _lock:
        value = _options.get(name)
    return None if value is None else bool(value)


def rewriter_bool(name: str) -> bool:
    with _lock:
        return bool(_options.get(name, False))


def min_graph_nodes() -> int:
    """`min_graph_nodes` as set (0 = not set: the meta-optimizer's default of 4 applies)."""
    with _lock:
        return int(_options.get("min_graph_nodes") or 0)


@tf_export("config.optimizer.set_jit")
def set_jit(enabled: bool | str) -> None:
    """`tf.config.optimizer.set_jit`: True or 'autoclustering' turn auto-clustering on,
    anything else turns it off."""
    global _jit
    with _lock:
        _jit = enabled in (True, "autoclustering")
        _bump()


@tf_export("config.optimizer.get_jit")
def get_jit() -> str:
    """'autoclustering' when auto-clustering was turned on with `set_jit`, else ''."""
    with _lock:
        return "autoclustering" if _jit else ""


def jit_setting() -> bool | None:
    """The set_jit value (None when never called)."""
    with _lock:
        return _jit


def set_mixed_precision_graph_rewrite_enabled(enabled: bool) -> None:
    """The global flag set by enable/disable_mixed_precision_graph_rewrite (TF's
    mixed_precision_global_state.mixed_precision_graph_rewrite_is_enabled)."""
    global _graph_rewrite_enabled
    with _lock:
        _graph_rewrite_enabled = bool(enabled)
        _bump()


def mixed_precision_graph_rewrite_enabled() -> bool:
    with _lock:
        return _graph_rewrite_enabled


def note_session_created() -> None:
    """A Session is being created: remember it if it will not use the graph rewrite (TF warns
    on a later enable_mixed_precision_graph_rewrite that it cannot affect that Session)."""
    global _non_mixed_precision_session_created
    with _lock:
        if not _graph_rewrite_enabled:
            _non_mixed_precision_session_created = True


def non_mixed_precision_session_created() -> bool:
    with _lock:
        return _non_mixed_precision_session_created


def version() -> int:
    """The id of the current setting of the options: equal ids, equal settings (lets
    callers cache derived state per setting)."""
    return _version


def reset() -> None:
    """Forgets every option and flag (for tests)."""
    global _jit, _graph_rewrite_enabled, _non_mixed_precision_session_created
    with _lock:
        _options.clear()
        _jit = None
        _graph_rewrite_enabled = False
        _non_mixed_precision_session_created = False
        _bump(fresh=True)
