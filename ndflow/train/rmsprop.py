"""`tf.compat.v1.train.RMSPropOptimizer` (TF's formulation: `rms` starts at ones)::

    ms = decay * ms + (1 - decay) * g^2
    mom = momentum * mom + lr * g / sqrt(ms + epsilon)       (centered: ms - mg^2 + eps)
    var -= mom

Slots "rms" (`<var>/RMSProp`), "mg" when centered, and "momentum", in that creation order.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops import training, training_sparse
from ndflow.ops.apply import convert_to_tensor
from ndflow.train import slot_creator
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to


@tf_export(v1=["train.RMSPropOptimizer"])
class RMSPropOptimizer(Optimizer):
    """RMSProp with fused `ResourceApplyRMSProp` / `ResourceApplyCenteredRMSProp`."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._get_or_make_slot(v, lambda v=v: slot_creator.filled(v.shape, v.dtype, 1.0),
                                   "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            call_if_callable(self._learning_rate), name="learning_rate")
        self._decay_tensor = convert_to_tensor(call_if_callable(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(call_if_callable(self._momentum),
                                                  name="momentum")
        self._epsilon_tensor = convert_to_tensor(call_if_callable(self._epsilon),
                                                 name="epsilon")

    def _resource_apply_dense(self, grad, var):
        dt = grad.dtype
        args = (cast_to(self._learning_rate_tensor, dt), cast_to(self._decay_tensor, dt),
                cast_to(self._momentum_tensor, dt), cast_to(self._epsilon_tensor, dt), grad)
        rms = self.get_slot(var, "rms").handle
        mom = self.get_slot(var, "momentum").handle
        if self._centered:
            return training.resource_apply_centered_rms_prop(
                var.handle, self.get_slot(var, "mg").handle, rms, mom, *args,
                use_locking=self._use_locking)
        return training.resource_apply_rms_prop(var.handle, rms, mom, *args,
                                                use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        dt = grad.dtype
        args = (cast_to(self._learning_rate_tensor, dt), cast_to(self._decay_tensor, dt),
                cast_to(self._momentum_tensor, dt), cast_to(self._epsilon_tensor, dt), grad,
                indices)
        rms = self.get_slot(var, "rms").handle
        mom = self.get_slot(var, "momentum").handle
        if self._centered:
            return training_sparse.resource_sparse_apply_centered_rms_prop(
                var.handle, self.get_slot(var, "mg").handle, rms, mom, *args,
                use_locking=self._use_locking)
        return training_sparse.resource_sparse_apply_rms_prop(var.handle, rms, mom, *args,
                                                              use_locking=self._use_locking)
