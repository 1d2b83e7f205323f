"""Layer 5: TF1 optimizers, learning-rate schedules and decay functions, the global step.

Public names go under `tf.compat.v1.train` (and the TF2 `tf.train` subset, see `__all__`).
"""

from ndflow.train import experimental
from ndflow.train.adam import AdamOptimizer
from ndflow.train.gradient_descent import GradientDescentOptimizer
from ndflow.train.learning_rate_decay import (
    exponential_decay,
    inverse_time_decay,
    piecewise_constant,
    polynomial_decay,
)
from ndflow.train.momentum import MomentumOptimizer
from ndflow.train.optimizer import Optimizer
from ndflow.train.rmsprop import RMSPropOptimizer
from ndflow.train.training_util import (
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)

__all__ = [
    "experimental",
    "AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "Optimizer",
    "RMSPropOptimizer", "assert_global_step", "create_global_step", "exponential_decay",
    "get_global_step", "get_or_create_global_step", "global_step", "inverse_time_decay",
    "piecewise_constant", "polynomial_decay",
]
