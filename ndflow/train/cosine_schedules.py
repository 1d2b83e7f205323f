"""Cosine learning-rate schedules: Keras 3's `CosineDecay` (with its linear warmup) and
`CosineDecayRestarts` (SGDR), and TF1's legacy `LinearCosineDecay` / `NoisyLinearCosineDecay`
behind `tf.compat.v1.train.linear_cosine_decay` & co. Formulas are Keras 3's / TF's, in the
initial learning rate's dtype with the step cast to it.
"""

from __future__ import annotations

import math as pymath

from ndflow.core.api_export import tf_export
from ndflow.ops import arithmetic, comparison, math, math_trig, random
from ndflow.train.learning_rate_schedule import (
    SCHEDULES,
    _cast,
    _Lr0Schedule,
)


def _half_cosine(fraction, dtype):
    """0.5 * (1 + cos(pi * fraction))."""
    return 0.5 * (1.0 + math_trig.cos(_cast(pymath.pi, dtype) * fraction))


@tf_export("keras.optimizers.schedules.CosineDecay", "optimizers.schedules.CosineDecay",
           v1=["keras.optimizers.schedules.CosineDecay"])
class CosineDecay(_Lr0Schedule):
    """Without warmup: lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha). With `warmup_target`: a linear ramp from lr0 to warmup_target over
    `warmup_steps`, then that cosine decay from warmup_target."""

    _DEFAULT_NAME = "CosineDecay"

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        self._init_decay(initial_learning_rate, decay_steps, name)
        self.alpha = alpha
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, decay_steps, start, dtype):
        cosine = _half_cosine(step / decay_steps, dtype)
        return start * ((1.0 - self.alpha) * cosine + self.alpha)

    def _schedule(self, lr0, step, dtype):
        decay_steps = _cast(self.decay_steps, dtype)
        step = _cast(step, dtype)
        if self.warmup_target is None:
            return self._decayed(arithmetic.minimum(step, decay_steps), decay_steps, lr0, dtype)
        target = _cast(self.warmup_target, dtype)
        warmup_steps = _cast(self.warmup_steps, dtype)
        step = arithmetic.minimum(step, decay_steps + warmup_steps)
        warming = lr0 + (target - lr0) * (step / warmup_steps)
        decaying = self._decayed(step - warmup_steps, decay_steps, target, dtype)
        # both sides are finite where selected (the other may divide by 0 warmup steps)
        return arithmetic.where(comparison.less(step, warmup_steps), warming, decaying)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


@tf_export("keras.optimizers.schedules.CosineDecayRestarts",
           "optimizers.schedules.CosineDecayRestarts",
           v1=["keras.optimizers.schedules.CosineDecayRestarts"])
class CosineDecayRestarts(_Lr0Schedule):
    """SGDR: cosine decays restarted after first_decay_steps * t_mul^i steps, the i-th at
    lr0 * m_mul^i."""

    _DEFAULT_NAME = "SGDRDecay"

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        if first_decay_steps <= 0:
            raise ValueError("Argument `first_decay_steps` must be > 0. Received: "
                             f"first_decay_steps={first_decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def _schedule(self, lr0, step, dtype):
        t_mul, m_mul = _cast(self._t_mul, dtype), _cast(self._m_mul, dtype)
        fraction = _cast(step, dtype) / _cast(self.first_decay_steps, dtype)
        # restart i and the fraction done of its period (geometric periods unless t_mul is 1;
        # the other form divides by log(1) = 0 and is never selected)
        i_geo = math.floor(arithmetic.log(1.0 - fraction * (1.0 - t_mul)) / arithmetic.log(t_mul))
        sum_r = (1.0 - arithmetic.pow(t_mul, i_geo)) / (1.0 - t_mul)
        frac_geo = (fraction - sum_r) / arithmetic.pow(t_mul, i_geo)
        i_lin = math.floor(fraction)
        geometric = comparison.not_equal(t_mul, _cast(1.0, dtype))
        i_restart = arithmetic.where(geometric, i_geo, i_lin)
        fraction = arithmetic.where(geometric, frac_geo, fraction - i_lin)
        cosine = arithmetic.pow(m_mul, i_restart) * _half_cosine(fraction, dtype)
        alpha = _cast(self.alpha, dtype)
        return lr0 * ((1.0 - alpha) * cosine + alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


class LinearCosineDecay(_Lr0Schedule):
    """TF's legacy schedule: lr0 * ((alpha + (decay_steps - s) / decay_steps) *
    0.5 * (1 + cos(pi * 2 * num_periods * s / decay_steps)) + beta), s = min(step,
    decay_steps); with `noise`, the linear part gets N(0, initial_variance /
    (1 + s)^variance_decay) added (NoisyLinearCosineDecay)."""

    def __init__(self, initial_learning_rate, decay_steps, num_periods=0.5, alpha=0.0,
                 beta=0.001, name=None, noise=None):
        self._init_decay(initial_learning_rate, decay_steps, name)
        self.num_periods = num_periods
        self.alpha = alpha
        self.beta = beta
        self.noise = noise   # (initial_variance, variance_decay) or None

    @property
    def _DEFAULT_NAME(self) -> str:
        return "NoisyLinearCosineDecay" if self.noise else "LinearCosineDecay"

    def _schedule(self, lr0, step, dtype):
        decay_steps = _cast(self.decay_steps, dtype)
        s = arithmetic.minimum(_cast(step, dtype), decay_steps)
        linear = (decay_steps - s) / decay_steps
        if self.noise:
            variance = _cast(self.noise[0], dtype) / arithmetic.pow(
                1.0 + s, _cast(self.noise[1], dtype))
            linear = linear + random.random_normal([], stddev=math.sqrt(variance), dtype=dtype)
        fraction = 2.0 * _cast(self.num_periods, dtype) * (s / decay_steps)
        decayed = (_cast(self.alpha, dtype) + linear) * _half_cosine(fraction, dtype) \
            + _cast(self.beta, dtype)
        return lr0 * decayed

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "num_periods": self.num_periods,
                "alpha": self.alpha, "beta": self.beta, "name": self.name}


SCHEDULES.update({c.__name__: c for c in (CosineDecay, CosineDecayRestarts)})
