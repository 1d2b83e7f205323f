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


@tf_export(v1=["global_variables"])
def global_variables(scope=None) -> list:
    return _collection(GraphKeys.GLOBAL_VARIABLES, scope)


@tf_export(v1=["all_variables"])
def all_variables() -> list:
    return global_variables()


@tf_export(v1=["trainable_variables"])
def trainable_variables(scope=None) -> list:
    return _collection(GraphKeys.TRAINABLE_VARIABLES, scope)


@tf_export(v1=["local_variables"])
def local_variables(scope=None) -> list:
    return _collection(GraphKeys.LOCAL_VARIABLES, scope)


@tf_export(v1=["model_variables"])
def model_variables(scope=None) -> list:
    return _collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None) -> list:
    return _collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


@tf_export(v1=["initializers.variables", "variables_initializer"])
def variables_initializer(var_list, name: str = "init") -> Operation | None:
    """`tf.compat.v1.variables_initializer`: one op running the variables' initializers."""
    if context.executing_eagerly():
        return None
    return group(*[v.initializer for v in var_list], name=name)


@tf_export(v1=["global_variables_initializer", "initialize_all_variables",
               "initializers.global_variables"])
def global_variables_initializer() -> Operation | None:
    return variables_initializer(global_variables())


@tf_export(v1=["initializers.local_variables", "local_variables_initializer"])
def local_variables_initializer() -> Operation | None:
    return variables_initializer(local_variables(), name="init")


initialize_all_variables = global_variables_initializer
initialize_local_variables = local_variables_initializer


@tf_export(v1=["is_variable_initialized"])
def is_variable_initialized(variable):
    return variable.is_initialized()
