"""Thread-local execution state: eager vs graph building, default graph, device scope, tapes.

Higher layers plug in here (dependency inversion keeps the core at layer 0):
- the runtime sets `hooks.eager_execute(op_def, inputs, attrs, name, device)`,
  `hooks.default_session()` and `hooks.case(pred_fn_pairs, default, exclusive)` (`tf.case`,
  for the ops whose TF form branches at run time);
- the autodiff layer pushes tapes on `state().tapes`; the op layer records into them, and
  sets `hooks.vjp(fn, inputs, output_grads)`, which a gradient function (op layer) calls when
  it differentiates a composite of ops (TF's gradients that open a GradientTape).
"""

from __future__ import annotations

import contextlib
import threading
from types import SimpleNamespace

from ndflow.core import devices
from ndflow.core.api_export import tf_export

hooks = SimpleNamespace(eager_execute=None, default_session=None, run_in_session=None,
                        placement_changed=None, vjp=None, case=None)

_eager_enabled = True
_soft_device_placement = True  # tf.config.set_soft_device_placement (TF 2 default: on)
_global_default_graph = None
_graph_factory = None  # set by graph.py (same layer) to break the module cycle


class _State(threading.local):
    def __init__(self):
        self.graph_stack = []
        self.device_stack = [""]  # eager-mode device scope
        self.name_scope = ""  # eager-mode name scope ("outer/inner"), names variables
        self.tapes = []
        self.seed = None  # eager global seed (tf.random.set_seed)
        self.seed_counter = 0
        self.recording_paused = 0
        # ForwardCopy objects of the copied ops whose gradient functions are running
        # (ops/forward_copies.py)
        self.forward_copies = []


_state = _State()


def state() -> _State:
    return _state


@tf_export("executing_eagerly")
def executing_eagerly() -> bool:
    """`tf.executing_eagerly`: whether ops run now (not while building a graph)."""
    return _eager_enabled and not _state.graph_stack


def eager_enabled() -> bool:
    return _eager_enabled


def set_eager_enabled(flag: bool) -> None:
    global _eager_enabled
    _eager_enabled = flag


@tf_export(v1=["disable_eager_execution"])
def disable_eager_execution() -> None:
    """Switches the process to TF1 graph mode: ops build into the default graph."""
    set_eager_enabled(False)


@tf_export(v1=["enable_eager_execution"])
def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Switches the process back to eager execution (TF2's default)."""
    set_eager_enabled(True)


@tf_export(v1=["disable_v2_behavior"])
def disable_v2_behavior() -> None:
    """TF1 behaviour: graph mode (the only TF2 behaviour ndflow switches)."""
    disable_eager_execution()


@tf_export(v1=["enable_v2_behavior"])
def enable_v2_behavior() -> None:
    """Turns on TF2 behavior; in ndflow this enables eager execution.

    Call it at program start, before any graph or op is made.

    Example:
      >>> tf.compat.v1.enable_v2_behavior()
      >>> tf.executing_eagerly()
      True
    """
    enable_eager_execution()


@tf_export("config.get_soft_device_placement")
def soft_device_placement() -> bool:
    """Whether ops asking for an unavailable device run on the CPU instead (TF 2 default)."""
    return _soft_device_placement


@tf_export("config.set_soft_device_placement")
def set_soft_device_placement(enabled: bool) -> None:
    """Sets whether ops asking for an unavailable device run on an available one instead.

    With it on (the TF2 default), an op placed on a GPU that does not exist or has no kernel
    for it runs on the CPU; with it off, placement errors are raised.

    Args:
      enabled: a bool.

    Example:
      >>> tf.config.set_soft_device_placement(True)
      >>> tf.config.get_soft_device_placement()
      True
    """
    global _soft_device_placement
    _soft_device_placement = bool(enabled)
    if hooks.placement_changed is not None:
        hooks.placement_changed()  # eager kernels cached with the old placement


@tf_export(v1=["get_default_graph"])
def get_default_graph():
    """The innermost `as_default()` graph, else the process-wide global default graph."""
    if _state.graph_stack:
        return _state.graph_stack[-1]
    global _global_default_graph
    if _global_default_graph is None:
        _global_default_graph = _graph_factory()
    return _global_default_graph


@tf_export(v1=["reset_default_graph"])
def reset_default_graph() -> None:
    """Replaces the global default graph with a new, empty one.

    Existing graphs, and the tensors and ops in them, are not affected.

    Raises:
      AssertionError: if called inside a `Graph.as_default()` block.

    Example:
      >>> tf.compat.v1.reset_default_graph()
    """
    if _state.graph_stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs.")
    global _global_default_graph
    _global_default_graph = _graph_factory()


@tf_export(v1=["add_to_collection"])
def add_to_collection(name, value) -> None:
    """`tf.compat.v1.add_to_collection` on the default graph."""
    get_default_graph().add_to_collection(name, value)


@tf_export(v1=["get_collection"])
def get_collection(key, scope=None) -> list:
    """`tf.compat.v1.get_collection` of the default graph."""
    return get_default_graph().get_collection(key, scope)


@tf_export(v1=["get_collection_ref"])
def get_collection_ref(key) -> list:
    """`tf.compat.v1.get_collection_ref` of the default graph."""
    return get_default_graph().get_collection_ref(key)


@contextlib.contextmanager
def graph_scope(graph):
    _state.graph_stack.append(graph)
    try:
        yield graph
    finally:
        _state.graph_stack.pop()


@contextlib.contextmanager
def eager_device_scope(spec: str):
    parent = devices.DeviceSpec.from_string(_state.device_stack[-1])
    merged = parent.make_merged_spec(devices.DeviceSpec.from_string(spec or ""))
    _state.device_stack.append(merged.to_string() if spec else "")
    try:
        yield
    finally:
        _state.device_stack.pop()


def eager_device() -> str:
    return _state.device_stack[-1]


@contextlib.contextmanager
def stop_recording():
    _state.recording_paused += 1
    try:
        yield
    finally:
        _state.recording_paused -= 1


def active_tapes():
    return _state.tapes if not _state.recording_paused else ()


@contextlib.contextmanager
def eager_scope():
    """Runs the block eagerly even while a graph is being built or run (the Python function of
    a py_function op): no default graph, eager execution on, and the surrounding tapes
    hidden (the op itself is what they record)."""
    global _eager_enabled
    saved = (_state.graph_stack, _state.tapes, _state.recording_paused, _eager_enabled)
    _state.graph_stack, _state.tapes, _state.recording_paused = [], [], 0
    _eager_enabled = True
    try:
        yield
    finally:
        _state.graph_stack, _state.tapes, _state.recording_paused, _eager_enabled = saved
