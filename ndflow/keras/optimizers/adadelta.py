"""`tf.keras.optimizers.Adadelta`: Keras 3's Adadelta::

    accumulated_grad = rho * accumulated_grad + (1 - rho) * g^2
    delta = -sqrt(accumulated_delta_var + eps) * g / sqrt(accumulated_grad + eps)
    accumulated_delta_var = rho * accumulated_delta_var + (1 - rho) * delta^2
    var += lr * delta

which is TF's ResourceApplyAdadelta, used as one fused op.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar, with_base_arguments
from ndflow.ops import training_adaptive


@tf_export("keras.optimizers.Adadelta", "optimizers.Adadelta",
           v1=["keras.optimizers.Adadelta"])
class Adadelta(Optimizer):
    """Adadelta with slots "accumulated_grad" and "accumulated_delta_var"."""

    @with_base_arguments
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            var_list, ["accumulated_grad", "accumulated_delta_var"])

    def update_step(self, gradient, variable, learning_rate) -> None:
        # Keras 3's formula is TF's ResourceApplyAdadelta: one fused op
        dt = variable.dtype
        i = self._get_variable_index(variable)
        training_adaptive.resource_apply_adadelta(
            variable.handle, self._accumulated_grads[i].handle,
            self._accumulated_delta_vars[i].handle, cast(learning_rate, dt),
            scalar(self.rho, dt), scalar(self.epsilon, dt), gradient)

    def get_config(self) -> dict:
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}
