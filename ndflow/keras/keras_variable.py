"""The variables Keras layers own: `tf.Variable`s whose `trainable` flag a layer can flip
(freezing) and that carry their regularizer; inside a mixed-precision layer's call they read
as the layer's compute dtype (Keras' autocast), while they are stored in the variable dtype."""

from __future__ import annotations

import contextlib
import threading

from ndflow.core import context, dtypes
from ndflow.core.api_export import keras_export
from ndflow.ops.apply import convert_to_tensor, register_tensor_conversion_function
from ndflow.ops.cast import cast
from ndflow.ops.variables import Variable

_local = threading.local()


def autocast_dtype():
    """The dtype floating variables read as now (None: their own)."""
    return getattr(_local, "dtype", None)


@contextlib.contextmanager
def autocast_scope(dtype):
    """Reads of autocasting variables inside give `dtype` (None: no casting)."""
    saved = autocast_dtype()
    _local.dtype = None if dtype is None else dtypes.as_dtype(dtype)
    try:
        yield
    finally:
        _local.dtype = saved


_stateless = threading.local()


def stateless_scope():
    """The open `keras.StatelessScope`, None outside any."""
    return getattr(_stateless, "scope", None)


@keras_export("keras.StatelessScope")
class StatelessScope:
    """`with keras.StatelessScope(state_mapping=[(variable, value), ...]) as scope:` Keras
    variables read the values given and their assignments are recorded in the scope
    (`scope.get_current_value(variable)`) instead of changing them."""

    def __init__(self, state_mapping=None, collect_losses=False, initialize_variables=True):
        self.collect_losses = collect_losses
        self.initialize_variables = initialize_variables
        self.losses: list = []
        self.state_mapping: dict = {}
        for var, value in state_mapping or ():
            if not isinstance(var, KerasVariable):
                raise ValueError("Invalid reference variable in StatelessScope: all keys in "
                                 "argument `mapping` must be Variable instances. Received "
                                 f"instead: {var}")
            value = cast(value.value(), var._dtype) if isinstance(value, Variable) else \
                convert_to_tensor(value, var._dtype)
            if tuple(var.shape.as_list()) != tuple(value.shape.as_list()):
                raise ValueError("Invalid variable value in StatelessScope: all values in "
                                 "argument `mapping` must be tensors with a shape that "
                                 "matches the corresponding variable shape. For variable "
                                 f"{var}, received invalid value {value} with shape "
                                 f"{value.shape}.")
            self.state_mapping[id(var)] = value

    def __enter__(self):
        self.original_scope = stateless_scope()
        _stateless.scope = self
        return self

    def __exit__(self, *exc):
        _stateless.scope = self.original_scope

    def add_loss(self, loss) -> None:
        self.losses.append(loss)

    def add_update(self, update) -> None:
        variable, value = update
        self.state_mapping[id(variable)] = value

    def get_current_value(self, variable):
        return self.state_mapping.get(id(variable))


class KerasVariable(Variable):
    """A layer weight: settable `trainable`, a `regularizer`, autocast reads."""

    def __init__(self, *args, regularizer=None, autocast=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.regularizer = regularizer
        self._autocast = autocast

    @Variable.trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    @property
    def path(self) -> str:
        """Where the layer created it: "sequential/dense/kernel"."""
        return self._name[:-2] if self._name.endswith(":0") else self._name

    @property
    def name(self) -> str:
        """Keras 3's short name: "kernel"."""
        return self.path.rsplit("/", 1)[-1]

    def _cast_to(self):
        target = autocast_dtype()
        if (target is not None and self._autocast and self._dtype.is_floating
                and target is not self._dtype):
            return target
        return None

    @property
    def dtype(self):
        return self._cast_to() or self._dtype

    def value(self):
        target = self._cast_to()
        scope = stateless_scope()
        value = scope.get_current_value(self) if scope is not None else None
        if value is None:
            value = super().value()
        return value if target is None else cast(value, target)

    # In a StatelessScope, updates are recorded there, not applied.
    def assign(self, value, use_locking=None, name=None, read_value: bool = True):
        scope = stateless_scope()
        if scope is None:
            return super().assign(value, use_locking, name, read_value)
        scope.add_update((self, convert_to_tensor(value, self._dtype)))
        return self if read_value else None

    def assign_add(self, delta, use_locking=None, name=None, read_value: bool = True):
        if stateless_scope() is None:
            return super().assign_add(delta, use_locking, name, read_value)
        return self.assign(self._stored_value() + convert_to_tensor(delta, self._dtype),
                           read_value=read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value: bool = True):
        if stateless_scope() is None:
            return super().assign_sub(delta, use_locking, name, read_value)
        return self.assign(self._stored_value() - convert_to_tensor(delta, self._dtype),
                           read_value=read_value)

    def _stored_value(self):
        """The value in the variable's own dtype (the scope's, in a StatelessScope)."""
        scope = stateless_scope()
        value = scope.get_current_value(self) if scope is not None else None
        return Variable.value(self) if value is None else value

    # Keras 3's form, also for `str`; the value only where it can be read (not in a graph)
    def __repr__(self) -> str:
        value = ""
        if not self._in_graph_mode and context.executing_eagerly():
            value = f", value={self._raw_read().numpy()}"
        return (f"<Variable path={self.path}, shape={tuple(self.shape.as_list())}, "
                f"dtype={self.dtype.name}{value}>")

    __str__ = __repr__

    # Keras 3's signature, without NumPy 2's `copy`: `np.array(variable)` then warns
    # (DeprecationWarning) as it does for TF 2.21's Keras variables.
    def __array__(self, dtype=None):
        return Variable.__array__(self, dtype)


def _convert(var, dtype=None, name=None, as_ref=False):
    value = var.value()
    if dtype is not None and dtypes.as_dtype(dtype) is not value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"{dtypes.as_dtype(dtype).name} for `tf.Variable of type "
                         f"{value.dtype.name}. (Variable: {var!r})")
    return value


register_tensor_conversion_function(KerasVariable, _convert, priority=50)
