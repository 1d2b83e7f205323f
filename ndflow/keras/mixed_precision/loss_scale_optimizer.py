"""`tf.keras.mixed_precision.LossScaleOptimizer`: loss scaling for Keras optimizers.

The Keras 2 contract (keras/mixed_precision/loss_scale_optimizer.py, as the NVIDIA container's
TF 2 documents it) over ndflow's Keras optimizers:
`LossScaleOptimizer(inner_optimizer, dynamic=True, initial_scale=None,
dynamic_growth_steps=None)`. Dynamic scaling starts at 2**15, doubles after 2000 finite steps
and halves (never below 1) on a non-finite one — the rule of `DynamicLossScale` with
multiplier 2, whose `current_loss_scale`/`good_steps` variables hold the state.

`get_scaled_loss`/`get_unscaled_gradients` scale by hand (a warning at `apply_gradients` when
either was skipped); `minimize`, `compute_gradients` and `get_gradients` do both. On a step
with a non-finite gradient `apply_gradients` leaves the variables and slots untouched but
still increments `iterations` (unlike the TF1 wrapper's `global_step`): as Keras does, the step
is `smart_cond(should_apply, apply_fn, do_not_apply_fn)` (eagerly a Python `if`, in graphs an
`If` op whose then-branch runs the inner step and whose else-branch adds 1 to `iterations`).
"""

from __future__ import annotations

from ndflow.autodiff.gradients import gradients
from ndflow.core import logging
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor, is_symbolic_tensor
from ndflow.keras import optimizers
from ndflow.keras.optimizers.base_optimizer import Optimizer, recorded_loss
from ndflow.ops.apply import convert_to_tensor
from ndflow.runtime.control_flow import smart_cond
from ndflow.train import loss_scale as loss_scale_module
from ndflow.train import mixed_precision as graph_rewrite
from ndflow.train.init_scope import init_scope
from ndflow.train.optimizer import cast_to

_DEFAULT_INITIAL_SCALE = 2 ** 15
_DEFAULT_GROWTH_STEPS = 2000
_EXAMPLE = """
    with tf.GradientTape() as tape:
      loss = loss_fn()
      scaled_loss = opt.get_scaled_loss(loss)
    scaled_grads = tape.gradient(scaled_loss, vars)
    grads = opt.get_unscaled_gradients(scaled_grads)
    opt.apply_gradients([(grads, var)])"""
_DOC = "https://www.tensorflow.org/api_docs/python/tf/keras/mixed_precision/LossScaleOptimizer"


@tf_export("keras.mixed_precision.LossScaleOptimizer", "keras.optimizers.LossScaleOptimizer",
           "optimizers.LossScaleOptimizer",
           v1=["keras.mixed_precision.LossScaleOptimizer", "keras.optimizers.LossScaleOptimizer"])
class LossScaleOptimizer(Optimizer):
    """Wraps an optimizer for mixed-precision training: the loss is multiplied by a scale
    so small float16 gradients do not underflow, the gradients are divided by it again,
    and steps whose gradients are not finite are skipped. `compile` wraps the optimizer
    automatically under a "mixed_float16" policy.

    With `dynamic`, the scale halves at every non-finite step and doubles after
    `dynamic_growth_steps` finite ones.

    Args:
      inner_optimizer: the Keras optimizer to wrap.
      dynamic: whether the scale adapts (else it stays `initial_scale`).
      initial_scale: the starting scale (default 2**15 when dynamic; required otherwise).
      dynamic_growth_steps: finite steps before the scale doubles (default 2000).
      name: the optimizer's name.

    Raises:
      TypeError: `inner_optimizer` is not a Keras optimizer (or is a LossScaleOptimizer),
        or `dynamic` is not a bool.
      ValueError: an optimizer already wrapped, no `initial_scale` without `dynamic`, or
        `dynamic_growth_steps` without `dynamic`.
    """

    def __init__(self, inner_optimizer, dynamic: bool = True, initial_scale=None,
                 dynamic_growth_steps=None, name: str | None = None):
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError('"inner_optimizer" must be an instance of '
                            "`tf.keras.optimizers.Optimizer` or "
                            "`tf.keras.optimizers.experimental.Optimizer`, but got: "
                            f"{inner_optimizer}.")
        if not isinstance(dynamic, bool):
            raise TypeError('"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, '
                            f"but got: {dynamic!r}")
        if isinstance(inner_optimizer, LossScaleOptimizer):
            raise TypeError("LossScaleOptimizer cannot wrap another LossScaleOptimizer, but "
                            f"got: {inner_optimizer}")
        if getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False):
            raise ValueError('"inner_optimizer" is already wrapped by a LossScaleOptimizer. An '
                             "optimizer can only be wrapped by a single LossScaleOptimizer")
        if dynamic:
            initial_scale = _DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale
            if dynamic_growth_steps is None:
                dynamic_growth_steps = _DEFAULT_GROWTH_STEPS
            loss_scale = loss_scale_module.DynamicLossScale(initial_scale,
                                                            dynamic_growth_steps, 2.0)
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            loss_scale = float(initial_scale)
            if dynamic_growth_steps is not None:
                raise ValueError('"dynamic_growth_steps" must be None if "dynamic" is False, '
                                 f"but got: {dynamic_growth_steps}")
        self._optimizer = inner_optimizer
        self._optimizer._is_wrapped_by_loss_scale_optimizer = True
        self._loss_scale = loss_scale
        self.name = name if name is not None else inner_optimizer.name
        self._loss_has_been_scaled = False
        self._gradients_have_been_unscaled = False
        self._last_unscaling = None   # see get_unscaled_gradients
        self._scale_loss_called = False   # Keras 3's protocol in use: see scale_loss

    # -- properties ------------------------------------------------------------------------------
    @property
    def dynamic(self) -> bool:
        return isinstance(self._loss_scale, loss_scale_module.DynamicLossScale)

    @property
    def loss_scale(self) -> Tensor:
        """The current loss scale as a float32 scalar tensor."""
        return convert_to_tensor(self._loss_scale() if self.dynamic else self._loss_scale)

    @property
    def dynamic_counter(self):
        """Steps since the scale last changed (an int64 variable); None if not dynamic."""
        return self._loss_scale._num_good_steps if self.dynamic else None

    @property
    def initial_scale(self) -> float:
        return self._loss_scale.initial_loss_scale if self.dynamic else self._loss_scale

    @property
    def dynamic_growth_steps(self) -> int | None:
        return self._loss_scale.increment_period if self.dynamic else None

    @property
    def inner_optimizer(self) -> Optimizer:
        return self._optimizer

    @property
    def iterations(self):
        return self._optimizer.iterations

    @property
    def built(self) -> bool:
        return self._optimizer.built

    @built.setter
    def built(self, value: bool) -> None:
        self._optimizer.built = value

    @property
    def variables(self) -> list:
        own = self._loss_scale.weights() if self.dynamic else []
        return own + self._optimizer.variables

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        self._optimizer.learning_rate = value

    def build(self, variables_) -> None:
        self._optimizer.build(variables_)

    def finalize_variable_values(self, var_list) -> None:
        self._optimizer.finalize_variable_values(var_list)

    # -- scaling ---------------------------------------------------------------------------------
    def get_scaled_loss(self, loss):
        """`loss * loss_scale` (in the loss's dtype); a callable gives a callable."""
        self._loss_has_been_scaled = True
        if callable(loss) and not isinstance(loss, Tensor):
            def new_loss():
                value = loss()
                return value * cast_to(self.loss_scale, value.dtype)
            return new_loss
        loss = convert_to_tensor(loss)
        return loss * cast_to(self.loss_scale, loss.dtype)

    @property
    def dynamic_scale(self) -> Tensor:
        """Keras 3's name for the current scale."""
        return self.loss_scale

    def scale_loss(self, loss):
        """Keras 3's protocol: `loss * scale`, and the gradients of the scaled loss go to
        `apply_gradients`/`apply` as they are: the step unscales them (folded into the update
        where the inner optimizer can) after the finite check. (Keras 2's protocol, which
        this class also keeps, unscales with `get_unscaled_gradients` before applying.)"""
        self._scale_loss_called = True
        loss = convert_to_tensor(loss)
        return loss * cast_to(self.loss_scale, loss.dtype)

    def get_unscaled_gradients(self, grads) -> list:
        """Each gradient times `1 / loss_scale`; None passed through.

        In a graph the products are also remembered: when exactly they come back to
        `apply_gradients`, the step checks and applies the scaled gradients with the scale
        passed on to the inner optimizer (a momentum-SGD step folds it into its learning
        rate), so the unused products cost nothing."""
        self._gradients_have_been_unscaled = True
        reciprocal = 1.0 / self.loss_scale
        out, sources = [], {}
        for g in grads:
            if g is None:
                out.append(None)
                continue
            g = convert_to_tensor(g)
            unscaled = g * cast_to(reciprocal, g.dtype)
            if is_symbolic_tensor(unscaled):
                sources[id(unscaled)] = (unscaled, g)
            out.append(unscaled)
        self._last_unscaling = (sources, reciprocal) if sources else None
        return out

    def _scaled_sources(self, grads):
        """(the scaled gradients, the reciprocal scale) when every gradient is a product of
        the last `get_unscaled_gradients`; else (None, None)."""
        last, self._last_unscaling = self._last_unscaling, None
        if last is None:
            return None, None
        sources, reciprocal = last
        raw = []
        for g in grads:
            entry = sources.get(id(g))
            if entry is None or entry[0] is not g:
                return None, None
            raw.append(entry[1])
        return raw, reciprocal

    def compute_gradients(self, loss, var_list, tape=None) -> list:
        """(unscaled gradient, variable) pairs of the scaled `loss` (a callable, or a tensor
        recorded by `tape`)."""
        tape, loss, var_list = recorded_loss(loss, var_list, tape, self.get_scaled_loss)
        grads = self.get_unscaled_gradients(tape.gradient(loss, var_list))
        return list(zip(grads, var_list))

    def get_gradients(self, loss, params) -> list:
        """Graph-mode gradients (`tf.gradients`) of the scaled loss, unscaled."""
        grads = gradients(self.get_scaled_loss(loss), list(params))
        return self.get_unscaled_gradients(grads)

    def minimize(self, loss, var_list, tape=None):
        return self.apply_gradients(self.compute_gradients(loss, var_list, tape))

    # -- applying --------------------------------------------------------------------------------
    def apply(self, grads, trainable_variables=None) -> None:
        if trainable_variables is None:
            trainable_variables = self._optimizer._trainable_variables
        self.apply_gradients(zip(grads, trainable_variables))

    def apply_gradients(self, grads_and_vars, skip_gradients_aggregation: bool = False):
        """Updates the loss scale and applies the step unless a gradient is non-finite;
        `iterations` counts every call. Returns `iterations`."""
        keras3 = self._scale_loss_called and not self._gradients_have_been_unscaled
        self._scale_loss_called = False
        if not keras3:
            _maybe_warn_about_scaling(self._loss_has_been_scaled,
                                      self._gradients_have_been_unscaled)
        pairs = list(grads_and_vars)
        grads, variables_ = self._optimizer._filter_empty_gradients(
            [g for g, _ in pairs], [v for _, v in pairs])
        inner = self._optimizer
        if not inner.built:
            with init_scope():
                inner.build(variables_)
            inner.built = True
        # A scale s = 1/loss_scale <= 1 maps finite to finite, so checking the scaled
        # gradients decides as checking the unscaled ones would.
        scaled, reciprocal = self._scaled_sources(grads)
        if keras3:   # the gradients of scale_loss's product: still scaled
            scaled, reciprocal = grads, 1.0 / self.loss_scale
        if self.dynamic:
            _, should_apply = self._loss_scale.update(grads if scaled is None else scaled)
        else:
            should_apply = True
        iterations = inner._iterations

        def apply_fn():
            if scaled is None:
                inner.apply_gradients(list(zip(grads, variables_)))
            else:
                inner.apply(scaled, variables_, gradient_scale=reciprocal)

        def do_not_apply_fn():
            iterations.assign_add(1, read_value=False)

        smart_cond(should_apply, apply_fn, do_not_apply_fn)
        return iterations

    # -- config ----------------------------------------------------------------------------------
    def get_config(self) -> dict:
        config = {"name": self.name, "inner_optimizer": optimizers.serialize(self._optimizer),
                  "initial_scale": self.initial_scale,
                  "dynamic_growth_steps": self.dynamic_growth_steps}   # Keras 3's keys
        # plus Keras 2's `dynamic` (Keras 3's __init__ accepts dynamic=True, its only scaling)
        config["dynamic"] = self.dynamic
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None) -> LossScaleOptimizer:
        config = dict(config)
        inner = optimizers.deserialize(config.pop("inner_optimizer"), custom_objects)
        return cls(inner, **config)

    def __repr__(self):
        return f"<LossScaleOptimizer name={self.name} inner={self._optimizer!r}>"


def _maybe_warn_about_scaling(loss_has_been_scaled: bool, gradients_have_been_unscaled: bool):
    if loss_has_been_scaled and gradients_have_been_unscaled:
        return
    if not loss_has_been_scaled and not gradients_have_been_unscaled:
        logging.warning(
            "You forgot to call LossScaleOptimizer.get_scaled_loss() and "
            "LossScaleOptimizer.get_unscaled_gradients() before calling "
            "LossScaleOptimizer.apply_gradients(). This will likely result in worse model "
            "quality, so please call them in the correct places! For "
            f"example:{_EXAMPLE}\nFor more information, see {_DOC}")
    elif not loss_has_been_scaled:
        logging.warning(
            "You forgot to call LossScaleOptimizer.get_scaled_loss() before calling "
            "LossScaleOptimizer.apply_gradients() (you did call get_unscaled_gradients() "
            "however). This will likely result in worse model quality, so please call "
            f"get_scaled_loss() in the correct place! For example:{_EXAMPLE}\nFor more "
            f"information, see {_DOC}")
    else:
        logging.warning(
            "You forgot to call LossScaleOptimizer.get_unscaled_gradients() before calling "
            "LossScaleOptimizer.apply_gradients() (you did call get_scaled_loss() however). "
            "This will likely result in worse model quality, so please call "
            f"get_unscaled_gradients() in the correct place! For example:{_EXAMPLE}\nFor more "
            f"information, see {_DOC}")


def _from_v1_loss_scale(optimizer, loss_scale) -> LossScaleOptimizer:
    """How `enable_mixed_precision_graph_rewrite` wraps a Keras optimizer (Keras's
    `_create_loss_scale_optimizer_from_v1_loss_scale`)."""
    if isinstance(loss_scale, (int, float)):
        return LossScaleOptimizer(optimizer, dynamic=False, initial_scale=loss_scale)
    if isinstance(loss_scale, loss_scale_module.FixedLossScale):
        return LossScaleOptimizer(optimizer, dynamic=False,
                                  initial_scale=loss_scale._loss_scale_value)
    if isinstance(loss_scale, str) and loss_scale == "dynamic":
        return LossScaleOptimizer(optimizer)
    if isinstance(loss_scale, loss_scale_module.DynamicLossScale):
        if loss_scale.multiplier != 2:
            raise ValueError('When passing a DynamicLossScale to "loss_scale", '
                             f"DynamicLossScale.multiplier must be 2. Got: {loss_scale}")
        return LossScaleOptimizer(optimizer, initial_scale=loss_scale.initial_loss_scale,
                                  dynamic_growth_steps=loss_scale.increment_period)
    if isinstance(loss_scale, loss_scale_module.LossScale):
        raise TypeError("Passing a LossScale that is not a FixedLossScale or a "
                        f"DynamicLossScale is not supported. Got: {loss_scale}")
    raise ValueError('Invalid value passed to loss_scale. loss_scale must be the string '
                     '"dynamic" (recommended), an int, a float, a FixedLossScale, or a '
                     f"DynamicLossScale. Got value: {loss_scale}")


graph_rewrite.register_loss_scale_wrapper(Optimizer, _from_v1_loss_scale, LossScaleOptimizer)

__all__ = ["LossScaleOptimizer"]
