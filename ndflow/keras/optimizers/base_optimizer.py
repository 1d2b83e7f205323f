"""`tf.keras.optimizers.Optimizer`: the Keras 3 optimizer base class on ndflow variables.

State is Keras variables (`KerasVariable`, as Keras 3's `backend.Variable`): `iterations`
(int64 "iteration", +1 per apply), `learning_rate` (float32, unless a schedule or callable
is given) and per-variable slots named `<optimizer>/<variable>_<slot>`, created lazily on
the first `apply_gradients` in `init_scope` — so inside a `tf.function` they are eager
variables the function captures; made through the variable creators, as Keras' are by
`tf.Variable`. Subclasses implement `build` and `update_step`; the updates use TF's fused
training ops where one computes exactly Keras's formula.
"""

from __future__ import annotations

import functools
import inspect
import re
import warnings

from ndflow.autodiff.tape import GradientTape
from ndflow.checkpoint.restore import restore_deferred
from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.distribute import distribute_lib
from ndflow.distribute.values import is_distributed
from ndflow.keras import keras_variable
from ndflow.keras.optimizers import schedule_serialization
from ndflow.ops import arithmetic, array_fill, comparison, math, reduction
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.cast import cast as cast_op
from ndflow.ops.indexed_slices import IndexedSlices
from ndflow.ops.variable_creators import create_through, variable_creator_stack
from ndflow.runtime.control_flow import smart_cond
from ndflow.train import learning_rate_schedule as lrs
from ndflow.train import slot_creator
from ndflow.train.init_scope import init_scope
from ndflow.train.optimizer import is_variable

_name_counts: dict = {}


def to_snake_case(name: str) -> str:
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(class_name: str) -> str:
    """Keras's default object names: "adam", "adam_1", ... (per process)."""
    base = to_snake_case(class_name)
    n = _name_counts.get(base, 0)
    _name_counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _scaled(g, factor):
    if isinstance(g, IndexedSlices):
        return IndexedSlices(g.values * factor, g.indices, g.dense_shape)
    return g * factor


def _as_dtype(g, dtype):
    if g.dtype is dtype:
        return g
    if isinstance(g, IndexedSlices):
        return IndexedSlices(cast_op(g.values, dtype), g.indices, g.dense_shape)
    return cast_op(g, dtype)


def cast(x, dtype):
    """Keras's `ops.cast` on TF: a Python float becomes a float32 tensor, then is cast (so
    `cast(0.9, float64)` is float32's 0.9)."""
    t = convert_to_tensor(x)
    return t if t.dtype is dtype else cast_op(t, dtype)


def scalar(x, dtype):
    """A Python number used as an operand of a `dtype` tensor: converted exactly to `dtype`."""
    return convert_to_tensor(x, dtype=dtype) if isinstance(x, (int, float)) else cast(x, dtype)


def recorded_loss(loss, var_list, tape, scale=None):
    """(tape, loss, variables) for Keras 2's minimize/compute_gradients: `loss` a callable (run
    under a new tape, which watches `var_list`) or a tensor recorded by `tape`; `scale` (the
    loss-scale optimizer's) maps the loss under the tape; `var_list` a list or a callable."""
    if not callable(loss) and tape is None:
        raise ValueError("`tape` is required when a `Tensor` loss is passed. Received: "
                         f"loss={loss}, tape={tape}.")
    tape = tape if tape is not None else GradientTape()
    if callable(loss) and not isinstance(loss, Tensor):
        with tape:
            if not callable(var_list):
                tape.watch(var_list)
            loss = (loss if scale is None else scale(loss))()
    elif scale is not None:
        with tape:
            loss = scale(loss)
    return tape, loss, list(var_list() if callable(var_list) else var_list)


def _restoring_build(build):
    """`build` that then restores the slots a checkpoint restore was waiting for, however
    the optimizer gets built (its first apply, a wrapper's build, the user)."""
    @functools.wraps(build)
    def restoring(self, *args, **kwargs):
        out = build(self, *args, **kwargs)
        restore_deferred(self)
        return out
    return restoring


@tf_export("keras.Optimizer", "keras.optimizers.Optimizer", "optimizers.Optimizer",
           v1=["keras.Optimizer", "keras.optimizers.Optimizer"])
class Optimizer:
    """Keras 3 optimizer base: apply/apply_gradients/minimize, clipping, weight decay."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _restoring_build(cls.__dict__["build"])

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema: bool = False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name: str | None = None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.",
                          stacklevel=2)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if gradient_accumulation_steps and not gradient_accumulation_steps >= 2:
            raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. Received: "
                             f"gradient_accumulation_steps={gradient_accumulation_steps}")
        if use_ema:
            if ema_momentum > 1 or ema_momentum < 0:
                raise ValueError("`ema_momentum` must be in the range [0, 1]. Received: "
                                 f"ema_momentum={ema_momentum}")
            if ema_overwrite_frequency and (not isinstance(ema_overwrite_frequency, int)
                                            or ema_overwrite_frequency < 1):
                raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. "
                                 f"Received: ema_overwrite_frequency={ema_overwrite_frequency}")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                             f"set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        self.name = name if name is not None else auto_name(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = use_ema
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.built = False
        self._variables: list = []
        self._trainable_variables: list = []
        self._index: dict = {}
        self._step_cache: dict = {}       # per-apply values shared by variables (Adam)
        self._iterations = self.add_variable([], "zeros", dtypes.int64, name="iteration")
        if isinstance(learning_rate, lrs.LearningRateSchedule) or callable(learning_rate):
            self._learning_rate = learning_rate
        elif isinstance(learning_rate, float):
            self._learning_rate = self.add_variable([], learning_rate, dtypes.float32,
                                                    name="learning_rate")
        else:
            raise ValueError("Argument `learning_rate` should be float, or an instance of "
                             "LearningRateSchedule, or a callable (that takes in the current "
                             "iteration value and returns the corresponding learning rate "
                             f"value). Received instead: learning_rate={learning_rate}")

    # -- state -------------------------------------------------------------------------------
    @property
    def iterations(self):
        """Applied steps: with gradient accumulation, the updates (calls // steps)."""
        if self.gradient_accumulation_steps:
            return arithmetic.floor_div(self._iterations, self.gradient_accumulation_steps)
        return self._iterations

    @property
    def variables(self) -> list:
        return list(self._variables)

    def add_variable(self, shape, initializer="zeros", dtype=None, name: str | None = None):
        """A non-trainable optimizer variable (`initializer`: "zeros", "ones" or a value)."""
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
        fill = {"zeros": 0.0, "ones": 1.0}.get(initializer, initializer)
        with init_scope():
            value = slot_creator.filled(shape, dtype, fill)
            # named by its Keras path ("adam/iteration"), not under TF name scopes
            saved, context.state().name_scope = context.state().name_scope, ""
            try:
                # through the variable creators, as Keras' variables are made by tf.Variable:
                # a strategy's, and tf.function's rule that a first trace creating
                # variables is traced again
                var = create_through(variable_creator_stack(), keras_variable.KerasVariable,
                                     {"initial_value": value, "name": f"{self.name}/{name}",
                                      "trainable": False, "dtype": dtype})
            finally:
                context.state().name_scope = saved
        self._variables.append(var)
        return var

    def add_variable_from_reference(self, reference_variable, name: str | None = None,
                                    initializer="zeros"):
        """A slot shaped like `reference_variable`, named `<reference>_<name>` (Keras)."""
        name = name or "var"
        path = getattr(reference_variable, "path", None)
        ref = path.replace("/", "_") if path is not None else \
            str(reference_variable.name).replace("/", "_").replace(":", "_")
        return self.add_variable(reference_variable.shape, initializer,
                                 reference_variable.dtype, name=f"{ref}_{name}")

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """One slot per variable for each of `name` (a string or list), interleaved."""
        names = [name] if isinstance(name, str) else list(name)
        out = tuple([] for _ in names)
        for v in trainable_variables:
            for i, n in enumerate(names):
                out[i].append(self.add_variable_from_reference(v, n, initializer))
        return out[0] if isinstance(name, str) else out

    def build(self, variables_) -> None:
        if self.use_ema:
            self._model_variables_moving_average = self.add_optimizer_variables(variables_,
                                                                                "average")
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = self.add_optimizer_variables(variables_,
                                                                       "gradient_accumulator")
        for i, v in enumerate(variables_):
            self._index[id(v)] = i
        self._trainable_variables = list(variables_)
        self.built = True

    def _get_variable_index(self, variable) -> int:
        return self._index[id(variable)]

    # -- learning rate ------------------------------------------------------------------------
    @property
    def learning_rate(self):
        lr = self._learning_rate
        if isinstance(lr, lrs.LearningRateSchedule):
            return lr(self._iterations)
        if is_variable(lr):
            return lr
        return lr() if callable(lr) else lr

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        old = self._learning_rate
        if isinstance(value, lrs.LearningRateSchedule) or callable(value):
            self._learning_rate = value
            if is_variable(old):
                self._variables = [v for v in self._variables if v is not old]
        elif isinstance(old, lrs.LearningRateSchedule):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object "
                            "as its `learning_rate` constructor argument, hence its learning "
                            "rate is not settable. If you need the learning rate to be "
                            "settable, you should instantiate the optimizer with a float "
                            "`learning_rate` argument.")
        else:
            old.assign(value)

    # -- applying ------------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars):
        """Applies (gradient, variable) pairs; returns `iterations`."""
        pairs = list(grads_and_vars)
        grads = [g for g, _ in pairs]
        self.apply(grads, [v for _, v in pairs])
        return self._iterations

    def apply(self, grads, trainable_variables=None, gradient_scale=None) -> None:
        """`gradient_scale` (a scalar tensor, for wrappers such as the loss-scale optimizer):
        the step uses `grads * gradient_scale`."""
        grads = list(grads)
        if not grads:
            return
        if distribute_lib.in_multi_replica_context():
            # in a replica of a tf.distribute strategy: gradients summed over the replicas
            variables_ = self._trainable_variables if trainable_variables is None \
                else list(trainable_variables)
            distribute_lib.apply_across_replicas(
                lambda pairs, i: self._apply_copy([g for g, _ in pairs],
                                                  [v for _, v in pairs], i, gradient_scale),
                zip(grads, variables_))
            return
        self._apply_copy(grads, trainable_variables, 0, gradient_scale)

    # Whether update_step is linear in the gradient (plain and momentum SGD): a gradient scale
    # then rides on the learning rate instead of costing a pass over every gradient. With a
    # power-of-two scale (dynamic loss scaling's) both orders round identically.
    linear_in_gradient = False

    def _apply_copy(self, grads, trainable_variables, copy_index: int,
                    gradient_scale=None) -> None:
        """Applies the gradients to copy `copy_index` of (mirrored) variables."""
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must "
                                 "already be built on a list of variables. Call "
                                 "`optimizer.build(trainable_variables)` first. ")
            if len(grads) != len(self._index):
                raise ValueError("When passing `grads` as a list of gradient tensors, the "
                                 "gradients must match `optimizer.variables` one-to-on. "
                                 f"Received a list of {len(grads)} gradients, but the "
                                 f"optimizer is tracking {len(self._trainable_variables)} "
                                 "trainable variables.")
            trainable_variables = self._trainable_variables
        else:
            trainable_variables = list(trainable_variables)
            for v in trainable_variables:
                if not is_variable(v):
                    raise TypeError(f"Expected a tf.Variable to optimize, got {v!r}.")
            if not self.built:
                with init_scope():
                    self.build(trainable_variables)
                self.built = True
                restore_deferred(self)  # slots a checkpoint restore was waiting for
            for v in trainable_variables:
                if id(v) not in self._index:
                    raise ValueError(f"Unknown variable: {v}. This optimizer can only be called "
                                     "for the variables it was originally built with. When "
                                     "working with a new set of variables, you should recreate"
                                     " a new optimizer instance.")
        with scopes.name_scope(self.name):
            grads, trainable_variables = self._filter_empty_gradients(grads,
                                                                      trainable_variables)
            clipping = any(c and c > 0 for c in (self.clipnorm, self.global_clipnorm,
                                                 self.clipvalue))
            grads = [g if isinstance(g, IndexedSlices) and self.handles_indexed_slices and
                     not clipping else convert_to_tensor(g) for g in grads]
            if self.loss_scale_factor is not None:
                grads = [_scaled(g, 1 / self.loss_scale_factor) for g in grads]
            # (accumulated gradients of several steps may carry different scales)
            fold = gradient_scale is not None and self.linear_in_gradient and not clipping \
                and not self.gradient_accumulation_steps
            if gradient_scale is not None and not fold:
                grads = [_scaled(g, cast(gradient_scale, g.dtype)) for g in grads]
            lr = self.learning_rate
            if fold:
                lr = cast(lr, dtypes.float32) * cast(gradient_scale, dtypes.float32)
            grads = [_as_dtype(g, v.dtype) for g, v in zip(grads, trainable_variables)]
            if self.gradient_accumulation_steps:
                self._accumulate_or_update(grads, trainable_variables, lr)
            else:
                self._update(grads, trainable_variables, lr)
            if self.use_ema:
                self._update_moving_averages()
            for v in trainable_variables:
                constraint = getattr(v, "constraint", None)
                if constraint is not None:
                    v.assign(constraint(v.read_value()))
        if copy_index == 0 or is_distributed(self._iterations):
            self._iterations.assign_add(1)

    def _update(self, grads, variables_, lr) -> None:
        """Clipping, weight decay and each variable's update_step."""
        grads = self._clip_gradients(grads)
        self._apply_weight_decay(variables_)
        self._step_cache = {}
        for g, v in zip(grads, variables_):
            self.update_step(g, v, lr)

    def _accumulate_or_update(self, grads, variables_, lr) -> None:
        """Keras' gradient accumulation: every `gradient_accumulation_steps`-th call updates
        with the mean of the accumulated gradients and clears them; the others add to them."""
        steps = self.gradient_accumulation_steps
        accumulators = [self._accumulated_gradients[self._get_variable_index(v)]
                        for v in variables_]
        grads = [convert_to_tensor(g) for g in grads]

        def update():
            self._update([(g + a.read_value()) / steps for g, a in zip(grads, accumulators)],
                         variables_, lr)
            for a in accumulators:
                a.assign(array_fill.zeros_like(a.read_value()))

        def accumulate():
            for g, a in zip(grads, accumulators):
                a.assign_add(g)

        smart_cond(comparison.equal((self._iterations + 1) % steps, 0), update, accumulate)

    def _update_moving_averages(self) -> None:
        """Keras' EMA of the trainable variables (the first step copies them), and every
        `ema_overwrite_frequency` steps the variables overwritten by their averages."""
        not_first_step = comparison.not_equal(self.iterations, 0)
        for var, average in zip(self._trainable_variables, self._model_variables_moving_average):
            momentum = cast_op(not_first_step, var.dtype) * scalar(self.ema_momentum, var.dtype)
            average.assign(momentum * average.read_value()
                           + (scalar(1, var.dtype) - momentum) * var.read_value())
        if self.ema_overwrite_frequency:
            smart_cond(comparison.equal((self.iterations + 1) % self.ema_overwrite_frequency, 0),
                       lambda: self._overwrite_model_variables_with_average_value(
                           self._trainable_variables), lambda: None)

    def _overwrite_model_variables_with_average_value(self, variables_) -> None:
        if len(variables_) != len(self._model_variables_moving_average):
            raise ValueError(f"The length of model variables ({len(variables_)}) to override "
                             "does not match the length of model variables stored in the "
                             f"optimizer ({len(self._model_variables_moving_average)}). Please "
                             "check if the optimizer was called on your model.")
        for var, average in zip(variables_, self._model_variables_moving_average):
            var.assign(average.read_value())

    def finalize_variable_values(self, var_list) -> None:
        """At the end of `fit`: with `use_ema`, the variables take their moving averages."""
        if self.use_ema:
            self._overwrite_model_variables_with_average_value(var_list)

    # Whether update_step takes IndexedSlices (sparse rows) as they are; others get them dense.
    handles_indexed_slices = False

    def _filter_empty_gradients(self, grads, variables_):
        kept = [(g, v) for g, v in zip(grads, variables_) if g is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        missing = [v.name for g, v in zip(grads, variables_) if g is None]
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                          "loss. If using `model.compile()`, did you forget to provide a "
                          "`loss` argument?", stacklevel=3)
        return [g for g, _ in kept], [v for _, v in kept]

    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            out = []
            for g in grads:
                norm = math.sqrt(reduction.reduce_sum(math.square(g)))
                clip = scalar(self.clipnorm, g.dtype)
                out.append(g * clip / arithmetic.maximum(norm, clip))
            return out
        if self.global_clipnorm and self.global_clipnorm > 0:
            sq = [cast_op(reduction.reduce_sum(math.square(g)), dtypes.float32)
                  if g.dtype is not dtypes.float32 else reduction.reduce_sum(math.square(g))
                  for g in grads]
            norm = math.sqrt(arithmetic.add_n(sq) if len(sq) > 1 else sq[0])
            clip = scalar(self.global_clipnorm, dtypes.float32)
            scale = clip / arithmetic.maximum(norm, clip)
            return [g * cast(scale, g.dtype) for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            return [math.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _apply_weight_decay(self, variables_) -> None:
        if self.weight_decay is None:
            return
        for v in variables_:
            lr = cast(self.learning_rate, v.dtype)
            wd = cast(self.weight_decay, v.dtype)
            value = v.read_value()
            v.assign(value - value * wd * lr)

    def update_step(self, gradient, variable, learning_rate) -> None:
        raise NotImplementedError

    def minimize(self, loss, var_list, tape=None):
        """Keras 2's minimize: gradients of `loss` (a callable, or a tensor with its `tape`)
        w.r.t. `var_list` (a list or a callable returning one), then `apply_gradients`."""
        tape, loss, var_list = recorded_loss(loss, var_list, tape)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    # -- config ------------------------------------------------------------------------------
    def get_config(self) -> dict:
        lr = self._learning_rate
        if isinstance(lr, lrs.LearningRateSchedule):
            lr = schedule_serialization.serialize(lr)
        elif is_variable(lr):
            lr = float(lr.numpy())
        elif callable(lr):
            lr = lr
        return {"name": self.name, "learning_rate": lr, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "global_clipnorm": self.global_clipnorm,
                "clipvalue": self.clipvalue, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum,
                "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedule_serialization.deserialize(
                config["learning_rate"], custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def with_base_arguments(init):
    """Decorates an optimizer's `__init__(self, <its own hyperparameters>, **kwargs)` that
    passes `**kwargs` on to `Optimizer.__init__`: gives it Keras 3's public signature — its own
    parameters, then the base optimizer's (`weight_decay` ... `name`), then `**kwargs` — for
    `inspect.signature`, and binds each call to it, so the base arguments may be given by
    position as in Keras."""
    own = list(inspect.signature(init).parameters.values())
    var_keyword = own.pop()
    taken = {p.name for p in own}
    base = [p for p in inspect.signature(Optimizer.__init__).parameters.values()
            if p.name not in taken and p.kind is p.POSITIONAL_OR_KEYWORD]
    signature = inspect.Signature([*own, *base, var_keyword])

    @functools.wraps(init)
    def init_with_base_arguments(self, *args, **kwargs):
        arguments = signature.bind(self, *args, **kwargs).arguments
        extra = arguments.pop(var_keyword.name, {})
        init(**arguments, **extra)

    init_with_base_arguments.__signature__ = signature
    return init_with_base_arguments
