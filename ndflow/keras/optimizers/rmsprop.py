"""`tf.keras.optimizers.RMSprop`: Keras 3's RMSprop::

    velocity = rho * velocity + (1 - rho) * g^2
    (centered) average_gradient = rho * average_gradient + (1 - rho) * g
    increment = lr * g / sqrt(velocity (- average_gradient^2) + epsilon)
    momentum > 0: mom = momentum * mom + increment; var -= mom   else var -= increment

With momentum this is exactly TF's ResourceApply(Centered)RMSProp; without, the update is
built from elementwise ops (there is no momentum slot to hand to the fused op).
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar, with_base_arguments
from ndflow.keras.optimizers.sparse_squares import dense_and_square
from ndflow.ops import math, training
from ndflow.ops.indexed_slices import IndexedSlices


@tf_export("keras.optimizers.RMSprop", "optimizers.RMSprop", v1=["keras.optimizers.RMSprop"])
class RMSprop(Optimizer):
    """RMSprop with slots "velocity" (+ "momentum" if momentum > 0, "average_gradient" if
    centered)."""

    handles_indexed_slices = True   # (Keras' sum of squares for repeated rows)

    @with_base_arguments
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered: bool = False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._momentums = []
        if self.momentum > 0:
            self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._average_gradients = []
        if self.centered:
            self._average_gradients = self.add_optimizer_variables(var_list,
                                                                   "average_gradient")

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        i = self._get_variable_index(variable)
        lr = cast(learning_rate, dt)
        rho, eps = scalar(self.rho, dt), scalar(self.epsilon, dt)  # Python operands, as Keras
        velocity = self._velocities[i]
        if self.momentum > 0 and not isinstance(gradient, IndexedSlices):
            mom = self._momentums[i].handle
            args = (lr, rho, scalar(self.momentum, dt), eps, gradient)
            if self.centered:
                training.resource_apply_centered_rms_prop(
                    variable.handle, self._average_gradients[i].handle, velocity.handle, mom,
                    *args)
            else:
                training.resource_apply_rms_prop(variable.handle, velocity.handle, mom, *args)
            return
        one_minus_rho = scalar(1 - self.rho, dt)
        gradient, square = dense_and_square(gradient)   # (Keras' squares of repeated rows)
        vel = rho * velocity.read_value() + one_minus_rho * square
        velocity.assign(vel)
        if self.centered:
            avg_var = self._average_gradients[i]
            avg = rho * avg_var.read_value() + one_minus_rho * gradient
            avg_var.assign(avg)
            denominator = vel - math.square(avg) + eps
        else:
            denominator = vel + eps
        increment = lr * gradient / math.sqrt(denominator)
        if self.momentum > 0:   # (an IndexedSlices gradient: Keras' update, op by op)
            mom = self._momentums[i]
            mom.assign(scalar(self.momentum, dt) * mom.read_value() + increment)
            variable.assign_sub(mom.read_value())
            return
        variable.assign_sub(increment)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                       "centered": self.centered})
        return config
