"""`tf.keras.optimizers.ScheduleFreeAdamW`: Keras 3's schedule-free AdamW (Defazio et al.
2024). The "momentum" slot holds the base iterate z (starting at the variable), the variable
holds the interpolation y between z and the running average x::

    t = iterations + 1;  lr *= min(t / warmup_steps, 1) if warmup_steps
    v += (g^2 - v) * (1 - beta_2);  z_new = z - lr * g / (sqrt(v / (1 - beta_2^t)) + eps)
    x = (y - (1 - beta_1) * z_new) / beta_1;  x = (1 - 1/t) * x + z_new / t
    y = (1 - beta_1) * z_new + beta_1 * x
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import AdaptiveMomentOptimizer
from ndflow.keras.optimizers.base_optimizer import cast, with_base_arguments
from ndflow.ops import arithmetic, math


@tf_export("keras.optimizers.ScheduleFreeAdamW", "optimizers.ScheduleFreeAdamW",
           v1=["keras.optimizers.ScheduleFreeAdamW"])
class ScheduleFreeAdamW(AdaptiveMomentOptimizer):
    """Schedule-free AdamW with slots "momentum" (z) and "velocity"."""

    @with_base_arguments
    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 warmup_steps=0, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self.warmup_steps = warmup_steps

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self.add_moments(var_list)
        for z, var in zip(self._momentums, var_list):
            z.assign(var.read_value())

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        lr = cast(learning_rate, dt)
        local_step = cast(self.iterations + 1, dt)
        beta_1, beta_2 = cast(self.beta_1, dt), cast(self.beta_2, dt)
        if self.warmup_steps > 0:
            lr = lr * arithmetic.minimum(local_step / cast(self.warmup_steps, dt), 1.0)
        i = self._get_variable_index(variable)
        z_var, v_var = self._momentums[i], self._velocities[i]
        v = v_var.read_value()
        v = v + (math.square(gradient) - v) * (1 - beta_2)
        v_var.assign(v)
        denominator = math.sqrt(v / (1 - arithmetic.pow(beta_2, local_step))) + \
            cast(self.epsilon, dt)
        z = z_var.read_value() - lr * gradient / denominator
        z_var.assign(z)
        weight = 1.0 / local_step
        # Keras 3.15 reads z after its update here (its `momentum.value` is the variable
        # itself on TensorFlow), so x is recovered from y with the new z
        x_old = (variable.read_value() - (1 - beta_1) * z) / beta_1
        x_new = (1 - weight) * x_old + weight * z
        variable.assign((1 - beta_1) * z + beta_1 * x_new)

    def get_config(self) -> dict:
        return {**super().get_config(), "warmup_steps": self.warmup_steps}
