"""`tf.train.ExponentialMovingAverage` (and the `assign_moving_average` it is built on).

Shadow variables hold `shadow -= (1 - decay) * (shadow - value)` (TF's lock-free form of
`decay * shadow + (1 - decay) * value`). With `num_updates` the decay used is
`min(decay, (1 + num_updates) / (10 + num_updates))`, so averages move fast early on.

A variable's shadow is named `<variable op name>/<ema name>` (`conv1/weights/
ExponentialMovingAverage`), non-trainable, created from the variable's current value (its
initial value while uninitialized) and the variable is added to MOVING_AVERAGE_VARIABLES.
A tensor's shadow (graph mode only; the CIFAR-10 loss averages) starts at zero, optionally
zero-debiased with `<shadow>/biased` and `<shadow>/local_step` as TF does.
`variables_to_restore()` maps shadow names to the model's variables, so a TF1 `Saver` built
from it loads the averaged weights into the model (evaluation with the averages).
"""

from __future__ import annotations

from ndflow.core import context, dtypes, scopes
from ndflow.core.api_export import tf_export
from ndflow.core.graph import GraphKeys
from ndflow.core.tensor import Tensor
from ndflow.ops import variable_scope, variables
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.arithmetic import minimum, pow  # noqa: A004 - TF's name
from ndflow.ops.cast import cast
from ndflow.ops.init_ops_v1 import zeros_initializer
from ndflow.runtime.control_flow import cond
from ndflow.train import slot_creator
from ndflow.train.init_scope import init_scope
from ndflow.train.optimizer import group_named

_AVERAGEABLE = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def _op_name(x) -> str:
    return slot_creator.variable_op_name(x)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """Updates `variable` to `variable * decay + value * (1 - decay)`; returns the new value
    (graph) or the variable (eager). `zero_debias` divides by `1 - decay ** num_updates`
    (tracked in two extra variables), for averages that start at zero."""
    with scopes.name_scope(name, "AssignMovingAvg") as scope:
        one_minus_decay = convert_to_tensor(1.0 - _as_float(decay), name="decay")
        if one_minus_decay.dtype is not variable.dtype:
            one_minus_decay = cast(one_minus_decay, variable.dtype)
        value = convert_to_tensor(value, dtype=variable.dtype)
        if zero_debias:
            return _zero_debias(variable, value, one_minus_decay)
        return variable.assign_sub((variable - value) * one_minus_decay, name=scope or None)


def _as_float(decay):
    """`decay` as something `1.0 - decay` works on (a Python number, or a tensor)."""
    if isinstance(decay, (int, float)):
        return float(decay)
    return convert_to_tensor(decay)


def _zero_debias(unbiased, value, one_minus_decay):
    """`unbiased = biased / (1 - decay ** t)` with `biased` the zero-started EMA of `value`
    and `t` the number of updates so far (TF's `_zero_debias`)."""
    with variable_scope.variable_scope(_op_name(unbiased)):
        with init_scope():
            biased = variable_scope.get_variable(
                _unique_in_scope("biased"), shape=unbiased.shape, dtype=unbiased.dtype,
                initializer=zeros_initializer(), trainable=False)
            local_step = variable_scope.get_variable(
                _unique_in_scope("local_step"), shape=[], dtype=unbiased.dtype,
                initializer=zeros_initializer(), trainable=False)
    update_biased = biased.assign_sub((biased - value) * one_minus_decay)
    update_step = local_step.assign_add(1.0)
    if context.executing_eagerly():
        update_biased, update_step = update_biased.value(), update_step.value()
    bias_factor = 1.0 - pow(1.0 - one_minus_decay, update_step)
    return unbiased.assign(update_biased / bias_factor)


def _unique_in_scope(name: str) -> str:
    """`name`, or `name_1`, `name_2`... if the current variable scope already holds it (a
    second debiased average of the same shadow), as TF's `_maybe_get_unique`."""
    scope = variable_scope.get_variable_scope()
    if scope.reuse:
        return name
    taken = {_op_name(v) for v in variables.global_variables()}
    full = f"{scope.name}/{name}" if scope.name else name
    if full not in taken:
        return name
    i = 1
    while f"{full}_{i}" in taken:
        i += 1
    return f"{name}_{i}"


@tf_export("train.ExponentialMovingAverage")
class ExponentialMovingAverage:
    """Maintains moving averages of variables (and, in graphs, tensors) by exponential decay.

    `apply(var_list)` creates the shadow variables on its first call and updates them: it
    returns the update op in a graph (run it after each training step) and updates at once
    eagerly or inside `tf.function`. `average(var)` is the shadow variable.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}   # var.ref() -> shadow variable
        self._eager_names: dict = {}  # eager shadows of same-named variables get `_1`, ...

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        """Creates shadow variables for `var_list` (default: the trainable variables) the first
        time, and updates every average from the current values. Returns an Operation (graph)
        or None (eager)."""
        if var_list is None:
            var_list = variables.trainable_variables()
        var_list = list(var_list)
        eager = context.executing_eagerly()
        for v in var_list:
            if isinstance(v, Tensor) and not _is_variable(v) and _eager_outside_functions():
                raise TypeError("tf.train.ExponentialMovingAverage does not support "
                                "non-Variable tensors when eager execution is enabled.")
        debiased = set()
        for v in var_list:
            if v.dtype.base_dtype not in _AVERAGEABLE:
                raise TypeError(f"The variables must be half, float, or double: {v.name}")
            if _key(v) in self._averages:
                continue
            with init_scope():
                if _is_variable(v):
                    avg = slot_creator.create_slot(v, lambda v=v: _current_or_initial(v),
                                                   self._name, self._eager_names)
                    if not context.executing_eagerly():
                        context.get_default_graph().add_to_collection(
                            GraphKeys.MOVING_AVERAGE_VARIABLES, v)
                else:
                    avg = slot_creator.create_zeros_slot(v, self._name)
                    if self._zero_debias:
                        debiased.add(_key(avg))
            self._averages[_key(v)] = avg
        with scopes.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay") \
                if not _is_variable(self._decay) else cast(self._decay, dtypes.float32)
            if self._num_updates is not None:
                n = cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = minimum(decay, (1.0 + n) / (10.0 + n))
            updates = []
            for v in var_list:
                avg = self._averages[_key(v)]
                updates.append(assign_moving_average(avg, v, decay,
                                                     zero_debias=_key(avg) in debiased))
            if eager:
                return None
            return group_named(updates, scope)  # the op is named `<ema name>`, as TF's

    def average(self, var):
        """The shadow variable of `var`, or None if `var` is not averaged."""
        return self._averages.get(_key(var))

    def average_name(self, var) -> str:
        """The name of `var`'s shadow variable (without `:0`), whether or not `apply` ran:
        what a TF1 `Saver` maps to `var` to restore the average into it."""
        avg = self._averages.get(_key(var))
        if avg is not None:
            return _op_name(avg)
        wanted = f"{_op_name(var)}/{self._name}"
        if context.executing_eagerly():
            return wanted
        return context.get_default_graph().unique_name(wanted, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """`{restore name: variable}`: averaged variables (default: the trainable ones and
        MOVING_AVERAGE_VARIABLES) under their shadow's name, every other global variable
        under its own name — a `Saver` of this map evaluates with the averaged weights."""
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables() + \
                variables.moving_average_variables()
        averaged = list({_key(v): v for v in moving_avg_variables}.values())
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        for v in variables.global_variables():
            if v.name not in averaged_names and _op_name(v) not in name_map:
                name_map[_op_name(v)] = v
        return name_map


def _is_variable(x) -> bool:
    return isinstance(x, variables.Variable) or (
        not isinstance(x, Tensor) and isinstance(getattr(x, "handle", None), Tensor))


def _key(x):
    return x.ref() if hasattr(x, "ref") else x


def _eager_outside_functions() -> bool:
    with init_scope():
        return context.executing_eagerly()


def _current_or_initial(var):
    """The shadow's initial value: the variable's value if it is initialized, else its
    initial value (graph: a `cond` on `VarIsInitializedOp`, as TF)."""
    if context.executing_eagerly() or not getattr(var, "_in_graph_mode", False):
        return var.read_value()
    with scopes.device(var.device):
        return cond(var.is_initialized(), var.read_value, lambda: var.initial_value)
