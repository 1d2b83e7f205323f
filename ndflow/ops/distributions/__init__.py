"""TF1's `tf.compat.v1.distributions` (deprecated in TensorFlow for TensorFlow Probability,
still used by TF1 programs): the `Distribution` base class, twelve distributions and
`kl_divergence` / `RegisterKL`, one module each, built on ndflow's ops."""

from ndflow.ops.distributions import (  # noqa: F401 - importing a module declares its names
    bernoulli,
    beta,
    categorical,
    dirichlet,
    dirichlet_multinomial,
    distribution,
    exponential,
    gamma,
    kullback_leibler,
    laplace,
    multinomial,
    normal,
    special_math,
    student_t,
    uniform,
    util,
)
