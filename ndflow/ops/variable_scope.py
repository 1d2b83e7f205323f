"""`tf.compat.v1.variable_scope` and `tf.compat.v1.get_variable` (TF1 variable sharing).

Each graph keeps a variable store (full name -> variable) and a current `VariableScope`, in
graph collections as TF does. `get_variable("w")` inside `variable_scope("foo")` names the
variable `foo/w` whatever the current name scope is; it creates the variable, or returns
the existing one when the scope reuses (`reuse=True`, `AUTO_REUSE`), with TF's errors when
the request and the store disagree. In eager mode variables are not stored (as TF2 without
an `EagerVariableStore`): every call creates a new variable, except inside
`keeping_variables` (an EagerTemplate's call keeps them in its own dict, ops/template.py).
With a `partitioner` (argument or scope's), the variable is made in parts: a
`PartitionedVariable` (partitioned_variables.py).
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import threading

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.shapes import as_shape
from ndflow.core.tensor import Tensor
from ndflow.ops import init_ops_v1, partitioned_variables
from ndflow.ops.variables import Variable

_STORE_KEY = ("__variable_store",)
_SCOPE_KEY = ("__varscope",)


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


@tf_export(v1=["VariableScope"])
class VariableScope:
    """The settings `get_variable` applies inside a `variable_scope`."""

    def __init__(self, reuse, name: str = "", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 name_scope: str = "", dtype=dtypes.float32, use_resource=None,
                 constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list:
        if context.executing_eagerly():
            return []
        scope = self._name + "/" if self._name else ""
        return context.get_default_graph().get_collection(name, scope)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def __repr__(self):
        return f"<VariableScope '{self._name}' reuse={self._reuse}>"


class _VariableStore:
    """Variables created by `get_variable`, by full name, plus variable-scope use counts."""

    def __init__(self, store_variables: bool = True):
        self.vars: dict = {}
        self.partitioned_vars: dict = {}  # full name -> PartitionedVariable
        self.scope_counts: dict = {}
        self.store_variables = store_variables
        self.keeping = False  # inside keeping_variables (an EagerTemplate's call)
        self.current = VariableScope(False)

    def open_scope(self, name: str) -> None:
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        prefix = name + "/" if name else ""
        for k in self.scope_counts:
            if k.startswith(prefix):
                self.scope_counts[k] = 0


_eager = threading.local()


def _store() -> _VariableStore:
    if context.executing_eagerly():
        s = getattr(_eager, "store", None)
        if s is None:
            s = _eager.store = _VariableStore(store_variables=False)
        return s
    ref = context.get_default_graph().get_collection_ref(_STORE_KEY)
    if not ref:
        ref.append(_VariableStore())
    return ref[0]


@contextlib.contextmanager
def keeping_variables(variables: dict):
    """Makes `get_variable` find and keep its variables in `variables` (full name ->
    variable), in eager mode and function graphs too: TF's `with_variable_store` of an
    `EagerVariableStore`, which an EagerTemplate shares its variables through."""
    store = _store()
    saved = store.vars, store.store_variables, store.keeping
    store.vars, store.store_variables, store.keeping = variables, True, True
    try:
        yield
    finally:
        store.vars, store.store_variables, store.keeping = saved


def kept_variables() -> dict | None:
    """The dict of an enclosing `keeping_variables`, else None (a nested EagerTemplate shares
    its parent's, as TF's does an enclosing EagerVariableStore)."""
    store = _store()
    return store.vars if store.keeping else None


@tf_export(v1=["get_variable_scope"])
def get_variable_scope() -> VariableScope:
    """The current `VariableScope` (`tf.compat.v1.get_variable_scope`)."""
    return _store().current


def _fn_takes(fn, arg: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return arg in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _default_initializer(name: str, dtype):
    if dtype.is_floating:
        return init_ops_v1.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype is dtypes.string:
        return init_ops_v1.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _create(store: _VariableStore, name, shape, dtype, initializer, regularizer, reuse,
            trainable, collections, validate_shape, constraint, partition_info=None,
            **kwargs):
    """The store's `_get_single_variable`: share, check and create, with TF's messages
    (`partition_info`: where a partitioned variable's part lies, for its initializer)."""
    shape = as_shape(shape) if shape is not None else None
    found = store.vars.get(name) if store.store_variables else None
    if found is not None:
        if reuse is False or reuse is None:
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if shape is not None and not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                             f"and found shape {found.shape}.")
        if dtype is not None and dtype is not found.dtype:
            raise ValueError(f"Trying to share variable {name}, but specified dtype "
                             f"{dtype.name} and found dtype {found.dtype.name}.")
        return found
    if reuse is True and store.store_variables:
        raise ValueError(f"Variable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         "VarScope?")
    dtype = dtype or dtypes.float32
    if initializer is None:
        if shape is None:
            raise ValueError(f"Variable {name} did not get an initializer, so its `shape` "
                             "argument must be specified.")
        initializer = _default_initializer(name, dtype)
    if inspect.isclass(initializer):
        initializer = initializer()
    if callable(initializer) and not isinstance(initializer, Tensor):
        if shape is None or not shape.is_fully_defined():
            raise ValueError("The initializer passed is not valid. It should be a callable "
                             "with no arguments and the shape should not be provided or an "
                             "instance of `tf.keras.initializers.*' and `shape` should be "
                             "fully defined.")
        dims = shape.as_list()
        if _fn_takes(initializer, "partition_info"):
            init_val = lambda: initializer(dims, dtype=dtype, partition_info=partition_info)
        else:
            init_val = lambda: initializer(dims, dtype=dtype)
        var_dtype = dtype
    else:
        if shape is not None and isinstance(initializer, Tensor) \
                and not shape.is_compatible_with(initializer.shape):
            raise ValueError("If initializer is a constant, do not specify shape.")
        init_val = initializer
        var_dtype = None if isinstance(initializer, Tensor) else dtype
    graph = None if context.executing_eagerly() else context.get_default_graph()
    if graph is not None:
        with graph.name_scope(None):
            v = Variable(init_val, trainable=trainable, name=name, dtype=var_dtype,
                         validate_shape=validate_shape, collections=collections,
                         constraint=constraint, shape=shape if not validate_shape else None)
    else:
        v = Variable(init_val, trainable=trainable, name=name, dtype=var_dtype,
                     validate_shape=validate_shape, constraint=constraint)
    if store.store_variables:
        store.vars[name] = v
    if regularizer is not None and graph is not None:
        with graph.name_scope(name + "/Regularizer/"):
            loss = regularizer(v)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return v


@tf_export(v1=["get_variable"])
def get_variable(name: str, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape: bool = True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=None, aggregation=None):
    """`tf.compat.v1.get_variable`: an existing variable of the current scope, or a new one."""
    scope = get_variable_scope()
    partitioner = partitioner if partitioner is not None else scope.partitioner
    if partitioner is not None and not callable(partitioner):
        raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
    full_name = f"{scope.name}/{name}" if scope.name else name
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    initializer = initializer if initializer is not None else scope.initializer
    regularizer = regularizer if regularizer is not None else scope.regularizer
    constraint = constraint if constraint is not None else scope.constraint
    if trainable is None:
        trainable = True
    store = _store()

    def getter(name, shape=None, dtype=None, initializer=None, regularizer=None,
               reuse=None, trainable=True, collections=None, validate_shape=True,
               constraint=None, partitioner=None, **kwargs):
        is_scalar = shape is not None and len(as_shape(shape)) == 0
        if partitioner is not None and not is_scalar:
            def part(part_name, part_shape, part_dtype, init, info):
                return _create(store, part_name, part_shape, part_dtype, init, regularizer,
                               reuse, trainable, collections, validate_shape, constraint,
                               partition_info=info)
            return partitioned_variables.get_partitioned_variable(
                store, name, partitioner, shape, dtype, initializer, reuse, part,
                _default_initializer)
        return _create(store, name, shape, dtype, initializer, regularizer, reuse, trainable,
                       collections, validate_shape, constraint)

    kwargs = dict(shape=shape, dtype=dtype if dtype is not None else
                  (scope.dtype if scope.dtype is not dtypes.float32 else None),
                  initializer=initializer, regularizer=regularizer, reuse=scope.reuse,
                  trainable=trainable, collections=collections, validate_shape=validate_shape,
                  constraint=constraint, partitioner=partitioner)
    for getter_fn in (custom_getter, scope.custom_getter):
        if getter_fn is not None:
            inner = getter
            getter = (lambda g, i: lambda name, *a, **kw: g(i, name, *a, **kw))(getter_fn, inner)
    return getter(full_name, **kwargs)


@tf_export(v1=["get_local_variable"])
def get_local_variable(name: str, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None,
                       partitioner=None, validate_shape: bool = True, use_resource=None,
                       custom_getter=None, constraint=None, synchronization=None,
                       aggregation=None):
    """`tf.compat.v1.get_local_variable`: a LOCAL_VARIABLES variable, never trainable (as in
    TensorFlow, `trainable` is accepted and ignored)."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections,
                        caching_device, partitioner, validate_shape, use_resource,
                        custom_getter, constraint, synchronization, aggregation)


@tf_export(v1=["create_partitioned_variables"])
def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """The parts (a list) of a variable of `shape` sliced as `slicing` says, named after a
    new variable scope (`name`, default "PartitionedVariable"): `<scope>/part_<i>`."""
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        store = _store()
        dtype = dtypes.as_dtype(dtype)

        def part(part_name, part_shape, part_dtype, init, info):
            return _create(store, part_name, part_shape, part_dtype, init, None, scope.reuse,
                           trainable, collections, True, None, partition_info=info)
        variable = partitioned_variables.get_partitioned_variable(
            store, scope.name, lambda **unused: list(slicing), shape, dtype, initializer,
            scope.reuse, part, _default_initializer)
    return list(variable)


def _unique_default(store: _VariableStore, parent: str, prefix: str) -> str:
    full = f"{parent}/{prefix}" if parent else prefix
    if store.scope_counts.get(full, 0) == 0:
        return prefix
    idx = 1
    while store.scope_counts.get(f"{full}_{idx}", 0) > 0:
        idx += 1
    return f"{prefix}_{idx}"


@tf_export(v1=["variable_scope"])
class variable_scope:  # noqa: N801 - TF's name; used as `with tf.variable_scope(...)`
    """`tf.compat.v1.variable_scope`: a variable scope plus (by default) a name scope."""

    def __init__(self, name_or_scope, default_name: str | None = None, values=None,
                 initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, reuse=None, dtype=None, use_resource=None,
                 constraint=None, auxiliary_name_scope: bool = True):
        if name_or_scope is None and default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is not None and reuse is not False and reuse is not True \
                and reuse is not AUTO_REUSE:
            raise ValueError(f"The reuse parameter must be True or False or None, got {reuse}")
        if name_or_scope is None and reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._settings = dict(initializer=initializer, regularizer=regularizer,
                              caching_device=caching_device, partitioner=partitioner,
                              custom_getter=custom_getter, dtype=dtype,
                              use_resource=use_resource, constraint=constraint)
        self._reuse = reuse
        self._aux = auxiliary_name_scope
        self._stack = []

    def __enter__(self) -> VariableScope:
        store = _store()
        old = store.current
        nos = self._name_or_scope
        if isinstance(nos, VariableScope):
            full, base = nos.name, nos
            short = nos.name.split("/")[-1]
        else:
            # TF: a default name is made unique among variable scopes, while the name scope
            # opened is the default name made unique among name scopes (a template's second
            # `my_op` is variable scope my_op_1 and may be name scope my_op_2)
            ns_name = self._default_name if nos is None else nos
            if nos is None:
                nos = _unique_default(store, old.name, self._default_name)
            if not isinstance(nos, str):
                raise TypeError("VariableScope: name_or_scope must be a string or "
                                f"VariableScope, got {nos!r}")
            full, base, short = (f"{old.name}/{nos}" if old.name else nos), old, nos
        graph = None if context.executing_eagerly() else context.get_default_graph()
        if isinstance(nos, VariableScope):
            ns_name = short
        ns_cm = graph.name_scope(ns_name) if graph is not None and self._aux and ns_name \
            else None
        ns = ns_cm.__enter__() if ns_cm is not None else ""
        if isinstance(nos, VariableScope):
            ns = nos.original_name_scope
        # TF: `reuse or parent.reuse` (False means "inherit"; AUTO_REUSE is truthy).
        reuse = self._reuse or (nos.reuse if isinstance(nos, VariableScope) else old.reuse)
        s = self._settings
        new = VariableScope(
            reuse, full,
            s["initializer"] if s["initializer"] is not None else base.initializer,
            s["regularizer"] if s["regularizer"] is not None else base.regularizer,
            s["caching_device"] or base.caching_device, s["partitioner"] or base.partitioner,
            s["custom_getter"] or base.custom_getter, ns,
            s["dtype"] if s["dtype"] is not None else base.dtype,
            s["use_resource"] if s["use_resource"] is not None else base.use_resource,
            s["constraint"] or base.constraint)
        store.open_scope(full)
        store.current = new
        self._stack.append((store, old, ns_cm))
        return new

    def __exit__(self, *exc):
        store, old, ns_cm = self._stack.pop()
        store.close_subscopes(store.current.name)
        store.current = old
        if ns_cm is not None:
            ns_cm.__exit__(*exc)
        return False


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    """Deprecated TF1 alias of `variable_scope(name_or_scope, default_name, values)`."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)

tf_export(v1=["AUTO_REUSE"])(AUTO_REUSE)
