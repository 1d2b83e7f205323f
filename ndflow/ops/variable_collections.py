"""TF1's variable collections and initializers (`tf.compat.v1.global_variables`,
`global_variables_initializer`, ...): the graph's collections; eagerly, none."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys, Operation
from ndflow.ops.array_core import group


def _collection(key: str, scope=None) -> list:
    if context.executing_eagerly():
        return []
    return context.get_default_graph().get_collection(key, scope)


_COLLECTION_DOC = """The {what} of the default graph ({key}){purpose}.

    {details}Executing eagerly there are no collections, so this is an empty list.

    Args:
      scope: optional regex; only variables whose name matches it from the start are kept.

    Returns:
      A list of variables.
{example}    """
_EXAMPLE = """
    Example:
      >>> with tf.Graph().as_default():
      ...     v = tf.compat.v1.get_variable("v", [2], trainable=True)
      ...     [x.name for x in tf.compat.v1.{name}()]
      ['v:0']
"""


def _collection_getter(name: str, key: str, what: str, purpose: str = "", details: str = "",
                       example: bool = False, export: bool = True):
    """tf.compat.v1.<name>(scope=None): the variables of the graph collection GraphKeys.<key>."""
    collection = getattr(GraphKeys, key)

    def getter(scope=None) -> list:
        return _collection(collection, scope)
    getter.__name__ = getter.__qualname__ = name
    getter.__doc__ = _COLLECTION_DOC.format(
        what=what, key=key, purpose=purpose, details=details,
        example=_EXAMPLE.format(name=name) if example else "")
    return tf_export(v1=[name])(getter) if export else getter


global_variables = _collection_getter(
    "global_variables", "GLOBAL_VARIABLES", "global variables",
    ", the ones checkpoints save", example=True)
trainable_variables = _collection_getter(
    "trainable_variables", "TRAINABLE_VARIABLES", "trainable variables",
    ", which optimizers update", example=True)
local_variables = _collection_getter(
    "local_variables", "LOCAL_VARIABLES", "process-local variables",
    details="These are variables such as metric counters that are not saved or shared. ")
model_variables = _collection_getter(
    "model_variables", "MODEL_VARIABLES", "variables used by the model's forward pass")
moving_average_variables = _collection_getter(
    "moving_average_variables", "MOVING_AVERAGE_VARIABLES",
    "variables holding moving averages", export=False,
    details="`tf.compat.v1.train.ExponentialMovingAverage.apply` adds its shadow variables "
            "here.\n    ")


@tf_export(v1=["all_variables"])
def all_variables() -> list:
    """The global variables of the default graph (deprecated name of `global_variables`).

    Returns:
      A list of variables (empty when executing eagerly).
    """
    return global_variables()


@tf_export(v1=["initializers.variables", "variables_initializer"])
def variables_initializer(var_list, name: str = "init") -> Operation | None:
    """`tf.compat.v1.variables_initializer`: one op running the variables' initializers."""
    if context.executing_eagerly():
        return None
    return group(*[v.initializer for v in var_list], name=name)


@tf_export(v1=["global_variables_initializer", "initialize_all_variables",
               "initializers.global_variables"])
def global_variables_initializer() -> Operation | None:
    """An op that initializes every global variable of the default graph.

    Returns:
      An op to run in a Session (a no-op group when there are none); None when executing
      eagerly, where variables are initialized on creation.

    Example:
      >>> with tf.Graph().as_default():
      ...     v = tf.compat.v1.get_variable("v", initializer=3.0)
      ...     with tf.compat.v1.Session() as sess:
      ...         _ = sess.run(tf.compat.v1.global_variables_initializer())
      ...         print(sess.run(v))
      3.0
    """
    return variables_initializer(global_variables())


@tf_export(v1=["initializers.local_variables", "local_variables_initializer"])
def local_variables_initializer() -> Operation | None:
    """An op that initializes every local variable of the default graph.

    Returns:
      An op to run in a Session; None when executing eagerly.
    """
    return variables_initializer(local_variables(), name="init")


initialize_all_variables = global_variables_initializer
initialize_local_variables = local_variables_initializer


@tf_export(v1=["is_variable_initialized"])
def is_variable_initialized(variable):
    """Whether `variable` has been given a value yet.

    Args:
      variable: a `tf.Variable`.

    Returns:
      A scalar boolean tensor (in a graph, evaluated when run).

    Example:
      >>> bool(tf.compat.v1.is_variable_initialized(tf.Variable(1.0)))
      True
    """
    return variable.is_initialized()
