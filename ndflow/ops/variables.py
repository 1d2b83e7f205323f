"""`tf.Variable`: a resource variable, in eager mode, TF1 graphs and `tf.function` graphs.

Eager: `VarHandleOp` runs once, in the eager runtime context, with a unique shared name; the
handle is an EagerTensor (dtype resource) wrapping the `Resource`. When the variable is
garbage-collected a `DestroyResourceOp` frees the storage.

Graph: the ops and names are TensorFlow's — `Variable` (VarHandleOp),
`Variable/Initializer/initial_value`, `Variable/IsInitialized/VarIsInitializedOp`,
`Variable/Assign` (the initializer), `Variable/Read/ReadVariableOp` — and the variable joins
the GLOBAL_VARIABLES (and TRAINABLE_VARIABLES) collections.

`tf.function`: a variable created outside and read inside is captured through its `handle`
(the function graph captures EagerTensors of dtype resource); reads emit ReadVariableOp on
the captured handle. Every read notifies the active tapes (`tape.variable_accessed`), so
GradientTape watches trainable variables automatically; gradients flow to `handle`.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import weakref

import numpy as np

from ndflow.core import context, dtypes, errors, tensor_equality
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys, Operation, SymbolicTensor
from ndflow.core.scopes import get_name_scope, init_scope
from ndflow.core.shapes import TensorShape, as_shape
from ndflow.core.tensor import (
    BINARY_OPERATORS,
    OPERATORS,
    UNARY_OPERATORS,
    EagerTensor,
    NativeObject,
    apply_binary,
)
from ndflow.ops import state, state_scatter_nd, state_slice_assign, state_sparse
from ndflow.ops.apply import convert_to_tensor, register_tensor_conversion_function
from ndflow.ops.array_core import identity
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.random import name_scope
from ndflow.ops.variable_creators import create_through, creator_arguments, variable_creator_stack
from ndflow.ops.variable_enums import VariableAggregation, VariableSynchronization

_uid = itertools.count()


def _destroy(handle) -> None:
    """Frees an eager variable's storage (runs eagerly whatever mode is current)."""
    try:
        context.hooks.eager_execute(state.DestroyResourceOp, [handle],
                                    {"ignore_lookup_error": True})
    except Exception:  # noqa: BLE001 - interpreter shutdown, runtime already gone ...
        pass


class VariableRef:
    """`var.ref()`: a hashable reference (TF's `Reference`), `deref()` gives the variable."""

    __slots__ = ("_var",)

    def __init__(self, var):
        self._var = var

    def deref(self):
        return self._var

    def __hash__(self):
        return id(self._var)

    def __eq__(self, other):
        return isinstance(other, VariableRef) and other._var is self._var

    def __repr__(self):
        return f"<Reference wrapping {self._var!r}>"

class VariableMetaclass(type):
    """Routes `tf.Variable(...)` (the class itself, not subclasses such as Keras' weights)
    through the active creators, as TensorFlow's VariableMetaclass does."""

    def __call__(cls, *args, **kwargs):
        stack = variable_creator_stack()
        if cls is not Variable:
            return super().__call__(*args, **kwargs)
        made = ResourceVariable   # what tf.Variable(...) makes, as in TensorFlow
        if not stack:
            return type.__call__(made, *args, **kwargs)
        bound = _VARIABLE_SIGNATURE.bind(None, *args, **kwargs)
        given = dict(bound.arguments)
        given.pop("self")
        kwargs = creator_arguments(given)

        def base(**kw):
            return type.__call__(made, **kw)

        return create_through(stack, base, kwargs)


# What `Variable.scatter_<kind>` does to the rows `sparse_delta.indices` (its docstring).
_SCATTER_DOCS = {
    "add": "Adds the rows of `sparse_delta.values` to the rows `sparse_delta.indices`",
    "sub": "Subtracts the rows of `sparse_delta.values` from the rows `sparse_delta.indices`",
    "mul": "Multiplies the rows `sparse_delta.indices` by the rows of `sparse_delta.values`",
    "div": "Divides the rows `sparse_delta.indices` by the rows of `sparse_delta.values`",
    "min": "The elementwise minimum of the rows `sparse_delta.indices` and `sparse_delta.values`",
    "max": "The elementwise maximum of the rows `sparse_delta.indices` and `sparse_delta.values`",
    "update": "Writes the rows of `sparse_delta.values` into the rows `sparse_delta.indices`",
}


def _scatter_method(kind: str):
    """`Variable.scatter_<kind>`: ResourceScatter<Kind> of an IndexedSlices (`_scatter`)."""
    def method(self, sparse_delta, use_locking=False, name=None):
        return self._scatter(kind, sparse_delta, name)

    method.__name__ = f"scatter_{kind}"
    method.__qualname__ = f"Variable.scatter_{kind}"
    method.__doc__ = (f"{_SCATTER_DOCS[kind]}\n        (an `IndexedSlices`; "
                      f"ResourceScatter{kind.capitalize()}); the other rows are not touched.")
    return method


@tf_export("Variable")
class Variable(NativeObject, metaclass=VariableMetaclass):
    """A resource variable (`tf.Variable`, also `tf.compat.v1.Variable`)."""

    __array_priority__ = 100  # NumPy defers to our reflected operators
    _save_slice_info = None  # a partitioned variable's part: its SaveSliceInfo

    def _set_save_slice_info(self, save_slice_info) -> None:
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    def __init__(self, initial_value=None, trainable=None, validate_shape: bool = True,
                 caching_device=None, name: str | None = None, variable_def=None, dtype=None,
                 import_scope=None, constraint=None, synchronization=None, aggregation=None,
                 shape=None, collections=None, use_resource=None,
                 experimental_enable_variable_lifting=True, expected_shape=None):
        # expected_shape: TF1's deprecated argument, ignored by TensorFlow too.
        if initial_value is None:
            raise ValueError("The `initial_value` arg to `tf.Variable` must be specified "
                             "except when you are not providing a `variable_def`. You provided "
                             "neither.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"Argument `constraint` must be None or a callable. a callable "
                             f"is got: {constraint!r}")
        self._trainable = True if trainable is None else bool(trainable)
        self._constraint = constraint
        self._synchronization = VariableSynchronization.AUTO if synchronization is None \
            else synchronization
        self._aggregation = VariableAggregation.NONE if aggregation is None else aggregation
        self._initializer_op = None
        self._initial_value = None
        self._graph_element = None
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._unique_id = next(_uid)
        with init_scope():   # TF lifts variables made in a function or a loop body
            if context.executing_eagerly():
                scope = get_name_scope()  # TF names eager variables inside name scopes
                name = name or "Variable"
                self._init_eager(initial_value, f"{scope}/{name}" if scope else name,
                                 validate_shape, shape)
            else:
                self._init_graph(initial_value, name, validate_shape, shape, collections)

    # -- construction ----------------------------------------------------------------------------
    def _initial_tensor(self, initial_value, name=None):
        init = initial_value() if callable(initial_value) else initial_value
        t = convert_to_tensor(init, dtype=self._dtype, name=name)
        self._dtype = t.dtype
        if self._dtype is dtypes.resource:
            raise TypeError("A Variable cannot hold resource values.")
        return t

    def _declared_shape(self, value_shape: TensorShape, validate_shape: bool, shape):
        if shape is not None:
            shape = as_shape(shape)
            if not shape.is_compatible_with(value_shape):
                raise ValueError(f"The initial value's shape ({value_shape}) is not compatible "
                                 f"with the explicitly supplied `shape` argument ({shape}).")
            return shape
        return value_shape if validate_shape else TensorShape(None)

    def _init_eager(self, initial_value, name, validate_shape, shape):
        value = self._initial_tensor(initial_value)
        self._shape = self._declared_shape(value.shape, validate_shape, shape)
        self._name = name + ":0"
        self._shared_name = name
        self._handle = state.var_handle_op(self._dtype, self._shape,
                                           shared_name=f"{name}_{self._unique_id}")
        state.assign_variable_op(self._handle, value)
        weakref.finalize(self, _destroy, self._handle)

    def _init_graph(self, initial_value, name, validate_shape, shape, collections):
        graph = context.get_default_graph()
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            handle_name = scope[:-1]
            with graph.name_scope("Initializer"):
                value = self._initial_tensor(initial_value, name="initial_value")
            self._shape = self._declared_shape(value.shape, validate_shape, shape)
            self._handle = state.var_handle_op(self._dtype, self._shape,
                                               shared_name=handle_name, name=handle_name,
                                               exact_name=True)
            with graph.name_scope("IsInitialized"):
                self._is_initialized_op = state.var_is_initialized_op(self._handle)
            self._initializer_op = state.assign_variable_op(self._handle, value, name="Assign")
            with graph.name_scope("Read"):
                self._graph_element = self._raw_read()
        self._initial_value = value
        self._name = self._handle.name
        self._shared_name = handle_name
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if self._trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        for key in dict.fromkeys(collections):
            graph.add_to_collection(key, self)

    # -- properties ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The variable's name, ending in `:0` as a tensor name (`"dense/kernel:0"`)."""
        return self._name

    @property
    def dtype(self):
        """The `tf.DType` of the values the variable holds."""
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        """The `tf.TensorShape` fixed when the variable was made (`shape=` may leave dims
        unknown)."""
        return self._shape

    def get_shape(self) -> TensorShape:
        """The same as `shape` (TF1's spelling)."""
        return self._shape

    @property
    def trainable(self) -> bool:
        """Whether the variable is in `trainable_variables` (a GradientTape watches it
        automatically)."""
        return self._trainable

    @property
    def handle(self):
        """The resource tensor (dtype `resource`) that ops such as ReadVariableOp take."""
        return self._handle

    @property
    def op(self):
        """Graph mode: the VarHandleOp that makes the handle; AttributeError eagerly."""
        if isinstance(self._handle, EagerTensor):
            raise AttributeError("Tensor.op is undefined when eager execution is enabled.")
        return self._handle.op

    @property
    def graph(self):
        """Graph mode: the `tf.Graph` the variable lives in; AttributeError eagerly."""
        if isinstance(self._handle, EagerTensor):
            raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")
        return self._handle.graph

    @property
    def device(self) -> str:
        """The device the variable's value is placed on (`"/job:localhost/replica:0/task:0/
        device:CPU:0"`)."""
        return self._handle.device

    @property
    def initializer(self):
        """The op that assigns the initial value (TF1: run it before reading the variable);
        None for an eager variable."""
        return self._initializer_op

    @property
    def initial_value(self):
        """Graph mode: the tensor the variable was initialized from; RuntimeError eagerly."""
        if self._initial_value is None:
            raise RuntimeError("This property is not supported when eager execution is "
                               "enabled.")
        return self._initial_value

    @property
    def constraint(self):
        """The function an optimizer applies to the value after each update, or None."""
        return self._constraint

    @property
    def synchronization(self):
        """When a distributed variable is synchronized (`tf.VariableSynchronization`)."""
        return self._synchronization

    @property
    def aggregation(self):
        """How a distributed variable's replica updates combine (`tf.VariableAggregation`)."""
        return self._aggregation

    @property
    def _in_graph_mode(self) -> bool:
        return isinstance(self._handle, SymbolicTensor)

    def ref(self) -> VariableRef:
        """A hashable reference to this variable (for sets and dict keys); `.deref()`
        gives the variable back."""
        return VariableRef(self)

    experimental_ref = ref   # TF's deprecated name

    # -- reading ---------------------------------------------------------------------------------
    def _home(self):
        """The variable's graph when a graph variable is used outside it in eager code."""
        if self._in_graph_mode and context.executing_eagerly():
            return self._handle.graph.as_default()
        return contextlib.nullcontext()

    def _raw_read(self):
        with self._home():
            t = state.read_variable_op(self._handle, self._dtype)
        if isinstance(t, SymbolicTensor):
            t.set_shape(self._shape)
        return t

    def _read_variable_op(self):
        for tape in context.active_tapes():
            tape.variable_accessed(self)
        return self._raw_read()

    def value(self):
        """The current value, as a Tensor (a new ReadVariableOp in graph mode)."""
        return self._read_variable_op()

    def read_value(self):
        """Reads the variable (in graph mode: `Read/ReadVariableOp` + `Identity`, as TF)."""
        if context.executing_eagerly():
            return self._read_variable_op()
        with self._home(), name_scope(None, "Read"):
            value = self._read_variable_op()
        with self._home():
            return identity(value)

    def _as_graph_element(self):
        return self._graph_element

    def numpy(self) -> np.ndarray:
        """Eagerly: the current value as a NumPy array; NotImplementedError in graphs."""
        if not context.executing_eagerly() or self._in_graph_mode:
            raise NotImplementedError("numpy() is only available when eager execution is "
                                      "enabled.")
        return self._read_variable_op().numpy()

    def eval(self, session=None):
        """Graph mode: the value in `session` (default session)."""
        if context.executing_eagerly():
            raise NotImplementedError("eval() is not supported when eager execution is "
                                      "enabled, use numpy() instead.")
        return context.hooks.run_in_session(self._graph_element, None, session)

    def initialized_value(self):
        """The value after initialization (graph: a read that runs the initializer first)."""
        if context.executing_eagerly():
            return self.read_value()
        graph = self._handle.graph
        with graph.as_default(), graph.control_dependencies([self._initializer_op]):
            return self._raw_read()

    def is_initialized(self, name=None):
        """A bool tensor: whether the variable holds a value (VarIsInitializedOp)."""
        with self._home():
            return state.var_is_initialized_op(self._handle, name=name)

    # -- writing ---------------------------------------------------------------------------------
    def _convert_for_update(self, value):
        return convert_to_tensor(value, dtype=self._dtype)

    def _after_update(self, op, read_value: bool):
        if not isinstance(op, Operation):  # eager
            return self if read_value else None
        if not read_value:
            return op
        with self._home(), op.graph.control_dependencies([op]):
            return self._read_variable_op()

    def assign(self, value, use_locking=None, name=None, read_value: bool = True):
        """Assigns `value`; returns the variable (eager) or its new value (graph)."""
        with self._home():
            value = self._convert_for_update(value)
        if not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"Cannot assign value to variable ' {self.name}': Shape mismatch."
                             f"The variable shape {self._shape}, and the assigned value shape "
                             f"{value.shape} are incompatible.")
        with self._home():
            op = state.assign_variable_op(self._handle, value, name=name)
            return self._after_update(op, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value: bool = True):
        """Adds `delta` to the value; returns the variable (eager) or its new value (graph;
        the op itself with `read_value=False`)."""
        with self._home():
            op = state.assign_add_variable_op(self._handle, self._convert_for_update(delta),
                                              name=name)
            return self._after_update(op, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value: bool = True):
        """Subtracts `delta` from the value; returns as `assign_add` does."""
        with self._home():
            op = state.assign_sub_variable_op(self._handle, self._convert_for_update(delta),
                                              name=name)
            return self._after_update(op, read_value)

    # -- sparse reads and updates: only the rows named are read or written ------------------
    def sparse_read(self, indices, name=None):
        """The rows `indices` (ResourceGather: the table itself is not read)."""
        for tape in context.active_tapes():
            tape.variable_accessed(self)
        with self._home():
            t = state_sparse.resource_gather(self._handle, indices, self._dtype, name=name)
        if isinstance(t, SymbolicTensor) and self._shape.rank is not None:
            idx = convert_to_tensor(indices).shape
            if idx.rank is not None:
                t.set_shape(TensorShape(idx.as_list() + self._shape.as_list()[1:]))
        return t

    def _scatter(self, kind: str, sparse_delta, name):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        with self._home():
            op = state_sparse.resource_scatter(kind, self._handle, sparse_delta.indices,
                                               sparse_delta.values, self._dtype, name=name)
            return self._after_update(op, True)

    scatter_add = _scatter_method("add")
    scatter_sub = _scatter_method("sub")
    scatter_mul = _scatter_method("mul")
    scatter_div = _scatter_method("div")
    scatter_min = _scatter_method("min")
    scatter_max = _scatter_method("max")
    scatter_update = _scatter_method("update")

    def scatter_nd_update(self, indices, updates, name=None):
        """Writes `updates` at the K-coordinate `indices` (ResourceScatterNdUpdate)."""
        return state_scatter_nd.scatter_nd_update(self, indices, updates, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        """Adds `updates` at the K-coordinate `indices` (ResourceScatterNdAdd)."""
        return state_scatter_nd.scatter_nd_add(self, indices, updates, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        """Subtracts `updates` at the K-coordinate `indices` (ResourceScatterNdSub)."""
        return state_scatter_nd.scatter_nd_sub(self, indices, updates, name=name)

    def scatter_nd_max(self, indices, updates, name=None):
        """Takes the elementwise maximum with `updates` at the K-coordinate
        `indices` (ResourceScatterNdMax)."""
        return state_scatter_nd.scatter_nd_max(self, indices, updates, name=name)

    def scatter_nd_min(self, indices, updates, name=None):
        """Takes the elementwise minimum with `updates` at the K-coordinate
        `indices` (ResourceScatterNdMin)."""
        return state_scatter_nd.scatter_nd_min(self, indices, updates, name=name)

    def load(self, value, session=None) -> None:
        """Writes `value` (eager: assign; graph: runs the initializer with `value` fed)."""
        if context.executing_eagerly():
            self.assign(value)
            return
        context.hooks.run_in_session(self._initializer_op,
                                     {self._initializer_op.inputs[1]: value}, session)

    # -- Python protocol -------------------------------------------------------------------------
    def __repr__(self):
        head = f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}"
        if self._in_graph_mode or not context.executing_eagerly():  # TF: no value in a graph
            return head + ">"
        try:
            arr = self._raw_read().numpy()
        except errors.OpError:   # TF: an unreadable (uninitialized) variable still has a repr
            return f"{head}, numpy=<unavailable>>"
        text = repr(arr) if getattr(arr, "ndim", 0) else str(arr)  # a string scalar: bytes
        return f"{head}, numpy={chr(10) if chr(10) in text else ''}{text}>"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        if self._in_graph_mode or not context.executing_eagerly() or other is None or \
                not tensor_equality.enabled():
            return self is other
        return OPERATORS["equal"](self.value(), other)

    def __ne__(self, other):
        if self._in_graph_mode or not context.executing_eagerly() or other is None or \
                not tensor_equality.enabled():
            return self is not other
        return OPERATORS["not_equal"](self.value(), other)

    def __getitem__(self, key):
        """The slice's value, with `.assign(value)` into the slice (ResourceStridedSliceAssign)."""
        return state_slice_assign.sliced_variable(self, key)

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.numpy())   # NumPy wants an array, also of a scalar
        return a if dtype is None else a.astype(dtype)

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __index__(self):
        return int(self.numpy())

    def __pos__(self):
        return self.value()

    def __rpow__(self, other):
        return OPERATORS["pow"](other, self.value())

    def __iter__(self):
        return iter(self.value())

    def __len__(self):
        return len(self.value())


def _variable_operators():
    def binary(op_name, dunder):
        def method(self, other):
            return apply_binary(op_name, dunder, self.value(), other)

        def reflected(self, other):
            return OPERATORS[op_name](other, self.value())

        return method, reflected

    for dunder, op_name in BINARY_OPERATORS.items():
        fwd, rev = binary(op_name, dunder)
        setattr(Variable, dunder, fwd)
        if dunder not in ("__lt__", "__le__", "__gt__", "__ge__"):
            setattr(Variable, "__r" + dunder[2:], rev)
    for dunder, op_name in UNARY_OPERATORS.items():
        setattr(Variable, dunder, (lambda n: lambda self: OPERATORS[n](self.value()))(op_name))


_variable_operators()
_VARIABLE_SIGNATURE = inspect.signature(Variable.__init__)

class ResourceVariable(Variable):
    """The class of what `tf.Variable(...)` makes (TensorFlow's ResourceVariable: a program
    printing `type(v).__name__` sees that name); `isinstance(v, tf.Variable)` holds."""

    # a tf.function argument: traced by its spec (TF's VariableSpec), not by identity
    _traced_by_spec = True


def _dense_var_to_tensor(var, dtype=None, name=None, as_ref=False):
    if dtype is not None and dtypes.as_dtype(dtype) is not var.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"{dtypes.as_dtype(dtype).name} for `tf.Variable of type "
                         f"{var.dtype.name}. (Variable: {var!r})")
    return var.value()


register_tensor_conversion_function(Variable, _dense_var_to_tensor)


# TF1's collections and initializers, in their own module (tf.compat.v1 names)
from ndflow.ops.variable_collections import (  # noqa: E402, F401 - this module's names too
    all_variables,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    initialize_local_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    trainable_variables,
    variables_initializer,
)
