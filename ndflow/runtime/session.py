"""`tf.compat.v1.Session`: runs fetches of a graph, given feeds, through cached plans.

The first `run` for a given (fetches, targets, feeds and their dtypes/shapes, graph version)
prunes and optimizes a copy of the graph through the pass pipeline and compiles a `Plan`;
later runs with the same signature reuse it. The user's graph (`Session.graph`) is never
modified. Each Session owns its `RuntimeContext`, so variables are per session, as in TF.

    with tf.compat.v1.Session() as sess:
        out = sess.run({"loss": loss, "step": train_op}, feed_dict={x: batch})
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ndflow.core import context, optimizer_options, run_deadline, traceback_utils
from ndflow.core.api_export import tf_export
from ndflow.core.composite_tensor import CompositeTensor
from ndflow.core.errors import OpError, UnimplementedError
from ndflow.core.graph import Graph, Operation
from ndflow.kernels.session_ops import SessionTensors
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.passes.pass_config import resolve_pass_config
from ndflow.runtime import parallel_plan, placement_log, session_handles, threads
from ndflow.runtime.compile import compile_plan
from ndflow.runtime.config_proto import ConfigProto, session_settings
from ndflow.runtime.fetch_mapper import FetchMapper
from ndflow.runtime.plan import Plan, resolve_device
from ndflow.runtime.session_values import feed_array, feed_to_aten, fetch_value
from ndflow.runtime.state import RuntimeContext

MAX_CACHED_PLANS = 64


class _DefaultSessions(threading.local):
    def __init__(self):
        self.stack: list = []


_defaults = _DefaultSessions()


@tf_export(v1=["get_default_session"])
def get_default_session() -> Session | None:
    """`tf.compat.v1.get_default_session`: the innermost `as_default()` session, or None."""
    return _defaults.stack[-1] if _defaults.stack else None


class _CachedPlan:
    __slots__ = ("plan", "feed_devices")

    def __init__(self, plan: Plan, feed_devices: list):
        self.plan = plan
        self.feed_devices = feed_devices


@tf_export(v1=["Session"])
class Session:
    """A TF1 session on one graph (the default graph unless `graph` is given)."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None):
        self._closed = True  # until fully constructed (close() and __del__ stay safe)
        if target is not None and not isinstance(target, (str, bytes)):
            hint = (' Did you do "Session(config)" instead of "Session(config=config)"?'
                    if isinstance(target, ConfigProto) else "")
            raise TypeError("Argument `target` must be a string, but got "
                            f'"{type(target).__name__}".{hint}')
        if target:
            raise UnimplementedError(None, None, f"ndflow sessions run in this process only; "
                                     f"target {target!r} is not supported (use target='').")
        if graph is None:
            graph = context.get_default_graph()
        elif not isinstance(graph, Graph):
            raise TypeError(f'Argument `graph` must be a tf.Graph, but got '
                            f'"{type(graph).__name__}"')
        self._settings = session_settings(config)
        optimizer_options.note_session_created()
        self._config = config if config is not None else ConfigProto()
        # Without a ConfigProto the graph passes follow tf.config.optimizer, as TF's Session
        # takes the eager context's config then.
        self._pass_config_proto = config
        self._graph = graph
        self._ctx = RuntimeContext()
        self._ctx.session_tensors = SessionTensors()  # get_session_handle's store
        self._plans: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.RLock()
        self._context_managers: list | None = None
        self.plans_built = 0
        if self._settings.intra_op_parallelism_threads > 0:
            threads.set_configured_threads(self._settings.intra_op_parallelism_threads,
                                           "ConfigProto.intra_op_parallelism_threads")
        self._closed = False

    # -- properties ----------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The graph this session runs (the user's graph, never optimized in place)."""
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return ""

    @property
    def runtime_context(self) -> RuntimeContext:
        return self._ctx

    def list_devices(self) -> list:
        return [_DeviceAttributes("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0)]

    # -- default session and context manager -------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Makes this the default session for `Tensor.eval()` / `Operation.run()`."""
        _defaults.stack.append(self)
        try:
            yield self
        finally:
            _remove_last(_defaults.stack, self)

    def __enter__(self):
        if self._context_managers is not None:
            raise RuntimeError("Session context managers are not re-entrant. Use "
                               "`Session.as_default()` if you want to enter a session "
                               "multiple times.")
        graph_cm, session_cm = self._graph.as_default(), self.as_default()
        graph_cm.__enter__()
        session_cm.__enter__()
        self._context_managers = [graph_cm, session_cm]
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        managers, self._context_managers = self._context_managers or [], None
        for cm in reversed(managers):
            cm.__exit__(exc_type, exc_value, traceback)
        self.close()

    def close(self) -> None:
        """Frees the session's plans and resources; later `run` calls raise RuntimeError."""
        if self._closed:
            return
        with self._lock:
            self._closed = True
            self._plans.clear()
            for resource in list(self._ctx.resources.values()):
                cancel = getattr(resource, "cancel_on_session_close", None)
                if cancel is not None:  # a queue: wake its waiting ops (TF: cancelled)
                    cancel()
            self._ctx.clear()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    # -- running -------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None) -> Any:
        """Runs the ops needed for `fetches`; returns their values in the same structure."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if not self._graph.get_operations():
            raise RuntimeError("The Session graph is empty. Add operations to the graph "
                               "before calling run().")
        feeds = self._convert_feeds(feed_dict)
        mapper = FetchMapper(self._graph, fetches)
        tensors, targets = [], []
        for el in mapper.unique_elements:
            if isinstance(el, Operation):
                targets.append(el)
            elif el not in feeds:
                tensors.append(el)
        values: dict = {}
        if tensors or targets:
            timeout_ms = getattr(options, "timeout_in_ms", 0) if options is not None else 0
            if timeout_ms > 0:  # queue ops waiting past it raise DeadlineExceededError
                with run_deadline.deadline_after(timeout_ms):
                    outs = self._run_plan(tensors, targets, feeds)
            else:
                outs = self._run_plan(tensors, targets, feeds)
            values.update((t, session_handles.wrap_fetched(self, t, fetch_value(v, t.dtype)))
                          for t, v in zip(tensors, outs))
        for el in mapper.unique_elements:
            if isinstance(el, Operation):
                values[el] = None
            elif el in feeds:
                values[el] = feeds[el]
        return mapper.build(values)

    def make_callable(self, fetches, feed_list=None, accept_options: bool = False) -> Callable:
        """A function `f(*feed_values)` running `fetches` with `feed_list` fed in order."""
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            if len(args) != len(feed_list):
                raise TypeError(f"Expected {len(feed_list)} feed values, got {len(args)}")
            return self.run(fetches, dict(zip(feed_list, args)), **kwargs)
        return call

    def _convert_feeds(self, feed_dict) -> dict:
        if not feed_dict:
            return {}
        if not isinstance(feed_dict, Mapping):
            raise TypeError("Argument `feed_dict` must be a dictionary, got "
                            f"{type(feed_dict).__name__}")
        feeds: dict = {}
        items = []
        for key, value in feed_dict.items():
            if isinstance(key, CompositeTensor):  # a RaggedTensor: its components are fed
                items += zip(key._to_components(), key._feed_components(value))
            elif isinstance(key, SparseTensor):  # fed from a SparseTensorValue / 3-tuple
                items += zip(key, value)
            else:
                items.append((key, value))
        for key, value in items:
            try:
                t = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
            except Exception as e:  # noqa: BLE001 - TF reports every lookup failure this way
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") \
                    from None
            arr = feed_array(t, session_handles.fed_value(self, t, value), key)
            if not self._graph.is_feedable(t):
                raise ValueError(f"Tensor {t.name} may not be fed.")
            feeds[t] = arr
        return feeds

    def _run_plan(self, tensors: list, targets: list, feeds: dict) -> list:
        fed = sorted(feeds, key=lambda t: t.name)
        key = (tuple(t.name for t in tensors), tuple(op.name for op in targets),
               tuple((t.name, feeds[t].dtype.str, feeds[t].shape) for t in fed),
               self._graph.version)
        with self._lock:
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            entry = self._plans.get(key)
            if entry is None:
                entry = self._build_plan(tensors, targets, fed, feeds)
                self._plans[key] = entry
                if len(self._plans) > MAX_CACHED_PLANS:
                    self._plans.popitem(last=False)
            else:
                self._plans.move_to_end(key)
        args = [feed_to_aten(feeds[t], t.dtype, dev) for t, dev in zip(fed, entry.feed_devices)]
        try:
            return entry.plan.run(args)
        except OpError as e:
            raise self._user_error(e) from None

    def _build_plan(self, tensors: list, targets: list, fed: list, feeds: dict) -> _CachedPlan:
        soft = self._settings.allow_soft_placement
        try:
            plan = compile_plan(self._graph, fed, tensors, targets,
                                resolve_pass_config(self._pass_config_proto), self._ctx, soft,
                                feed_specs={t.name: (t.dtype, feeds[t].shape) for t in fed})
            devices = [resolve_device(t.op.device, soft, t.op) for t in plan.feeds]
            parallel_plan.set_plan_threads(plan, self._settings.inter_op_parallelism_threads)
        except OpError as e:
            raise self._user_error(e) from None
        self.plans_built += 1
        if self._settings.log_device_placement and not placement_log.enabled():
            placement_log.log_nodes(plan.placements)  # (else the plan's build logged them)
        return _CachedPlan(plan, devices)

    def _user_error(self, e: OpError) -> OpError:
        """The same error, with `op` pointing at the user's graph rather than the plan's."""
        op = e.op
        if op is not None and getattr(op, "graph", None) is not self._graph:
            try:
                op = self._graph.get_operation_by_name(op.name)
            except (KeyError, TypeError):
                op = None
        node = getattr(e, "failed_node", None)
        message = e.message
        if node is not None and node[1]:  # TF1's wording: the node, then where it was made
            name, frames = node
            message = (f"Graph execution error:\n\nDetected at node '{name}' defined at (most "
                       f"recent call last):\n{traceback_utils.format_frames(frames, '    ', False)}"
                       f"Node: '{name}'\n{message}")
        err = type(e)(e.node_def, op, message)
        err.failed_node = node
        return err


@tf_export(v1=["InteractiveSession"])
class InteractiveSession(Session):
    """A Session that installs itself (and its graph) as the default on construction."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None):
        super().__init__(target, graph, config)
        self._interactive_cms = [self._graph.as_default(), self.as_default()]
        for cm in self._interactive_cms:
            cm.__enter__()

    def close(self) -> None:
        cms, self._interactive_cms = getattr(self, "_interactive_cms", None) or [], []
        for cm in reversed(cms):
            with contextlib.suppress(Exception):
                cm.__exit__(None, None, None)
        super().close()


class _DeviceAttributes(collections.namedtuple("_DeviceAttributes",
                                               "name device_type memory_limit_bytes")):
    __slots__ = ()


def _remove_last(stack: list, item) -> None:
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is item:
            del stack[i]
            return


# -- Tensor.eval() / Operation.run() --------------------------------------------------------------

def run_in_session(element, feed_dict=None, session=None) -> Any:
    """Evaluates a tensor or runs an operation in `session` or the default session."""
    is_op = isinstance(element, Operation)
    graph = element.graph
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(
                "Cannot execute operation using `run()`: No default session is registered. "
                "Use `with sess.as_default():` or pass an explicit session to "
                "`run(session=sess)`" if is_op else
                "Cannot evaluate tensor using `eval()`: No default session is registered. Use "
                "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        if session.graph is not graph:
            raise ValueError(
                "Cannot use the default session to execute operation: the operation's graph is "
                "different from the session's graph. Pass an explicit session to "
                "run(session=sess)." if is_op else
                "Cannot use the default session to evaluate tensor: the tensor's graph is "
                "different from the session's graph. Pass an explicit session to "
                "`eval(session=sess)`.")
    elif session.graph is not graph:
        raise ValueError(
            "Cannot use the given session to execute operation: the operation's graph is "
            "different from the session's graph." if is_op else
            "Cannot use the given session to evaluate tensor: the tensor's graph is different "
            "from the session's graph.")
    return session.run(element, feed_dict)


context.hooks.run_in_session = run_in_session
context.hooks.default_session = get_default_session
