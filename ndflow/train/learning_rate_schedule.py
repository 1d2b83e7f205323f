"""Learning-rate schedules: callables `schedule(step) -> learning rate tensor`.

The classes are Keras's (`tf.keras.optimizers.schedules.*`, with `get_config` /
`from_config` and Keras 3's serialization dict) and also back TF1's
`tf.compat.v1.train.exponential_decay` & co. Formulas are Keras 3's, evaluated in the
dtype of the initial learning rate with the step cast to it.
"""

from __future__ import annotations

from ndflow.core import scopes
from ndflow.core.api_export import tf_export
from ndflow.ops import arithmetic, comparison, math
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast


@tf_export("keras.optimizers.schedules.LearningRateSchedule",
           "optimizers.schedules.LearningRateSchedule",
           v1=["keras.optimizers.schedules.LearningRateSchedule"])
class LearningRateSchedule:
    """Base class: subclasses implement `__call__(step)` and `get_config()`."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must "
                                  "override `__call__(self, step)`.")

    def get_config(self) -> dict:
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must "
                                  "override `get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _cast(x, dtype):
    t = convert_to_tensor(x)
    return t if t.dtype is dtype else cast(t, dtype)


class _Lr0Schedule(LearningRateSchedule):
    """A schedule of `initial_learning_rate`: `_schedule(lr0, step, dtype)` runs under the
    schedule's name scope with lr0 as a tensor and its dtype, which the formulas use."""

    _DEFAULT_NAME = None   # the name scope when `name` is empty; None: the class's name

    def _init_decay(self, initial_learning_rate, decay_steps, name) -> None:
        """Stores what the schedules over `decay_steps` (> 0) share."""
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: "
                             f"decay_steps={decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.name = name

    def _schedule(self, lr0, step, dtype):
        raise NotImplementedError

    def __call__(self, step):
        with scopes.name_scope(self.name or self._DEFAULT_NAME or type(self).__name__):
            lr0 = convert_to_tensor(self.initial_learning_rate, name="initial_learning_rate")
            return self._schedule(lr0, step, lr0.dtype)


class _RateDecay(_Lr0Schedule):
    """Decays of lr0 by `decay_rate` over p = step / decay_steps (floored if staircase)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase: bool,
                 name: str):
        self._init_decay(initial_learning_rate, decay_steps, name)
        self.decay_rate = decay_rate
        self.staircase = staircase

    def _decay(self, lr0, rate, p):
        raise NotImplementedError

    def _schedule(self, lr0, step, dtype):
        p = arithmetic.truediv(_cast(step, dtype), _cast(self.decay_steps, dtype))
        if self.staircase:
            p = math.floor(p)
        return self._decay(lr0, _cast(self.decay_rate, dtype), p)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


@tf_export("keras.optimizers.schedules.ExponentialDecay", "optimizers.schedules.ExponentialDecay",
           v1=["keras.optimizers.schedules.ExponentialDecay"])
class ExponentialDecay(_RateDecay):
    """initial_learning_rate * decay_rate ^ (step / decay_steps) (floored if staircase)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase: bool = False,
                 name: str = "ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decay(self, lr0, rate, p):
        return arithmetic.multiply(lr0, arithmetic.pow(rate, p))


@tf_export("keras.optimizers.schedules.PiecewiseConstantDecay",
           "optimizers.schedules.PiecewiseConstantDecay",
           v1=["keras.optimizers.schedules.PiecewiseConstantDecay"])
class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] for step <= boundaries[0], values[i] for boundaries[i-1] < step <=
    boundaries[i], values[-1] after the last boundary."""

    def __init__(self, boundaries, values, name: str = "PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of "
                             f"values. Received: boundaries={boundaries} of length "
                             f"{len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        with scopes.name_scope(self.name or "PiecewiseConstant"):
            x = convert_to_tensor(step)
            values = [convert_to_tensor(v) for v in self.values]
            for v in values[1:]:
                if v.dtype is not values[0].dtype:
                    raise ValueError(f"Values must have elements all with the same dtype "
                                     f"({values[0].dtype.name} vs {v.dtype.name}).")
            bounds = [_cast(b, x.dtype) for b in self.boundaries]
            out = values[-1]
            for b, v in zip(reversed(bounds), reversed(values[:-1])):
                out = arithmetic.where(comparison.less_equal(x, b), v, out)
            return out

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


@tf_export("keras.optimizers.schedules.InverseTimeDecay", "optimizers.schedules.InverseTimeDecay",
           v1=["keras.optimizers.schedules.InverseTimeDecay"])
class InverseTimeDecay(_RateDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps) (floored if staircase)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase: bool = False,
                 name: str = "InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def _decay(self, lr0, rate, p):
        denominator = arithmetic.add(_cast(1, lr0.dtype), arithmetic.multiply(rate, p))
        return arithmetic.truediv(lr0, denominator)


@tf_export("keras.optimizers.schedules.PolynomialDecay", "optimizers.schedules.PolynomialDecay",
           v1=["keras.optimizers.schedules.PolynomialDecay"])
class PolynomialDecay(_Lr0Schedule):
    """(lr0 - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end; with `cycle`,
    decay_steps grows to the next multiple of itself past the step instead."""

    _DEFAULT_NAME = "PolynomialDecay"

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle: bool = False,
        name: str = "PolynomialDecay",
    ):
        self._init_decay(initial_learning_rate, decay_steps, name)
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle

    def _schedule(self, lr0, step, dtype):
        end = _cast(self.end_learning_rate, dtype)
        steps = _cast(self.decay_steps, dtype)
        step = _cast(step, dtype)
        if self.cycle:  # step 0 keeps the first period
            periods = math.ceil(arithmetic.truediv(step, steps))
            steps = arithmetic.multiply(steps, arithmetic.maximum(periods, _cast(1, dtype)))
        else:
            step = arithmetic.minimum(step, steps)
        p = arithmetic.truediv(step, steps)
        decayed = arithmetic.pow(
            arithmetic.subtract(_cast(1, dtype), p), _cast(self.power, dtype)
        )
        return arithmetic.add(arithmetic.multiply(arithmetic.subtract(lr0, end), decayed), end)

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


SCHEDULES = {
    c.__name__: c
    for c in (ExponentialDecay, PiecewiseConstantDecay, InverseTimeDecay, PolynomialDecay)
}
