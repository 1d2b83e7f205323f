"""`tf.keras.optimizers.Adagrad`: Keras 3's Adagrad::

    accumulator += g^2;  var -= lr * g / sqrt(accumulator + epsilon)

(epsilon inside the square root, as Keras 3; TF's ResourceApplyAdagradV2 adds it outside).
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar, with_base_arguments
from ndflow.keras.optimizers.sparse_squares import dense_and_square
from ndflow.ops import math


@tf_export("keras.optimizers.Adagrad", "optimizers.Adagrad", v1=["keras.optimizers.Adagrad"])
class Adagrad(Optimizer):
    """Adagrad with the slot "accumulator" (starting at `initial_accumulator_value`)."""

    handles_indexed_slices = True   # (Keras' sum of squares for repeated rows)

    @with_base_arguments
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._accumulators = self.add_optimizer_variables(
            var_list, "accumulator", initializer=float(self.initial_accumulator_value))

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        accumulator = self._accumulators[self._get_variable_index(variable)]
        gradient, square = dense_and_square(gradient)   # (Keras' squares of repeated rows)
        accumulator.assign_add(square)
        denominator = math.sqrt(accumulator.read_value() + scalar(self.epsilon, dt))
        variable.assign_sub(cast(learning_rate, dt) * gradient / denominator)

    def get_config(self) -> dict:
        return {**super().get_config(),
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
