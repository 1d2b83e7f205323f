"""`tf.compat.v1.initializers`."""

from ndflow.ops.init_ops import constant_initializer as constant  # noqa: F401
from ndflow.ops.init_ops import (  # noqa: F401
    glorot_normal_initializer as glorot_normal,
)
from ndflow.ops.init_ops import ones_initializer as ones  # noqa: F401
from ndflow.ops.init_ops import random_normal_initializer as random_normal  # noqa: F401
from ndflow.ops.init_ops import random_uniform_initializer as random_uniform  # noqa: F401
from ndflow.ops.init_ops import truncated_normal_initializer as truncated_normal  # noqa: F401
from ndflow.ops.init_ops import variance_scaling_initializer as variance_scaling  # noqa: F401
from ndflow.ops.init_ops import zeros_initializer as zeros  # noqa: F401
from ndflow.ops.variables import global_variables_initializer as global_variables  # noqa: F401
from ndflow.ops.variables import variables_initializer as variables  # noqa: F401
