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
from ndflow.core.doc_tables import attach
from ndflow.train import cosine_schedules as cos
from ndflow.train import learning_rate_decay_docs
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
    return _bind(lrs.InverseTimeDecay(learning_rate, decay_steps, decay_rate,
                                      staircase=staircase, name=name), global_step)


@tf_export(v1=["train.polynomial_decay"])
def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle: bool = False, name: str | None = None):
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
    return _bind(cos.CosineDecay(learning_rate, decay_steps, alpha=alpha, name=name),
                 global_step)


@tf_export(v1=["train.cosine_decay_restarts"])
def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name: str | None = None):
    return _bind(cos.CosineDecayRestarts(learning_rate, first_decay_steps, t_mul=t_mul,
                                         m_mul=m_mul, alpha=alpha, name=name), global_step)


@tf_export(v1=["train.linear_cosine_decay"])
def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name: str | None = None):
    return _bind(cos.LinearCosineDecay(learning_rate, decay_steps, num_periods, alpha, beta,
                                       name), global_step)


@tf_export(v1=["train.noisy_linear_cosine_decay"])
def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name: str | None = None):
    return _bind(cos.LinearCosineDecay(learning_rate, decay_steps, num_periods, alpha, beta,
                                       name, noise=(initial_variance, variance_decay)),
                 global_step)


attach(globals(), learning_rate_decay_docs.DOCS)
