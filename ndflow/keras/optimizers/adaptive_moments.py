"""The hyperparameters Keras 3's Adam-type optimizers share (Adam, Adamax, Nadam, Lamb,
ScheduleFreeAdamW): the decay rates `beta_1` and `beta_2` of the gradient's first and second
moment estimates and the denominator's `epsilon`, stored as attributes and in the config."""

from __future__ import annotations

from ndflow.keras.optimizers.base_optimizer import Optimizer, scalar, with_base_arguments
from ndflow.ops import math


def update_moments(m_var, v_var, gradient, beta_1, beta_2):
    """Keras's moment updates, m += (g - m) * (1 - beta_1) and v += (g^2 - v) * (1 - beta_2)
    (the factors exact in the slots' dtype, the variable's): the new (m, v)."""
    dt = m_var.dtype
    m = m_var.read_value()
    m = m + (gradient - m) * scalar(1 - beta_1, dt)
    m_var.assign(m)
    v = v_var.read_value()
    v = v + (math.square(gradient) - v) * scalar(1 - beta_2, dt)
    v_var.assign(v)
    return m, v


class AdaptiveMomentOptimizer(Optimizer):
    """An optimizer with Adam's `beta_1`, `beta_2` and `epsilon` (Keras's defaults)."""

    @with_base_arguments
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def add_moments(self, var_list) -> None:
        """The slots "momentum" and "velocity" of each variable, interleaved (Keras's order),
        as `_momentums` and `_velocities`."""
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"])

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}
