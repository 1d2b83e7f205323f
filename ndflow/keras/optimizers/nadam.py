"""`tf.keras.optimizers.Nadam`: Keras 3's Nadam (Adam with Nesterov momentum and Dozat's
momentum schedule u_t = beta_1 * (1 - 0.5 * 0.96^t))::

    u_product *= u_t                (once per step, before the variables' updates)
    m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
    m_hat = u_{t+1} * m / (1 - u_product * u_{t+1}) + (1 - u_t) * g / (1 - u_product)
    var -= lr * m_hat / (sqrt(v / (1 - beta_2^t)) + epsilon)

The running product is a scalar variable created by `build` after the slots (Keras's order).
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import AdaptiveMomentOptimizer
from ndflow.keras.optimizers.base_optimizer import cast, scalar
from ndflow.keras.optimizers.sparse_squares import dense_and_square
from ndflow.ops import arithmetic, math


@tf_export("keras.optimizers.Nadam", "optimizers.Nadam", v1=["keras.optimizers.Nadam"])
class Nadam(AdaptiveMomentOptimizer):
    """Nadam with slots "momentum", "velocity" and the momentum-schedule product."""

    handles_indexed_slices = True   # (Keras' elementwise ops on repeated rows)

    def build(self, var_list) -> None:
        if self.built:
            return
        dtype = var_list[0].dtype if var_list else dtypes.float32
        super().build(var_list)
        self.add_moments(var_list)
        self._u_product = self.add_variable([], "ones", dtype, name="u_product")

    def _schedule(self, dtype):
        """(u_t, u_{t+1}, u_product_t, 1 - beta_2^t) in `dtype`; the first call of a step
        advances the running product."""
        key = ("nadam", dtype)
        if "nadam_product" not in self._step_cache:
            prod_dt = self._u_product.dtype
            t = cast(self.iterations + 1, prod_dt)
            factor = 1.0 - 0.5 * arithmetic.pow(scalar(0.96, prod_dt), t)
            self._u_product.assign(self._u_product.read_value() *
                                   scalar(self.beta_1, prod_dt) * factor)
            self._step_cache["nadam_product"] = True
        if key not in self._step_cache:
            local_step = cast(self.iterations + 1, dtype)
            next_step = cast(self.iterations + 2, dtype)
            decay, beta_1 = cast(0.96, dtype), cast(self.beta_1, dtype)
            u_t = beta_1 * (1.0 - 0.5 * arithmetic.pow(decay, local_step))
            u_t_1 = beta_1 * (1.0 - 0.5 * arithmetic.pow(decay, next_step))
            u_product_t = cast(self._u_product.read_value(), dtype)
            beta_2_power = arithmetic.pow(cast(self.beta_2, dtype), local_step)
            self._step_cache[key] = (u_t, u_t_1, u_product_t, u_product_t * u_t_1,
                                     1 - beta_2_power, 1 - beta_1)
        return self._step_cache[key]

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        i = self._get_variable_index(variable)
        u_t, u_t_1, u_prod, u_prod_next, c2, one_minus_b1 = self._schedule(dt)
        m_var, v_var = self._momentums[i], self._velocities[i]
        gradient, square = dense_and_square(gradient)   # (Keras' squares of repeated rows)
        m = m_var.read_value()
        m = m + (gradient - m) * one_minus_b1
        m_var.assign(m)
        beta_2 = cast(self.beta_2, dt)
        v = v_var.read_value()
        v = v + (square - v) * (1 - beta_2)
        v_var.assign(v)
        m_hat = u_t_1 * m / (1 - u_prod_next) + (1 - u_t) * gradient / (1 - u_prod)
        v_hat = v / c2
        variable.assign_sub(m_hat * cast(learning_rate, dt) /
                            (math.sqrt(v_hat) + scalar(self.epsilon, dt)))
