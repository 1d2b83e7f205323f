"""`tf.keras.optimizers.Lion`: Keras 3's Lion (sign of an interpolated momentum)::

    var -= lr * sign(beta_1 * m + (1 - beta_1) * g)
    m = beta_2 * m + (1 - beta_2) * g
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, with_base_arguments
from ndflow.ops import math


@tf_export("keras.optimizers.Lion", "optimizers.Lion", v1=["keras.optimizers.Lion"])
class Lion(Optimizer):
    """Lion with the slot "momentum"."""

    @with_base_arguments
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        m_var = self._momentums[self._get_variable_index(variable)]
        # as Keras: the betas as `dt` tensors, (1 - beta) computed in `dt`
        beta_1, beta_2 = cast(self.beta_1, dt), cast(self.beta_2, dt)
        m = m_var.read_value()
        direction = math.sign(m * beta_1 + gradient * (1.0 - beta_1))
        variable.assign_sub(cast(learning_rate, dt) * direction)
        m_var.assign(m * beta_2 + gradient * (1.0 - beta_2))

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}
