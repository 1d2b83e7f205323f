"""TF1 learning-rate decay functions (`tf.compat.v1.train.exponential_decay` & co).

In graph mode they return the decayed learning rate tensor for `global_step`; eagerly they
return a no-argument callable evaluating it at the step's current value (TF's
`functools.partial(schedule, global_step)`), which the TF1 optimizers call every step. A None
`global_step` fails as converting None does (TF 2.21 has no check of its own): in a graph at
once, eagerly when the callable runs.
"""

from __future__ import annotations

import functools
import math as pymath

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.train import cosine_schedules as cos
from ndflow.train import learning_rate_schedule as lrs


def _bind(schedule, step):
    if context.executing_eagerly():
        return functools.partial(schedule, step)
    return schedule(step)


@tf_export(v1=["train.exponential_decay"])
def exponential_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name: str | None = None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), floored if `staircase`."""
    return _bind(lrs.ExponentialDecay(learning_rate, decay_steps, decay_rate,
                                      staircase=staircase, name=name), global_step)


@tf_export(v1=["train.piecewise_constant", "train.piecewise_constant_decay"])
def piecewise_constant(x, boundaries, values, name: str | None = None):
    """values[i] on the i-th interval of `boundaries` (intervals closed on the right)."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of "
                         "values")
    return _bind(lrs.PiecewiseConstantDecay(boundaries, values, name=name), x)


@tf_export(v1=["train.inverse_time_decay"])
def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate,
                       staircase: bool = False, name: str | None = None):
    """Decays the learning rate as 1 / (1 + rate * t).

    The rate is `learning_rate / (1 + decay_rate * global_step / decay_steps)`, with the ratio
    floored when `staircase`.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      decay_steps: how many steps make one unit of decay.
      decay_rate: the decay rate.
      staircase: if True, decay in discrete steps.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Raises:
      ValueError: if `global_step` is None (in a graph at once, eagerly when the callable runs).

    Example:
      >>> lr = tf.compat.v1.train.inverse_time_decay(1.0, 2, 1, 0.5)
      >>> float(lr())
      0.5
    """
    return _bind(lrs.InverseTimeDecay(learning_rate, decay_steps, decay_rate,
                                      staircase=staircase, name=name), global_step)


@tf_export(v1=["train.polynomial_decay"])
def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle: bool = False, name: str | None = None):
    """Decays the learning rate polynomially to `end_learning_rate`.

    The rate is `(learning_rate - end_learning_rate) * (1 - step / decay_steps) ** power +
    end_learning_rate`, with the step capped at `decay_steps`; with `cycle`, `decay_steps` grows to
    the next multiple of itself instead.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      decay_steps: the steps over which to decay.
      end_learning_rate: the final learning rate.
      power: the polynomial's power (1 is linear).
      cycle: whether to restart the decay past `decay_steps`.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Raises:
      ValueError: if `global_step` is None (in a graph at once, eagerly when the callable runs).

    Example:
      >>> lr = tf.compat.v1.train.polynomial_decay(1.0, 5, 10, end_learning_rate=0.0)
      >>> float(lr())
      0.5
    """
    return _bind(lrs.PolynomialDecay(learning_rate, decay_steps, end_learning_rate, power,
                                     cycle=cycle, name=name), global_step)


@tf_export(v1=["train.natural_exp_decay"])
def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name: str | None = None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps), floored if `staircase`
    (TF's: an exponential decay with rate exp(-decay_rate))."""
    return _bind(lrs.ExponentialDecay(learning_rate, decay_steps, pymath.exp(-decay_rate),
                                      staircase=staircase, name=name), global_step)


@tf_export(v1=["train.cosine_decay"])
def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name: str | None = None):
    """Decays the learning rate along a half cosine wave.

    The rate is `learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * t)) + alpha)` with `t =
    min(global_step, decay_steps) / decay_steps`.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      decay_steps: the steps over which to decay.
      alpha: the final rate as a fraction of `learning_rate`.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Example:
      >>> lr = tf.compat.v1.train.cosine_decay(1.0, 5, 10)
      >>> round(float(lr()), 4)
      0.5
    """
    return _bind(cos.CosineDecay(learning_rate, decay_steps, alpha=alpha, name=name),
                 global_step)


@tf_export(v1=["train.cosine_decay_restarts"])
def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name: str | None = None):
    """Cosine decay that restarts (SGDR: warm restarts).

    The first period lasts `first_decay_steps`; each next one is `t_mul` times as long and starts
    from `m_mul` times the previous initial rate.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      first_decay_steps: the length of the first period.
      t_mul: the factor by which each period grows.
      m_mul: the factor by which each restart's rate shrinks.
      alpha: the minimum rate as a fraction of `learning_rate`.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Example:
      >>> lr = tf.compat.v1.train.cosine_decay_restarts(1.0, 10, 10)
      >>> round(float(lr()), 4)
      1.0
    """
    return _bind(cos.CosineDecayRestarts(learning_rate, first_decay_steps, t_mul=t_mul,
                                         m_mul=m_mul, alpha=alpha, name=name), global_step)


@tf_export(v1=["train.linear_cosine_decay"])
def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name: str | None = None):
    """Decays the learning rate by a linear ramp times a cosine.

    With `t = min(global_step, decay_steps)`, the rate is `learning_rate * ((alpha + (decay_steps -
    t) / decay_steps) * 0.5 * (1 + cos(2 pi num_periods t / decay_steps)) + beta)`.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      decay_steps: the steps over which to decay.
      num_periods: the number of cosine periods in the decay.
      alpha: see the formula.
      beta: see the formula.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Example:
      >>> lr = tf.compat.v1.train.linear_cosine_decay(1.0, 0, 10)
      >>> round(float(lr()), 4)
      1.001
    """
    return _bind(cos.LinearCosineDecay(learning_rate, decay_steps, num_periods, alpha, beta,
                                       name), global_step)


@tf_export(v1=["train.noisy_linear_cosine_decay"])
def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name: str | None = None):
    """Linear cosine decay with Gaussian noise added to the ramp.

    As `linear_cosine_decay`, with noise of variance `initial_variance / (1 + global_step) **
    variance_decay` added to the linear term, so each evaluation differs.

    Args:
      learning_rate: the initial learning rate (a Python number or scalar tensor).
      global_step: the current step (an int, scalar tensor or variable).
      decay_steps: the steps over which to decay.
      initial_variance: the initial variance of the noise.
      variance_decay: how fast the noise's variance decays.
      num_periods: the number of cosine periods in the decay.
      alpha: see `linear_cosine_decay`.
      beta: see `linear_cosine_decay`.
      name: optional name scope.

    Returns:
      In a graph, the decayed learning rate as a scalar tensor; executing eagerly, a no-argument
      callable that computes it for the step's current value.

    Example:
      >>> lr = tf.compat.v1.train.noisy_linear_cosine_decay(1.0, 0, 10)
      >>> isinstance(float(lr()), float)
      True
    """
    return _bind(cos.LinearCosineDecay(learning_rate, decay_steps, num_periods, alpha, beta,
                                       name, noise=(initial_variance, variance_decay)),
                 global_step)
