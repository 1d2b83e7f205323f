"""`tf.compat.v1.train.GradientDescentOptimizer`: var -= learning_rate * grad."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops import state_sparse, training
from ndflow.ops.apply import convert_to_tensor
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to


@tf_export(v1=["train.GradientDescentOptimizer"])
class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent (one `ResourceApplyGradientDescent` per variable)."""

    def __init__(self, learning_rate, use_locking: bool = False,
                 name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self) -> None:
        lr = call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(lr, name="learning_rate")

    def _resource_apply_dense(self, grad, var):
        return training.resource_apply_gradient_descent(
            var.handle, cast_to(self._learning_rate_tensor, grad.dtype), grad,
            use_locking=self._use_locking)

    def _resource_apply_sparse_duplicate_indices(self, grad, var, indices):
        """var[indices] -= lr * rows (repeated rows add up): only those rows are touched."""
        lr = cast_to(self._learning_rate_tensor, grad.dtype)
        return state_sparse.resource_scatter("add", var.handle, indices, -grad * lr, var.dtype)
