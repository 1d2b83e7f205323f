"""`tf.keras.optimizers.SGD`: Keras 3's (Nesterov) momentum SGD.

    momentum == 0:  var -= lr * g                         (ResourceApplyGradientDescent)
    else:           m = m * momentum - lr * g; var += m   (ResourceApplyKerasMomentum;
                    nesterov: var += m * momentum - lr * g)
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, with_base_arguments
from ndflow.ops import training
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.indexed_slices import IndexedSlices


@tf_export("keras.optimizers.SGD", "optimizers.SGD", v1=["keras.optimizers.SGD"])
class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum; slot "momentum" when used."""

    @with_base_arguments
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov: bool = False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not isinstance(momentum, float) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = momentum
        self.nesterov = nesterov

    def build(self, variables) -> None:
        if self.built:
            return
        super().build(variables)
        self.momentums = []
        if self.momentum != 0:
            self.momentums = self.add_optimizer_variables(variables, "momentum")

    handles_indexed_slices = True
    linear_in_gradient = True

    def update_step(self, gradient, variable, learning_rate) -> None:
        lr = cast(learning_rate, variable.dtype)
        if isinstance(gradient, IndexedSlices):
            if self.momentum == 0:  # only the rows the step used
                variable.scatter_sub(IndexedSlices(gradient.values * lr, gradient.indices,
                                                   gradient.dense_shape))
                return
            gradient = convert_to_tensor(gradient)
        if self.momentum == 0:
            training.resource_apply_gradient_descent(variable.handle, lr, gradient)
            return
        m = self.momentums[self._get_variable_index(variable)]
        training.resource_apply_keras_momentum(
            variable.handle, m.handle, lr, gradient, cast(self.momentum, variable.dtype),
            use_nesterov=self.nesterov)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
