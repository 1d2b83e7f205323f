"""`keras.Variable`: Keras 3's constructor (an initializer and a shape, or a value) for the
variables layers own. A layer tracks one assigned to its attributes as Keras' tracker does:
it is among the layer's (trainable or non-trainable) weights, in assignment order."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import keras_export
from ndflow.core.scopes import init_scope
from ndflow.keras.keras_variable import KerasVariable
from ndflow.keras.layers.layer_names import unique_name
from ndflow.keras.layers.name_scope import path_stack
from ndflow.ops import init_ops
from ndflow.ops.apply import convert_to_tensor

_AGGREGATIONS = (None, "none", "mean", "sum", "only_first_replica")
_SYNCHRONIZATIONS = (None, "none", "on_read", "on_write", "auto")


@keras_export("keras.Variable")
class Variable(KerasVariable):
    """A Keras 3 variable (backed by a `tf.Variable`): layers' weights are these. Its path
    is the enclosing `keras.name_scope`s' names and its own ("block/variable").

    Args:
      initializer: the initial value (array-like), or an initializer (a name such as
        "zeros" or a callable `(shape, dtype)`), which then needs `shape`.
      shape: the shape, for an initializer.
      dtype: the dtype (default floatx).
      trainable: whether optimizers update it.
      autocast: whether layers computing in another dtype (mixed precision) read it cast
        to their compute dtype.
      aggregation: how replicas' updates combine ("none", "mean", "sum",
        "only_first_replica").
      synchronization: accepted for Keras' signature ("auto").
      name: the variable's name (default "variable", made unique).
      layout: accepted for Keras' signature (one device per process here).
      **kwargs: accepted and ignored.

    Raises:
      ValueError: an unknown `aggregation`.

    Example:

    >>> v = tf.keras.Variable("ones", shape=(2,))
    >>> v.numpy()
    array([1., 1.], dtype=float32)
    """

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, layout=None,
                 **kwargs):
        del layout, kwargs   # distribution layouts: one device per process here
        name = name or unique_name("variable")
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name}")
        if aggregation not in _AGGREGATIONS:
            raise ValueError("Invalid value for argument `aggregation`. Expected one of "
                             "`None`, `'none'`, `'mean'`, `'sum'`, `'only_first_replica'`. "
                             f"Received: aggregation={aggregation}")
        if synchronization not in _SYNCHRONIZATIONS:
            raise ValueError("Invalid value for argument `synchronization`. Expected one of "
                             "`None`, `'none'`, `'on_read'`, `'on_write'`, `'auto'`. "
                             f"Received: synchronization={synchronization}")
        if isinstance(initializer, str):
            initializer = init_ops.get(initializer)
        if callable(initializer) and shape is None:
            raise ValueError("When creating a Variable from an initializer, the `shape` "
                             "argument should be specified. Received: "
                             f"initializer={initializer} and shape={shape}")
        path = "/".join([p for p in path_stack() if p] + [name])   # Keras drops "" names
        with init_scope():
            if callable(initializer):
                value = initializer(tuple(shape), dtype=dtype or "float32")
            else:
                value = convert_to_tensor(initializer, dtype=dtype)
            # Keras paths are not TensorFlow name scopes: the variable is named by its path.
            saved, context.state().name_scope = context.state().name_scope, ""
            try:
                super().__init__(value, trainable=trainable, dtype=value.dtype, name=path,
                                 autocast=autocast)
            finally:
                context.state().name_scope = saved


def tracked_variables(value) -> list:
    """The `keras.Variable`s an attribute assignment holds (itself, or in a list, tuple or
    dict), which the layer then owns."""
    items = (value.values() if isinstance(value, dict) else value
             if isinstance(value, (list, tuple)) else (value,))
    return [item for item in items if isinstance(item, Variable)]
