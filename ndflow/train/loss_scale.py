"""TF1 loss scales: `tf.compat.v1.mixed_precision.{LossScale, FixedLossScale, DynamicLossScale}`.

Loss scaling multiplies the loss by a factor before differentiation and divides the gradients
by it afterwards, so small float16 gradients do not underflow. `FixedLossScale(v)` always
returns `v`; `DynamicLossScale(initial_loss_scale=2**15, increment_period=2000, multiplier=2.)`
keeps TensorFlow's state — non-trainable resource variables `current_loss_scale` (float32)
and `good_steps` (int64) — and TensorFlow's update rule (training/experimental/loss_scale.py):

- `None` gradients are ignored; the step is good when every gradient is finite;
- good step: when `good_steps + 1 >= increment_period` the scale is multiplied by
  `multiplier` (assigned only if the product is finite, so it saturates at float32's max) and
  `good_steps` resets to 0, else `good_steps += 1`;
- bad step: `good_steps = 0` and `scale = max(scale / multiplier, 1)`.

TensorFlow writes that rule with `tf.cond`. ndflow has no conditional ops, so both branches
are computed and the new values chosen with `SelectV2` on scalars — the same values, one
straight-line graph, identical eagerly, in `tf.function` and in Session graphs.
"""

from __future__ import annotations

import abc

import numpy as np

from ndflow.core import context, dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops import arithmetic, comparison, reduction, variables
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import group, no_op, stack
from ndflow.train.init_scope import init_scope

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _graph_key():
    """None for eager state, else the outermost graph (variables are made in init_scope)."""
    with init_scope():
        return None if context.executing_eagerly() else context.get_default_graph()


def flatten(structure) -> list:
    """`tf.nest.flatten` for the gradient structures optimizers pass (lists, tuples, dicts)."""
    if isinstance(structure, (list, tuple)):
        return [x for item in structure for x in flatten(item)]
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in flatten(structure[k])]
    return [structure]


def raw_values(grad):
    """The dense values of a gradient (`.values` of IndexedSlices-like gradients)."""
    return grad.values if hasattr(grad, "indices") and hasattr(grad, "values") else grad


def all_finite(grads) -> Tensor:
    """A scalar bool tensor: every non-None gradient has only finite values."""
    per_grad = [comparison.all_finite(raw_values(g)) for g in grads if g is not None]
    if not per_grad:
        return convert_to_tensor(True)
    if len(per_grad) == 1:
        return per_grad[0]
    return reduction.reduce_all(stack(per_grad))


@tf_export("train.experimental.LossScale", v1=["mixed_precision.LossScale",
               "mixed_precision.experimental.LossScale", "train.experimental.LossScale"])
class LossScale(metaclass=abc.ABCMeta):
    """Base class of the TF1 loss scales (`tf.compat.v1.mixed_precision.LossScale`).

    Calling an instance returns the current loss scale as a scalar float32 tensor; `update`
    adjusts it from the (unscaled) gradients of a step.
    """

    def __init__(self):
        self._weights: dict = {}

    @abc.abstractmethod
    def __call__(self) -> Tensor:
        """The current loss scale as a scalar float32 tensor."""

    @abc.abstractmethod
    def update(self, grads) -> tuple:
        """`(update_op, should_apply_gradients)`: update_op is None eagerly, an op in graphs;
        should_apply_gradients a Python bool or a scalar bool tensor."""

    def _add_weight(self, name: str, initial_value, dtype):
        """A non-trainable resource variable of this loss scale, one per graph (or eager)."""
        key = (name, _graph_key())
        if self._weights.get(key) is not None:
            raise RuntimeError(f"Duplicate variables detected. {key}")
        with init_scope():
            variable = variables.Variable(initial_value, name=name, dtype=dtype,
                                          trainable=False)
        self._weights[key] = variable
        return variable

    def weights(self) -> list:
        """This loss scale's variables in the current graph (or eager), sorted by name."""
        key = _graph_key()
        return [v for (name, g), v in sorted(self._weights.items(), key=lambda i: i[0][0])
                if g is key]

    @abc.abstractmethod
    def get_config(self) -> dict:
        """The constructor arguments."""

    @classmethod
    def from_config(cls, config: dict) -> LossScale:
        return cls(**config)


@tf_export("train.experimental.FixedLossScale", v1=["mixed_precision.FixedLossScale",
               "mixed_precision.experimental.FixedLossScale", "train.experimental.FixedLossScale"])
class FixedLossScale(LossScale):
    """A loss scale that never changes (`tf.compat.v1.mixed_precision.FixedLossScale`)."""

    def __init__(self, loss_scale_value: float):
        super().__init__()
        if not isinstance(loss_scale_value, (int, float)):  # bools pass, as in TF
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self) -> Tensor:
        return convert_to_tensor(self._loss_scale_value)

    def update(self, grads) -> tuple:
        del grads
        return no_op(), True

    def __repr__(self):
        return f"FixedLossScale({self._loss_scale_value})"

    def get_config(self) -> dict:
        return {"loss_scale_value": self._loss_scale_value}


@tf_export("train.experimental.DynamicLossScale", v1=["mixed_precision.DynamicLossScale",
               "mixed_precision.experimental.DynamicLossScale",
               "train.experimental.DynamicLossScale"])
class DynamicLossScale(LossScale):
    """A loss scale that halves on overflow and grows after `increment_period` good steps."""

    def __init__(self, initial_loss_scale: float = 2 ** 15, increment_period: int = 2000,
                 multiplier: float = 2.):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight("current_loss_scale",
                                                    self._initial_loss_scale, dtypes.float32)
        self._num_good_steps = self._add_weight("good_steps", 0, dtypes.int64)

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self) -> Tensor:
        return convert_to_tensor(self._current_loss_scale)

    def update(self, grads) -> tuple:
        """Updates the scale from `grads` (a structure of unscaled gradients, Nones ignored);
        returns `(update_op, is_finite)`."""
        is_finite = all_finite(flatten(grads))
        scale = self._current_loss_scale.value()
        good_steps = self._num_good_steps.value()
        one = convert_to_tensor(1, dtype=dtypes.int64)
        period = convert_to_tensor(self._increment_period, dtype=dtypes.int64)
        multiplier = convert_to_tensor(self._multiplier, dtype=dtypes.float32)
        # Finite gradients: grow after `increment_period` good steps, if the result is finite.
        grow = comparison.greater_equal(good_steps + one, period)
        grown = scale * multiplier
        finite_scale = arithmetic.where(
            comparison.logical_and(grow, comparison.is_finite(grown)), grown, scale)
        zero = convert_to_tensor(0, dtype=dtypes.int64)
        finite_steps = arithmetic.where(grow, zero, good_steps + one)
        # Non-finite gradients: shrink, never below 1, and restart counting.
        shrunk = arithmetic.maximum(scale / multiplier, convert_to_tensor(1.0))
        new_scale = arithmetic.where(is_finite, finite_scale, shrunk)
        new_steps = arithmetic.where(is_finite, finite_steps, zero)
        assign_steps = self._num_good_steps.assign(new_steps, read_value=False)
        assign_scale = self._current_loss_scale.assign(new_scale, read_value=False)
        if context.executing_eagerly():
            return None, is_finite
        return group(assign_steps, assign_scale), is_finite

    def __repr__(self):
        if context.executing_eagerly():
            return (f"DynamicLossScale(current_loss_scale="
                    f"{self._current_loss_scale.numpy()}, num_good_steps="
                    f"{self._num_good_steps.numpy()}, initial_loss_scale="
                    f"{self._initial_loss_scale}, increment_period={self._increment_period}, "
                    f"multiplier={self._multiplier})")
        return (f"DynamicLossScale(initial_loss_scale={self._initial_loss_scale}, "
                f"increment_period={self._increment_period}, multiplier={self._multiplier})")

    def get_config(self) -> dict:
        return {"initial_loss_scale": self._initial_loss_scale,
                "increment_period": self._increment_period,
                "multiplier": self._multiplier}


def get(identifier) -> LossScale | None:
    """A loss scale from a number (fixed), "dynamic", a LossScale, or None."""
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if isinstance(identifier, str) and identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale):
        return identifier
    if identifier is None:
        return None
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale", "get"]
