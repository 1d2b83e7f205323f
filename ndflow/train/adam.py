"""`tf.compat.v1.train.AdamOptimizer` (Kingma & Ba), TF's formulation:

    lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
    var -= lr_t * m / (sqrt(v) + epsilon)

Slots "m" and "v" (variables `<var>/Adam`, `<var>/Adam_1`); beta1^t and beta2^t are the
non-slot variables `beta1_power` and `beta2_power`, multiplied by beta1/beta2 after all
updates of a step.
"""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.ops import training
from ndflow.ops.apply import convert_to_tensor
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to, group_named


@tf_export(v1=["train.AdamOptimizer"])
class AdamOptimizer(Optimizer):
    """Adam with TF1's slots, non-slot beta powers and fused `ResourceApplyAdam`."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking: bool = False, name: str = "Adam",
                 use_own_namescope_for_non_slot_vars: bool = False):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self):
        return (self._get_non_slot_variable("beta1_power"),
                self._get_non_slot_variable("beta2_power"))

    def _create_slots(self, var_list) -> None:
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(call_if_callable(self._beta1), "beta1_power", first_var)
        self._create_non_slot_variable(call_if_callable(self._beta2), "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        self._lr_t = convert_to_tensor(call_if_callable(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(call_if_callable(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(call_if_callable(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(call_if_callable(self._epsilon), name="epsilon")

    def _resource_apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        dt = grad.dtype
        return training.resource_apply_adam(
            var.handle, self.get_slot(var, "m").handle, self.get_slot(var, "v").handle,
            cast_to(beta1_power, dt), cast_to(beta2_power, dt), cast_to(self._lr_t, dt),
            cast_to(self._beta1_t, dt), cast_to(self._beta2_t, dt),
            cast_to(self._epsilon_t, dt), grad, use_locking=self._use_locking)

    def _finish(self, update_ops, name_scope: str):
        with scopes.control_dependencies([op for op in update_ops if op is not None]):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(
                beta1_power.read_value() * cast_to(self._beta1_t, beta1_power.dtype),
                use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(
                beta2_power.read_value() * cast_to(self._beta2_t, beta2_power.dtype),
                use_locking=self._use_locking)
        return group_named(list(update_ops) + [update_beta1, update_beta2], name_scope)
