"""`tf.compat.v1`: TensorFlow 1's API — graphs, placeholders, Sessions, variable scopes."""

from ndflow.autodiff.gradients import gradients  # noqa: F401
from ndflow.compat.v1 import initializers, mixed_precision, nn, random, train  # noqa: F401
from ndflow.core import context as _context
from ndflow.core.context import (  # noqa: F401
    executing_eagerly,  # noqa: F401
    get_default_graph,
    reset_default_graph,
)
from ndflow.core.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bfloat16,
    bool,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    variant,
)
from ndflow.core.graph import Graph, GraphKeys, Operation  # noqa: F401
from ndflow.core.graph_def import graph_pb2 as _graph_pb2
from ndflow.core.scopes import (  # noqa: F401
    control_dependencies,
    device,
    get_name_scope,
    name_scope,  # noqa: F401
)
from ndflow.core.shapes import TensorShape  # noqa: F401
from ndflow.core.tensor import Tensor  # noqa: F401
from ndflow.ops.apply import convert_to_tensor  # noqa: F401
from ndflow.ops.array_mask import boolean_mask  # noqa: F401
from ndflow.ops.array_split import split  # noqa: F401
from ndflow.ops.einsum import einsum  # noqa: F401
from ndflow.ops.importer import import_graph_def  # noqa: F401
from ndflow.ops.init_ops import (  # noqa: F401
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from ndflow.ops.linalg_extra import tensordot  # noqa: F401
from ndflow.ops.logging_ops import print_v2 as print  # noqa: F401
from ndflow.ops.math import abs, clip_by_value, exp, floordiv, mod, sigmoid, sign, sqrt, square, tanh
from ndflow.ops.arithmetic import div_no_nan  # noqa: F401
from ndflow.ops.math_cumulative import cumprod, cumsum  # noqa: F401
from ndflow.ops.norms import norm  # noqa: F401
from ndflow.ops.random import (  # noqa: F401
    random_normal,
    random_shuffle,
    random_uniform,
    truncated_normal,
)
from ndflow.ops.random_seed import get_seed, set_random_seed  # noqa: F401
from ndflow.ops.sort import (  # noqa: F401
    argsort,
    sort,
)
from ndflow.ops.variable_scope import (  # noqa: F401
    AUTO_REUSE,
    VariableScope,
    get_local_variable,
    get_variable,
    get_variable_scope,
    variable_scope,
)
from ndflow.ops.variables import (  # noqa: F401
    Variable,
    all_variables,
    global_variables,
    global_variables_initializer,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    trainable_variables,
    variables_initializer,
)
from ndflow.runtime.config_proto import (  # noqa: F401  # noqa: F401
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from ndflow.runtime.control_flow import cond_v1 as cond  # noqa: F401
from ndflow.runtime.control_flow import switch_case  # noqa: F401
from ndflow.runtime.control_flow import while_loop_v1 as while_loop  # noqa: F401
from ndflow.runtime.session import (  # noqa: F401
    InteractiveSession,
    Session,
    get_default_session,  # noqa: F401
)
from ndflow.ops.arithmetic import add, add_n, divide, log, maximum, minimum, multiply, negative, pow, subtract, truediv
from ndflow.ops.array_core import constant, expand_dims, group, identity, no_op, placeholder, placeholder_with_default, rank, reshape, shape, size, squeeze, stack, stop_gradient, unstack
from ndflow.ops.array_fill import fill, ones, ones_like, pad, tile, zeros, zeros_like
from ndflow.ops.array_gather import gather, one_hot
from ndflow.ops.array_range import range
from ndflow.ops.array_slicing import concat, slice, strided_slice
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast, to_double, to_float, to_int32, to_int64
from ndflow.ops.comparison import equal, greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or, not_equal
from ndflow.ops.linalg import matmul
from ndflow.ops.reduction import argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum

initialize_all_variables = global_variables_initializer
GraphDef = _graph_pb2.GraphDef  # the real protobuf message, as tf.compat.v1.GraphDef


def disable_eager_execution() -> None:
    """Switches the process to TF1 graph mode: ops build into the default graph."""
    _context.set_eager_enabled(False)


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    _context.set_eager_enabled(True)


def disable_v2_behavior() -> None:
    disable_eager_execution()


def enable_v2_behavior() -> None:
    enable_eager_execution()


def add_to_collection(name, value) -> None:
    get_default_graph().add_to_collection(name, value)


def get_collection(key, scope=None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key) -> list:
    return get_default_graph().get_collection_ref(key)
