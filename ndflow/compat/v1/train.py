"""`tf.compat.v1.train`: TF1 optimizers, learning-rate decay, the global step; `experimental`
holds TF 2.21's deprecated aliases of the mixed-precision API."""

from ndflow.train import (  # noqa: F401
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    assert_global_step,
    create_global_step,
    experimental,  # noqa: F401
    exponential_decay,
    get_global_step,
    get_or_create_global_step,
    global_step,
    inverse_time_decay,
    piecewise_constant,
    polynomial_decay,
)
