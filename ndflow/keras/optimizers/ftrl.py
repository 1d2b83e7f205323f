"""`tf.keras.optimizers.Ftrl`: Keras 3's FTRL-Proximal (with L2 shrinkage and beta)::

    l2 = l2_regularization_strength + beta / (2 lr)
    g_s = g + 2 * l2_shrinkage * var;  n' = n + g^2
    linear += g_s - (n'^(-p) - n^(-p)) / lr * var           (p = learning_rate_power)
    var = (clip(linear, -l1, l1) - linear) / (n'^(-p) / lr + 2 * l2);  n = n'

which is TF's ResourceApplyFtrlV2 (with that l2), used as one fused op.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar, with_base_arguments
from ndflow.ops import training_adaptive


@tf_export("keras.optimizers.Ftrl", "optimizers.Ftrl", v1=["keras.optimizers.Ftrl"])
class Ftrl(Optimizer):
    """FTRL with slots "accumulator" (from `initial_accumulator_value`) and "linear"."""

    @with_base_arguments
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        checks = (
            (initial_accumulator_value < 0.0, "initial_accumulator_value",
             initial_accumulator_value, "`initial_accumulator_value` needs to be positive or "
             "zero."),
            (learning_rate_power > 0.0, "learning_rate_power", learning_rate_power,
             "`learning_rate_power` needs to be negative or zero."),
            (l1_regularization_strength < 0.0, "l1_regularization_strength",
             l1_regularization_strength, "`l1_regularization_strength` needs to be positive "
             "or zero."),
            (l2_regularization_strength < 0.0, "l2_regularization_strength",
             l2_regularization_strength, "`l2_regularization_strength` needs to be positive "
             "or zero."),
            (l2_shrinkage_regularization_strength < 0.0,
             "l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
             "`l2_shrinkage_regularization_strength` needs to be positive or zero."))
        for bad, arg, value, message in checks:
            if bad:
                raise ValueError(f"{message} Received: {arg}={value}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._accumulators, self._linears = [], []
        for v in var_list:   # interleaved per variable, as Keras orders them
            self._accumulators.append(self.add_variable_from_reference(
                v, "accumulator", float(self.initial_accumulator_value)))
            self._linears.append(self.add_variable_from_reference(v, "linear"))

    def update_step(self, gradient, variable, learning_rate) -> None:
        # Keras 3's formula is TF's ResourceApplyFtrlV2 with l2 + beta / (2 lr): one fused op
        dt = variable.dtype
        i = self._get_variable_index(variable)
        lr = cast(learning_rate, dt)
        l2 = scalar(self.l2_regularization_strength, dt) + \
            scalar(self.beta, dt) / (scalar(2.0, dt) * lr)
        training_adaptive.resource_apply_ftrl(
            variable.handle, self._accumulators[i].handle, self._linears[i].handle, gradient,
            lr, scalar(self.l1_regularization_strength, dt), l2,
            scalar(self.learning_rate_power, dt),
            l2_shrinkage=scalar(self.l2_shrinkage_regularization_strength, dt))

    def get_config(self) -> dict:
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength":
                    self.l2_shrinkage_regularization_strength,
                "beta": self.beta}
