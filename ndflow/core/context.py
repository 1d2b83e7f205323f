"""Thread-local execution state: eager vs graph building, default graph, device scope, tapes.

Higher layers plug in here (dependency inversion keeps the core at layer 0):
- the runtime sets `hooks.eager_execute(op_def, inputs, attrs, name, device)`,
  `hooks.default_session()` and `hooks.case(pred_fn_pairs, default, exclusive)` (`tf.case`,
  for the ops whose TF form branches at run time; the last two are imported at first use);
- the autodiff layer pushes tapes on `state().tapes`; the op layer records into them, and
  sets `hooks.vjp(fn, inputs, output_grads)`, which a gradient function (op layer) calls when
  it differentiates a composite of ops (TF's gradients that open a GradientTape).
"""

from __future__ import annotations

import contextlib
import threading
from types import SimpleNamespace

from ndflow.core import devices, lazy_api
from ndflow.core.api_export import tf_export


class _Hooks(SimpleNamespace):
    """The hooks; one that only a runtime module `import ndflow` leaves for first use sets
    (Sessions' and `tf.case`'s) imports that module when first asked for."""

    PROVIDERS = {"default_session": "ndflow.runtime.session",
                 "run_in_session": "ndflow.runtime.session",
                 "case": "ndflow.runtime.functional_ops"}

    def __getattr__(self, name: str):   # only for hooks not set yet
        if name not in _Hooks.PROVIDERS:
            raise AttributeError(name)
        lazy_api.load_module(_Hooks.PROVIDERS[name])
        return self.__dict__[name]


hooks = _Hooks(eager_execute=None, placement_changed=None, vjp=None)

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
    """Whether operations run immediately (eager execution) rather than build a graph.

    True by default in TF2; False inside `tf.function` tracing, inside a `Graph.as_default()`
    block, and after `tf.compat.v1.disable_eager_execution()`.

    Returns:
      A bool.

    Example:
      >>> tf.executing_eagerly()
      True
      >>> with tf.Graph().as_default():
      ...     print(tf.executing_eagerly())
      False
    """
    return _eager_enabled and not _state.graph_stack


def eager_enabled() -> bool:
    return _eager_enabled


def set_eager_enabled(flag: bool) -> None:
    global _eager_enabled
    _eager_enabled = flag


@tf_export(v1=["disable_eager_execution"])
def disable_eager_execution() -> None:
    """Switches the process to TF1 graph mode: ops build into the default graph.

    Call it at program start, before any op or variable is made; run the graph with
    `tf.compat.v1.Session`.
    """
    set_eager_enabled(False)


@tf_export(v1=["enable_eager_execution"])
def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Switches the process back to eager execution, TF2's default.

    Args:
      config: accepted for compatibility (a ConfigProto).
      device_policy: accepted for compatibility.
      execution_mode: accepted for compatibility.

    Example:
      >>> tf.compat.v1.enable_eager_execution()
      >>> tf.executing_eagerly()
      True
    """
    set_eager_enabled(True)


@tf_export(v1=["disable_v2_behavior"])
def disable_v2_behavior() -> None:
    """Turns on TF1 behavior; in ndflow this switches to graph mode.

    The same as `tf.compat.v1.disable_eager_execution()`: call it at program start.
    """
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
    """Whether ops asking for an unavailable device run on an available one instead.

    Returns:
      A bool (True by default, as in TF2); see `tf.config.set_soft_device_placement`.

    Example:
      >>> tf.config.get_soft_device_placement()
      True
    """
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
    """The default graph: the innermost `as_default()` graph, else the global one.

    Returns:
      A `tf.Graph`.

    Example:
      >>> g = tf.Graph()
      >>> with g.as_default():
      ...     tf.compat.v1.get_default_graph() is g
      True
    """
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
    """Adds `value` to the collection `name` of the default graph.

    Args:
      name: the collection's name (e.g. a `tf.compat.v1.GraphKeys` constant).
      value: the value to add.

    Example:
      >>> with tf.Graph().as_default():
      ...     tf.compat.v1.add_to_collection("my_things", 42)
      ...     tf.compat.v1.get_collection("my_things")
      [42]
    """
    get_default_graph().add_to_collection(name, value)


@tf_export(v1=["get_collection"])
def get_collection(key, scope=None) -> list:
    """The values in a collection of the default graph.

    Args:
      key: the collection's name.
      scope: optional regex; only values whose `name` matches it from the start are kept
        (values without a name are dropped when it is given).

    Returns:
      A new list of the values, in the order they were added (empty when executing eagerly).

    Example:
      >>> with tf.Graph().as_default():
      ...     tf.compat.v1.add_to_collection("my_things", 42)
      ...     tf.compat.v1.get_collection("my_things")
      [42]
    """
    return get_default_graph().get_collection(key, scope)


@tf_export(v1=["get_collection_ref"])
def get_collection_ref(key) -> list:
    """The list of a collection of the default graph itself, to change in place.

    Args:
      key: the collection's name; the collection is created (empty) if it does not exist.

    Returns:
      The collection's list; appending to it adds to the collection.

    Example:
      >>> with tf.Graph().as_default():
      ...     tf.compat.v1.get_collection_ref("my_things").append(1)
      ...     tf.compat.v1.get_collection("my_things")
      [1]
    """
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
