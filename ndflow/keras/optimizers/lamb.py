"""`tf.keras.optimizers.Lamb`: Keras 3's LAMB (Adam's step rescaled per variable by the
trust ratio ||var|| / ||step||, 1 when either norm is 0)::

    m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
    step = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
    var -= ratio * lr * step
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import AdaptiveMomentOptimizer, update_moments
from ndflow.keras.optimizers.base_optimizer import cast, scalar
from ndflow.ops import arithmetic, comparison, math, reduction


@tf_export("keras.optimizers.Lamb", "optimizers.Lamb", v1=["keras.optimizers.Lamb"])
class Lamb(AdaptiveMomentOptimizer):
    """LAMB with slots "momentum" and "velocity"."""

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self.add_moments(var_list)

    def _bias_corrections(self, dtype):
        key = ("lamb", dtype)
        if key not in self._step_cache:
            local_step = cast(self.iterations + 1, dtype)
            self._step_cache[key] = (
                1.0 - arithmetic.pow(cast(self.beta_1, dtype), local_step),
                1.0 - arithmetic.pow(cast(self.beta_2, dtype), local_step))
        return self._step_cache[key]

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        i = self._get_variable_index(variable)
        c1, c2 = self._bias_corrections(dt)
        m_var, v_var = self._momentums[i], self._velocities[i]
        m, v = update_moments(m_var, v_var, gradient, self.beta_1, self.beta_2)
        step = (m / c1) / (math.sqrt(v / c2) + scalar(self.epsilon, dt))
        w_norm = math.sqrt(reduction.reduce_sum(math.square(variable.read_value())))
        g_norm = math.sqrt(reduction.reduce_sum(math.square(step)))
        zero, one = scalar(0.0, dt), scalar(1.0, dt)
        ratio = arithmetic.where(
            comparison.greater(w_norm, zero),
            arithmetic.where(comparison.greater(g_norm, zero), w_norm / g_norm, one), one)
        variable.assign_sub(ratio * cast(learning_rate, dt) * step)
