"""`tf.compat.v1.train.AdagradDAOptimizer`: Adagrad Dual Averaging (Duchi et al.), for sparse
linear models. Slots "gradient_accumulator" (zeros) and "gradient_squared_accumulator"
(`initial_gradient_squared_accumulator_value`); each step feeds the fused op the global step
plus one, as TF does (the step the update makes, read before the step increments)."""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.ops import training_adagrad_da as ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import add
from ndflow.ops.array_core import identity
from ndflow.train import slot_creator
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to


@tf_export(v1=["train.AdagradDAOptimizer"])
class AdagradDAOptimizer(Optimizer):
    """AdagradDA: needs the `global_step` variable (its value sets the regularization)."""

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(f"initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = \
            initial_gradient_squared_accumulator_value
        self._learning_rate_tensor = None
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._global_step_on_worker = None

    def _create_slots(self, var_list) -> None:
        init = self._initial_gradient_squared_accumulator_value
        for v in var_list:
            self._get_or_make_slot(v, lambda v=v: slot_creator.filled(v.shape, v.dtype, 0.0),
                                   "gradient_accumulator", self._name)
            self._get_or_make_slot(v, lambda v=v: slot_creator.filled(v.shape, v.dtype, init),
                                   "gradient_squared_accumulator", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(call_if_callable(self._learning_rate),
                                                       name="learning_rate")
        self._global_step_on_worker = add(identity(self._global_step), 1)

    def _args(self, grad, var) -> tuple:
        with scopes.device(var.device):
            step = identity(self._global_step_on_worker)
        # TF casts each hyperparameter from its float32 tensor (0.3 -> float32 -> float64)
        hyper = [cast_to(convert_to_tensor(h), grad.dtype) for h in (
            self._learning_rate_tensor, self._l1_regularization_strength,
            self._l2_regularization_strength)]
        return (var.handle, self.get_slot(var, "gradient_accumulator").handle,
                self.get_slot(var, "gradient_squared_accumulator").handle), hyper, step

    def _resource_apply_dense(self, grad, var):
        slots, hyper, step = self._args(grad, var)
        return ops.resource_apply_adagrad_da(*slots, grad, *hyper, step,
                                             use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        slots, hyper, step = self._args(grad, var)
        return ops.resource_sparse_apply_adagrad_da(*slots, grad, indices, *hyper, step,
                                                    use_locking=self._use_locking)
