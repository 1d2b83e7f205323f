"""The variables Keras layers own: `tf.Variable`s whose `trainable` flag a layer can flip
(freezing) and that carry their regularizer; inside a mixed-precision layer's call they read
as the layer's compute dtype (Keras' autocast), while they are stored in the variable dtype."""

from __future__ import annotations

import contextlib
import threading

from ndflow.core import dtypes
from ndflow.ops.apply import register_tensor_conversion_function
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
        value = super().value()
        return value if target is None else cast(value, target)


def _convert(var, dtype=None, name=None, as_ref=False):
    value = var.value()
    if dtype is not None and dtypes.as_dtype(dtype) is not value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"{dtypes.as_dtype(dtype).name} for `tf.Variable of type "
                         f"{value.dtype.name}. (Variable: {var!r})")
    return value


register_tensor_conversion_function(KerasVariable, _convert, priority=50)
