"""`tf.compat.v1.train.MomentumOptimizer`: accum = accum * momentum + grad; var -= lr * accum."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops import training, training_sparse
from ndflow.ops.apply import convert_to_tensor
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to


@tf_export(v1=["train.MomentumOptimizer"])
class MomentumOptimizer(Optimizer):
    """Momentum (optionally Nesterov) with one "momentum" slot per variable."""

    def __init__(self, learning_rate, momentum, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(
            call_if_callable(self._learning_rate), name="learning_rate")
        self._momentum_tensor = convert_to_tensor(call_if_callable(self._momentum),
                                                  name="momentum")

    def _resource_apply_dense(self, grad, var):
        return training.resource_apply_momentum(
            var.handle, self.get_slot(var, "momentum").handle,
            cast_to(self._learning_rate_tensor, grad.dtype), grad,
            cast_to(self._momentum_tensor, grad.dtype), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)

    def _resource_apply_sparse(self, grad, var, indices):
        return training_sparse.resource_sparse_apply_momentum(
            var.handle, self.get_slot(var, "momentum").handle,
            cast_to(self._learning_rate_tensor, grad.dtype), grad, indices,
            cast_to(self._momentum_tensor, grad.dtype), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov)
