"""`tf.keras.optimizers.Adamax`: Keras 3's Adamax (Adam with the infinity norm)::

    m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|)
    var -= lr * m / ((1 - beta_1^t) * (u + epsilon))
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import AdaptiveMomentOptimizer
from ndflow.keras.optimizers.base_optimizer import cast, scalar
from ndflow.keras.optimizers.sparse_squares import dense_and_elementwise
from ndflow.ops import arithmetic, math


@tf_export("keras.optimizers.Adamax", "optimizers.Adamax", v1=["keras.optimizers.Adamax"])
class Adamax(AdaptiveMomentOptimizer):
    """Adamax with slots "momentum" and "norm"."""

    handles_indexed_slices = True   # (Keras' elementwise ops on repeated rows)

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._m, self._u = self.add_optimizer_variables(var_list, ["momentum", "norm"])

    def _bias_correction(self, dtype):
        """1 - beta_1^t, once per step and dtype."""
        key = ("adamax", dtype)
        if key not in self._step_cache:
            local_step = cast(self.iterations + 1, dtype)
            power = arithmetic.pow(cast(self.beta_1, dtype), local_step)
            self._step_cache[key] = 1 - power
        return self._step_cache[key]

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        i = self._get_variable_index(variable)
        m_var, u_var = self._m[i], self._u[i]
        gradient, magnitude = dense_and_elementwise(gradient, math.abs)   # (Keras' sum of
        # the abs of repeated rows)
        m = m_var.read_value()
        m = m + (gradient - m) * scalar(1 - self.beta_1, dt)
        m_var.assign(m)
        u = arithmetic.maximum(scalar(self.beta_2, dt) * u_var.read_value(),
                               magnitude)
        u_var.assign(u)
        variable.assign_sub(cast(learning_rate, dt) * m /
                            (self._bias_correction(dt) * (u + scalar(self.epsilon, dt))))
