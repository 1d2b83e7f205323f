"""The dataflow graph: `Graph` of `Operation`s whose outputs are `SymbolicTensor`s (`op:index`).

A Graph is append-only: passes copy it (`Graph.copy`) and never rewrite the user's graph.
Names, name scopes, device scopes, control-dependency scopes and collections behave as in
TensorFlow (`dense/MatMul`, `add_1`, `with g.device("/GPU:0")`, ...). Operations are
created by the op layer (`ndflow.ops.op_def.apply_op`), which infers dtypes and shapes first.
"""

from __future__ import annotations

import contextlib
import re
import threading

from ndflow.core import context, devices, errors, graph_def, tensor_equality, traceback_utils
from ndflow.core import dtypes as _dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph_collections import GraphCollections
from ndflow.core.graph_keys import GraphKeys  # noqa: F401 - graph.GraphKeys, as TF's ops
from ndflow.core.shapes import TensorShape, as_shape, fmt
from ndflow.core.tensor import OPERATORS as _OPERATORS
from ndflow.core.tensor import Tensor

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class SymbolicTensor(Tensor):
    """Output `value_index` of operation `op`: a symbolic handle in a graph."""

    # _keras_mask: set by Keras layers that mask; _keras_logits: by Keras' softmax/sigmoid
    __slots__ = ("op", "value_index", "dtype", "_shape", "_consumers", "_keras_mask",
                 "_keras_logits", "__weakref__")

    def __init__(self, op: Operation, value_index: int, dtype, shape):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = as_shape(shape)
        self._consumers = []

    @property
    def graph(self) -> Graph:
        return self.op.graph

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        try:
            self._shape = self._shape.merge_with(as_shape(shape))
        except ValueError:
            raise ValueError(f"Tensor's shape {self._shape} is not compatible with supplied "
                             f"shape {as_shape(shape)}.") from None

    def consumers(self) -> list:
        return list(self._consumers)

    # TF2: inside functions traced from eager code `t == 0` is elementwise (tf.equal); in a
    # TF1 graph it is Python identity. Hashing stays by identity either way.
    def __eq__(self, other):
        if other is None or not self.op.graph.elementwise_equality or \
                not tensor_equality.enabled():
            return self is other
        return _OPERATORS["equal"](self, other)

    def __ne__(self, other):
        if other is None or not self.op.graph.elementwise_equality or \
                not tensor_equality.enabled():
            return self is not other
        return _OPERATORS["not_equal"](self, other)

    __hash__ = Tensor.__hash__

    def eval(self, feed_dict=None, session=None):
        return context.hooks.run_in_session(self, feed_dict, session)

    def __iter__(self):
        if self._shape.rank is None or self._shape[0] is None:
            raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
        for i in range(self._shape[0]):
            yield self[i]

    def __len__(self):
        raise TypeError(f"len is not well defined for a symbolic Tensor ({self.name}).")

    def __bool__(self):
        raise errors.OperatorNotAllowedInGraphError(
            "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed. You can attempt "
            "the following resolutions to the problem: If you are running in Graph mode, use "
            "Eager execution mode or decorate this function with @tf.function. If you are "
            "using AutoGraph, you can try decorating this function with @tf.function. If that "
            "does not work, then you may be using an unsupported feature or your source code "
            "may not be visible to AutoGraph.")

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self.dtype.name}>"

    def __str__(self):
        """TF's `Tensor("name:0", shape=..., dtype=...)`: what `print` shows while tracing."""
        shape = f", shape={self._shape}" if self._shape.rank is not None else ""
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name}{device})'


@tf_export("Operation")
class Operation:
    """A node: `type` (TF op name), `inputs`, `control_inputs`, `attrs`, `device`, `outputs`."""

    def __init__(self, graph: Graph, name: str, op_def, inputs, attrs: dict,
                 output_specs, control_inputs=(), device: str = ""):
        self.graph = graph
        self.name = name
        self.op_def = op_def
        self.type = op_def.name
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self.attrs = dict(attrs)
        self.device = device
        self._id = len(graph._ops)
        self.outputs = [SymbolicTensor(self, i, dt, shape)
                        for i, (dt, shape) in enumerate(output_specs)]
        self._control_outputs = []
        # where the user made it (a pass's copy takes the original's: see Graph.copy)
        self._traceback = traceback_utils.user_frames(1) if graph.record_tracebacks else ()
        # the name a tf.RegisterGradient function is registered under, when the op was built
        # inside graph.gradient_override_map (TF's `_gradient_op_type`)
        self.gradient_override = graph._gradient_override_map.get(self.type)
        # on a copy of another graph's op, where that graph's tensors went
        # (ops/forward_copies.py)
        self.forward_copy = None
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    @property
    def inputs(self) -> tuple:
        return tuple(self._inputs)

    @property
    def traceback(self):
        """The user's frames that created this op, outermost first (a StackSummary)."""
        return traceback_utils.as_stack_summary(self._traceback)

    @property
    def control_inputs(self) -> list:
        return list(self._control_inputs)

    @property
    def control_outputs(self) -> list:
        return list(self._control_outputs)

    @property
    def values(self):
        return tuple(self.outputs)

    @property
    def is_stateful(self) -> bool:
        return bool(getattr(self.op_def, "is_stateful", False))

    def get_attr(self, name: str):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)

    def run(self, feed_dict=None, session=None):
        context.hooks.run_in_session(self, feed_dict, session)

    def describe(self) -> str:
        """`name = Type[attrs](inputs)` as TF prints a node in error messages."""
        attrs = ", ".join(f"{k}={_fmt_attr(v)}" for k, v in sorted(self.attrs.items())
                          if k != "value")
        ins = ", ".join(t.op.name if t.value_index == 0 else t.name for t in self._inputs)
        return f"{{{{node {self.name}}}}} = {self.type}[{attrs}]({ins})"

    @property
    def node_def(self):
        """This op as TF's `NodeDef` proto (what `str(op)` prints)."""
        return graph_def.node_def(self)

    def __str__(self):
        return str(self.node_def)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


def _fmt_attr(v):
    if isinstance(v, _dtypes.DType):
        return "DT_" + v.name.upper().replace("FLOAT32", "FLOAT").replace("FLOAT64", "DOUBLE")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, TensorShape):
        return fmt(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt_attr(x) for x in v) + "]"
    return str(v)


@tf_export("Graph")
class Graph(GraphCollections):
    """A TensorFlow graph: operations in creation order plus the scopes used to build them."""

    elementwise_equality = False  # TF1 graphs compare tensors by identity (see FuncGraph)

    def __init__(self):
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._lock = threading.RLock()
        self._name_stack = ""
        self._device_stack: list[devices.DeviceSpec] = []
        self._control_deps: list[list[Operation]] = []
        self._gradient_override_map: dict[str, str] = {}
        self._collections: dict[str, list] = {}
        self._finalized = False
        self.record_tracebacks = True  # ops remember the user frames that made them
        self._unfeedable: set = set()
        self._unfetchable: set = set()
        self.seed = None
        self._last_id = 0
        self._version = 0
        self._container = ""  # `with g.container(name)`: stateful ops' container attr

    # -- creation --------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """TF's naming: scope prefix, then `name`, `name_1`, ... (case-insensitive)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def create_op(self, op_def, inputs, attrs: dict, output_specs, name: str,
                  control_inputs=(), device: str | None = None) -> Operation:
        """Adds an operation. `name` must come from `unique_name` (the op layer does that)."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if not _VALID_OP_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid node name")
        for t in inputs:
            if t.graph is not self:
                raise ValueError(f"Tensor {t!r} must be from the same graph as the op "
                                 f"'{name}' ({op_def.name}).")
        deps = [op for scope in self._control_deps for op in scope]
        seen_inputs = {t.op for t in inputs}
        controls = []
        for c in list(control_inputs) + deps:
            if c.graph is not self:
                raise ValueError(f"Control input {c.name} must be from the same graph.")
            if c not in controls and c not in seen_inputs:
                controls.append(c)
        by_functions = device is None and any(callable(d) for d in self._device_stack)
        if device is None:
            device = "" if by_functions else self._current_device()
        if self._container and op_def.is_stateful and attrs.get("container") == "":
            attrs = dict(attrs, container=self._container)  # TF: only an empty attr is set
        with self._lock:
            op = Operation(self, name, op_def, inputs, attrs, output_specs, controls, device)
            if by_functions:
                try:
                    self._device_from_functions(op)
                except BaseException:  # a failing device function leaves no trace of the op
                    for t in op._inputs:
                        t._consumers.remove(op)
                    for c in op._control_inputs:
                        c._control_outputs.remove(op)
                    raise
            self._ops.append(op)
            self._by_name[name] = op
            self._version += 1
        return op

    def _current_device(self) -> str:
        spec = devices.DeviceSpec()
        for d in self._device_stack:
            if callable(d):
                continue  # a device function acts per op (_device_from_functions)
            spec = spec.make_merged_spec(d) if d is not None else devices.DeviceSpec()
        return spec.to_string()

    def _device_from_functions(self, op) -> str:
        """TF's rule with device functions in scope: innermost scope first, each function
        given the op as placed so far, each string scope filling what is still unset; a
        `device(None)` scope stops the walk."""
        for d in reversed(self._device_stack):
            if d is None:
                break
            if callable(d):
                placed = d(op)
                if isinstance(placed, devices.DeviceSpec):
                    placed = placed.to_string()
                if not isinstance(placed, str):
                    raise TypeError(f"Expected binary or unicode string, got {placed!r}")
                op.device = placed
            else:
                op.device = d.make_merged_spec(
                    devices.DeviceSpec.from_string(op.device)).to_string()
        return op.device

    # -- lookup ----------------------------------------------------------------------------
    def get_operations(self) -> list:
        """Every op of the graph, in the order they were added."""
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        """The op named `name`; KeyError when there is none, TypeError for a non-string."""
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        op = self._by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    def get_tensor_by_name(self, name: str) -> SymbolicTensor:
        """The tensor `"<op_name>:<output_index>"`; ValueError for an op name, KeyError when
        the op or the output does not exist."""
        op_name, sep, idx = name.rpartition(":")
        if not sep or not idx.isdigit():
            raise ValueError(f"The name '{name}' looks a like an Operation name, not a Tensor.")
        op = self.get_operation_by_name(op_name)
        i = int(idx)
        if i >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The "
                           f"operation, '{op_name}', exists but only has {len(op.outputs)} "
                           "outputs.")
        return op.outputs[i]

    def as_graph_element(self, obj, allow_tensor: bool = True,
                             allow_operation: bool = True):
        """TensorFlow's `Graph.as_graph_element`, raising its exact errors."""
        if allow_tensor and allow_operation:
            types_str = "Tensor or Operation"
        elif allow_tensor:
            types_str = "Tensor"
        else:
            types_str = "Operation"
        convert = getattr(obj, "_as_graph_element", None)
        if callable(convert) and not isinstance(obj, (SymbolicTensor, Operation)):
            converted = convert()
            if converted is not None:
                obj = converted
        if isinstance(obj, bytes):
            obj = obj.decode("utf-8")
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation, types_str)
        if isinstance(obj, SymbolicTensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    def _element_by_name(self, name: str, allow_tensor: bool, allow_operation: bool,
                         types_str: str):
        if ":" in name and allow_tensor:
            try:
                op_name, out_n = name.split(":")
                out_n = int(out_n)
            except ValueError:
                raise ValueError(f"The name {name!r} looks a like a Tensor name, but is not a "
                                 "valid one. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\".") from None
            try:
                op = self.get_operation_by_name(op_name)
            except KeyError:
                raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                               f"operation, {op_name!r}, does not exist in the graph.") from None
            if not 0 <= out_n < len(op.outputs):
                raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                               f"operation, {op_name!r}, exists but only has {len(op.outputs)} "
                               "outputs.")
            return op.outputs[out_n]
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {types_str}.")
        if allow_operation:
            try:
                return self.get_operation_by_name(name)
            except KeyError:
                raise KeyError(f"The name {name!r} refers to an Operation not in the "
                               "graph.") from None
        try:
            self.get_operation_by_name(name)
            msg = f"The name {name!r} refers to an Operation, not a {types_str}."
        except KeyError:
            msg = f"The name {name!r} looks like an (invalid) Operation name, not a {types_str}."
        raise ValueError(msg + " Tensor names must be of the form \"<op_name>:<output_index>\".")

    @property
    def version(self) -> int:
        """A number that grows as ops are added (TF: the number of ops made so far)."""
        return self._version

    @property
    def finalized(self) -> bool:
        """Whether `finalize()` was called: no more ops may be added."""
        return self._finalized

    def finalize(self) -> None:
        """Makes the graph read-only: adding an op then raises RuntimeError (as
        `MonitoredSession` does to catch ops made inside the training loop)."""
        self._finalized = True

    # -- feeding and fetching restrictions (checked by Session.run) -------------------------
    def prevent_feeding(self, tensor: SymbolicTensor) -> None:
        """Marks `tensor` as one a Session may not be fed a value for."""
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor: SymbolicTensor) -> bool:
        """Whether a Session may feed `tensor` (not marked by `prevent_feeding`)."""
        return tensor not in self._unfeedable

    def prevent_fetching(self, op: Operation) -> None:
        """Marks `op` (and its outputs) as not fetchable by a Session."""
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op) -> bool:
        """Whether a Session may fetch the tensor or op (not marked by `prevent_fetching`)."""
        op = tensor_or_op.op if isinstance(tensor_or_op, SymbolicTensor) else tensor_or_op
        return op not in self._unfetchable

    # -- scopes ----------------------------------------------------------------------------
    def as_default(self):
        """A context manager making this the default graph: ops made inside go into it."""
        return context.graph_scope(self)

    @contextlib.contextmanager
    def name_scope(self, name):
        """Pushes a name scope and yields it with a trailing '/' ("" for the root)."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):  # re-enter an existing scope exactly
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            self._name_stack = old

    def get_name_scope(self) -> str:
        """The current name scope, without a trailing "/" ("" at the root)."""
        return self._name_stack

    @contextlib.contextmanager
    def device(self, spec):
        """`with g.device("/GPU:0")`; `None` clears the enclosing device scopes; a function
        (TF1's device functions, e.g. replica_device_setter) maps each new op to its device."""
        if callable(spec):
            self._device_stack.append(spec)
        else:
            self._device_stack.append(None if spec is None else
                                      devices.DeviceSpec.from_string(spec))
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def container(self, container_name: str):
        """`with g.container(name)`: stateful ops made inside that have a `container` attr
        get `name` there (their resources are grouped under it)."""
        original, self._container = self._container, container_name
        try:
            yield self._container
        finally:
            self._container = original

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict):
        """Ops of the mapped types built inside take the gradient registered (with
        `tf.RegisterGradient`) under the mapped name."""
        for k, v in op_type_map.items():
            if not (isinstance(k, str) and isinstance(v, str)):
                raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`; `None` clears outer scopes."""
        if control_inputs is None:
            saved, self._control_deps = self._control_deps, []
            try:
                yield
            finally:
                self._control_deps = saved
            return
        ops = []
        for c in control_inputs:
            if isinstance(c, SymbolicTensor):
                c = c.op
            elif hasattr(c, "op") and isinstance(c.op, Operation):  # e.g. a Variable
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
            if c.graph is not self:
                raise ValueError(f"Control input {c.name} must be from the same graph.")
            ops.append(c)
        self._control_deps.append(ops)
        try:
            yield
        finally:
            self._control_deps.pop()

    # -- copying (for passes) --------------------------------------------------------------
    def copy(self) -> tuple[Graph, dict]:
        """A structural copy plus the map old tensor/op -> new tensor/op."""
        g = Graph()
        g.seed = self.seed
        g.record_tracebacks = False
        mapping: dict = {}
        for op in self._ops:
            new = g.create_op(op.op_def, [mapping[t] for t in op._inputs], op.attrs,
                              [(t.dtype, t.shape) for t in op.outputs], op.name,
                              [mapping[c] for c in op._control_inputs], op.device)
            new.gradient_override = op.gradient_override
            new._traceback = op._traceback
            mapping[op] = new
            mapping.update(zip(op.outputs, new.outputs))
        g._names_in_use = dict(self._names_in_use)
        return g, mapping

    def as_graph_def(self, from_version=None, add_shapes: bool = False):
        """This graph as a TensorFlow `GraphDef` proto (`add_shapes` adds `_output_shapes`)."""
        return graph_def.graph_to_graph_def(self, add_shapes=add_shapes)

    def __repr__(self):
        return f"<ndflow Graph with {len(self._ops)} ops>"


context._graph_factory = Graph


def upstream_ops(roots, inputs_of) -> set:
    """`roots` and every op reached from them through `inputs_of(op)` (the ops it needs)."""
    need: set = set()
    stack = list(roots)
    while stack:
        op = stack.pop()
        if op in need:
            continue
        need.add(op)
        stack.extend(inputs_of(op))
    return need
