"""`tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer`: loss scaling for TF1
optimizers (TF's training/experimental/loss_scale_optimizer.py).

`compute_gradients` multiplies the loss by the loss scale (cast to the loss's dtype) and the
gradients by its reciprocal. `apply_gradients` with a fixed scale delegates to the wrapped
optimizer; with a dynamic scale it updates the scale from the gradients and applies the
step — including the `global_step` increment — only when all of them are finite, as TF does:
`group(smart_cond(should_apply, apply_fn, no_op), update_op, name=name)` (eagerly a Python
`if`, in graphs an `If` op whose taken branch runs the step). The wrapped step is named
`<name>-wrapped`.
"""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.ops.array_core import group, no_op
from ndflow.runtime.control_flow import smart_cond
from ndflow.train import loss_scale as loss_scale_module
from ndflow.train.optimizer import Optimizer, scale_loss, unscale_gradients


@tf_export(v1=["mixed_precision.MixedPrecisionLossScaleOptimizer",
               "train.experimental.MixedPrecisionLossScaleOptimizer"])
class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps a `tf.compat.v1.train.Optimizer` and applies loss scaling to it."""

    _AUTO_LOSS_SCALING = False   # the wrapper's own scale replaces NVIDIA's automatic one

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        self._optimizer = opt
        super().__init__(opt._use_locking, opt.get_name())
        self._loss_scale = loss_scale_module.get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def _doing_dynamic_loss_scaling(self) -> bool:
        return isinstance(self._loss_scale, loss_scale_module.DynamicLossScale)

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops: bool = False,
                          grad_loss=None) -> list:
        """The wrapped optimizer's gradients of `loss * scale`, each divided by the scale."""
        loss = scale_loss(loss, self._loss_scale())
        pairs = self._optimizer.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        grads = unscale_gradients([g for g, _ in pairs], self._loss_scale())
        return list(zip(grads, [v for _, v in pairs]))

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None):
        """Applies the step unless a gradient is non-finite (dynamic scale); on a skipped
        step neither the variables nor `global_step` change."""
        if not self._doing_dynamic_loss_scaling():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        name = name if name is not None else self.get_name()
        grads_and_vars = tuple(grads_and_vars)
        update_op, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])
        step = smart_cond(
            should_apply,
            lambda: self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                    name + "-wrapped"),
            no_op)
        if context.executing_eagerly():
            return None
        return group(step, update_op, name=name)

    def _resource_apply_dense(self, grad, handle):
        raise RuntimeError("This function should never be called")

    def variables(self) -> list:
        """The wrapped optimizer's variables and the loss scale's."""
        return self._optimizer.variables() + self._loss_scale.weights()


__all__ = ["MixedPrecisionLossScaleOptimizer"]
