"""ndflow: TensorFlow's dataflow graphs rebuilt in Python on ATen kernels.

    import ndflow as tf

The top level mirrors TensorFlow 2's `tf` namespace; `tf.compat.v1` holds the TF1 API
(graphs, placeholders, Sessions, `tf.compat.v1.train` optimizers).
"""

from ndflow import (  # noqa: F401 - ops/kernels/runtime register themselves; the rest are namespaces
    compat,
    config,
    debugging,
    dtypes,
    errors,
    io,
    keras,
    kernels,
    linalg,
    math,
    nest,
    nn,
    ops,
    random,
    runtime,
    train,
)
from ndflow.autodiff.gradients import UnconnectedGradients  # noqa: F401
from ndflow.autodiff.tape import GradientTape  # noqa: F401
from ndflow.core.context import executing_eagerly  # noqa: F401
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
from ndflow.core.scopes import control_dependencies, device, name_scope  # noqa: F401
from ndflow.core.shapes import TensorShape  # noqa: F401
from ndflow.core.tensor import Tensor  # noqa: F401
from ndflow.core.tensor_spec import TensorSpec  # noqa: F401
from ndflow.ops.apply import constant_value as get_static_value  # noqa: F401
from ndflow.ops.apply import convert_to_tensor, register_tensor_conversion_function  # noqa: F401
from ndflow.ops.arithmetic import real_div as realdiv  # noqa: F401
from ndflow.ops.array_mask import boolean_mask  # noqa: F401
from ndflow.ops.array_split import split  # noqa: F401
from ndflow.ops.einsum import einsum  # noqa: F401
from ndflow.ops.importer import import_graph_def  # noqa: F401
from ndflow.ops.init_ops import Constant as constant_initializer  # noqa: F401
from ndflow.ops.init_ops import Ones as ones_initializer  # noqa: F401
from ndflow.ops.init_ops import RandomNormal as random_normal_initializer  # noqa: F401
from ndflow.ops.init_ops import RandomUniform as random_uniform_initializer  # noqa: F401
from ndflow.ops.init_ops import Zeros as zeros_initializer  # noqa: F401
from ndflow.ops.linalg_extra import tensordot  # noqa: F401
from ndflow.ops.logging_ops import print_v2 as print  # noqa: F401
from ndflow.ops.math import abs, clip_by_value, exp, reduce_logsumexp, sigmoid, sign, sqrt, square, tanh
from ndflow.ops.math_cumulative import cumsum  # noqa: F401
from ndflow.ops.norms import norm  # noqa: F401
from ndflow.ops.sort import (  # noqa: F401
    argsort,
    sort,
)
from ndflow.ops.variables import Variable  # noqa: F401
from ndflow.runtime.control_flow import cond, switch_case, while_loop  # noqa: F401
from ndflow.runtime.function import function  # noqa: F401
from ndflow.ops.arithmetic import add, add_n, divide, maximum, minimum, multiply, negative, pow, subtract, truediv, where
from ndflow.ops.array_core import constant, ensure_shape, expand_dims, group, identity, identity_n, no_op, rank, reshape, shape, shape_n, size, squeeze, stack, stop_gradient, unstack
from ndflow.ops.array_fill import broadcast_to, fill, ones, ones_like, pad, tile, zeros, zeros_like
from ndflow.ops.array_gather import gather, one_hot
from ndflow.ops.array_range import range
from ndflow.ops.array_slicing import concat, slice, strided_slice
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal, greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or, not_equal
from ndflow.ops.linalg import matmul
from ndflow.ops.reduction import argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum

newaxis = None
__version__ = "0.1.0"
