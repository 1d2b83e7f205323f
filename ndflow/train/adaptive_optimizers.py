"""TF1's Adagrad, Adadelta, FTRL and proximal optimizers (`tf.compat.v1.train.*Optimizer`)
on the fused ops of ndflow/ops/training_adaptive.py, with TensorFlow's slot names and
argument checks; sparse gradients (embeddings) update only their rows."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.ops import training_adaptive as ops
from ndflow.ops.apply import convert_to_tensor
from ndflow.train import slot_creator
from ndflow.train.optimizer import Optimizer, call_if_callable, cast_to


def _positive_accumulator(value):
    """Adagrad's initial accumulator value, which must be positive (a ValueError otherwise)."""
    if value <= 0.0:
        raise ValueError(f"initial_accumulator_value must be positive: {value}")
    return value


class _HyperOptimizer(Optimizer):
    """An optimizer whose hyperparameters (`_HYPER` attribute names) become tensors in
    `_prepare` and are cast to each gradient's dtype."""

    _HYPER: tuple = ()

    def _prepare(self) -> None:
        self._tensors = {h: convert_to_tensor(call_if_callable(getattr(self, f"_{h}")), name=h)
                         for h in self._HYPER}

    def _hyper(self, grad, *names) -> list:
        return [cast_to(self._tensors[n], grad.dtype) for n in names]

    def _accumulator(self, v, name: str, value: float):
        self._get_or_make_slot(v, lambda v=v: slot_creator.filled(v.shape, v.dtype, value),
                               name, self._accum_op_name)

    _accum_op_name = property(lambda self: self._name)


@tf_export(v1=["train.AdagradOptimizer"])
class AdagradOptimizer(_HyperOptimizer):
    """accum += g^2; var -= lr * g / sqrt(accum) (slot "accumulator")."""

    _HYPER = ("learning_rate",)

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = _positive_accumulator(initial_accumulator_value)

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._accumulator(v, "accumulator", self._initial_accumulator_value)

    def _resource_apply_dense(self, grad, var):
        return ops.resource_apply_adagrad(var.handle, self.get_slot(var, "accumulator").handle,
                                          *self._hyper(grad, "learning_rate"), grad,
                                          use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return ops.resource_sparse_apply_adagrad(
            var.handle, self.get_slot(var, "accumulator").handle,
            *self._hyper(grad, "learning_rate"), grad, indices, use_locking=self._use_locking)


@tf_export(v1=["train.AdadeltaOptimizer"])
class AdadeltaOptimizer(_HyperOptimizer):
    """Adadelta (slots "accum" and "accum_update")."""

    _HYPER = ("lr", "rho", "epsilon")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _slots_of(self, var) -> list:
        return [self.get_slot(var, n).handle for n in ("accum", "accum_update")]

    def _resource_apply_dense(self, grad, var):
        return ops.resource_apply_adadelta(var.handle, *self._slots_of(var),
                                           *self._hyper(grad, *self._HYPER), grad,
                                           use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return ops.resource_sparse_apply_adadelta(var.handle, *self._slots_of(var),
                                                  *self._hyper(grad, *self._HYPER), grad,
                                                  indices, use_locking=self._use_locking)


@tf_export(v1=["train.ProximalGradientDescentOptimizer"])
class ProximalGradientDescentOptimizer(_HyperOptimizer):
    """Gradient descent followed by the L1/L2 proximal step (no slots)."""

    _HYPER = ("learning_rate", "l1", "l2")

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _resource_apply_dense(self, grad, var):
        return ops.resource_apply_proximal_gradient_descent(
            var.handle, *self._hyper(grad, *self._HYPER), grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return ops.resource_sparse_apply_proximal_gradient_descent(
            var.handle, *self._hyper(grad, *self._HYPER), grad, indices,
            use_locking=self._use_locking)


@tf_export(v1=["train.ProximalAdagradOptimizer"])
class ProximalAdagradOptimizer(_HyperOptimizer):
    """Adagrad's step size with the L1/L2 proximal step (slot "accumulator")."""

    _HYPER = ("learning_rate", "l1", "l2")

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = _positive_accumulator(initial_accumulator_value)
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._accumulator(v, "accumulator", self._initial_accumulator_value)

    def _resource_apply_dense(self, grad, var):
        return ops.resource_apply_proximal_adagrad(
            var.handle, self.get_slot(var, "accumulator").handle,
            *self._hyper(grad, *self._HYPER), grad, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return ops.resource_sparse_apply_proximal_adagrad(
            var.handle, self.get_slot(var, "accumulator").handle,
            *self._hyper(grad, *self._HYPER), grad, indices, use_locking=self._use_locking)


@tf_export(v1=["train.FtrlOptimizer"])
class FtrlOptimizer(_HyperOptimizer):
    """FTRL-Proximal (slots "accum", "linear"); `l2_shrinkage_regularization_strength` uses
    FtrlV2, `beta` adds beta / (2 lr) to the L2 strength, as TensorFlow's."""

    _HYPER = ("learning_rate", "l1", "adjusted_l2", "l2_shrinkage", "learning_rate_power")

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None):
        for what, value, sign in (
                ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
                ("learning_rate_power", learning_rate_power, "negative or zero"),
                ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
                ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 "positive or zero")):
            if (value > 0.0) if sign.startswith("negative") else (value < 0.0):
                raise ValueError(f"{what} {value:f} needs to be {sign}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _prepare(self) -> None:
        lr = call_if_callable(self._learning_rate)
        self._adjusted_l2 = self._l2 + self._beta / (2.0 * lr) if self._beta else self._l2
        super()._prepare()

    def _create_slots(self, var_list) -> None:
        for v in var_list:
            self._get_or_make_slot(
                v, lambda v=v: slot_creator.filled(v.shape, v.dtype,
                                                   self._initial_accumulator_value),
                "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _args(self, grad, var):
        lr, l1, l2, shrink, power = self._hyper(grad, *self._HYPER)
        slots = [self.get_slot(var, n).handle for n in ("accum", "linear")]
        return slots, (lr, l1, l2, power), (shrink if self._l2_shrinkage > 0 else None)

    def _resource_apply_dense(self, grad, var):
        slots, (lr, l1, l2, power), shrink = self._args(grad, var)
        return ops.resource_apply_ftrl(var.handle, *slots, grad, lr, l1, l2, power,
                                       l2_shrinkage=shrink, use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        slots, (lr, l1, l2, power), shrink = self._args(grad, var)
        return ops.resource_sparse_apply_ftrl(var.handle, *slots, grad, indices, lr, l1, l2,
                                              power, l2_shrinkage=shrink,
                                              use_locking=self._use_locking)
