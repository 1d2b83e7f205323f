"""TF1 learning-rate decay functions (`tf.compat.v1.train.exponential_decay` & co).

In graph mode they return the decayed learning rate tensor for `global_step`; eagerly they
return a no-argument callable evaluating it at the step's current value (TF's
`functools.partial(schedule, global_step)`), which the TF1 optimizers call every step.
"""

from __future__ import annotations

import functools

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.train import learning_rate_schedule as lrs


def _bind(schedule, step):
    if context.executing_eagerly():
        return functools.partial(schedule, step)
    return schedule(step)


@tf_export(v1=["train.exponential_decay"])
def exponential_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name: str | None = None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), floored if `staircase`."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
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
    if global_step is None:
        raise ValueError("global_step is required for inverse_time_decay.")
    return _bind(lrs.InverseTimeDecay(learning_rate, decay_steps, decay_rate,
                                      staircase=staircase, name=name), global_step)


@tf_export(v1=["train.polynomial_decay"])
def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle: bool = False, name: str | None = None):
    if global_step is None:
        raise ValueError("global_step is required for polynomial_decay.")
    return _bind(lrs.PolynomialDecay(learning_rate, decay_steps, end_learning_rate, power,
                                     cycle=cycle, name=name), global_step)
