"""`tf.keras.optimizers.Adafactor`: Keras 3's Adafactor (factored second moments)::

    t = iterations + 1;  rho = min(lr, 1/sqrt(t))  (lr itself is min'ed first when
    relative_step and lr is not a schedule);  alpha = max(epsilon_2, rms(var)) * rho
    G = g^2 + epsilon_1;  beta_2_t = 1 - t^beta_2_decay
    rank >= 2:  r = beta_2_t r + (1 - beta_2_t) mean(G, -1);  c = ... mean(G, -2)
                v = (r / mean(r, -1))[..., None] * c[..., None, :]
    rank < 2:   v = beta_2_t v + (1 - beta_2_t) G
    u = g / sqrt(v);  var -= alpha * u / max(1, rms(u) / clip_threshold)

Variables are made in Keras's order, per variable: r, c (rank >= 2; two int32 scalars
otherwise, unused but saved by Keras), then the "velocity" slot.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar, with_base_arguments
from ndflow.ops import arithmetic, math, reduction
from ndflow.ops.array_core import expand_dims
from ndflow.train import learning_rate_schedule as lrs
from ndflow.train.optimizer import is_variable


def _rms(x):
    return math.sqrt(reduction.reduce_mean(math.square(x)))


@tf_export("keras.optimizers.Adafactor", "optimizers.Adafactor",
           v1=["keras.optimizers.Adafactor"])
class Adafactor(Optimizer):
    """Adafactor with per-variable r, c (row/column second moments) and "velocity"."""

    @with_base_arguments
    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step: bool = True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for var in var_list:
            base = _base_name(var)
            shape = tuple(var.shape.as_list())
            if len(shape) < 2:
                self._r.append(self.add_variable([], "zeros", dtypes.int32, name=base))
                self._c.append(self.add_variable([], "zeros", dtypes.int32, name=base))
            else:
                self._r.append(self.add_variable(shape[:-1], "zeros", var.dtype, name=base))
                self._c.append(self.add_variable(shape[:-2] + shape[-1:], "zeros", var.dtype,
                                                 name=base))
            self._v.append(self.add_variable_from_reference(var, "velocity"))

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        i = self._get_variable_index(variable)
        lr = cast(learning_rate, dt)
        local_step = cast(self.iterations + 1, dt)
        inv_sqrt_step = 1 / math.sqrt(local_step)
        schedule = self._learning_rate
        if self.relative_step and (is_variable(schedule) or not (
                isinstance(schedule, lrs.LearningRateSchedule) or callable(schedule))):
            lr = arithmetic.minimum(lr, inv_sqrt_step)
        rho_t = arithmetic.minimum(lr, inv_sqrt_step)
        alpha_t = arithmetic.maximum(scalar(self.epsilon_2, dt),
                                     _rms(variable.read_value())) * rho_t
        grad_sq = math.square(gradient) + scalar(self.epsilon_1, dt)
        beta_2_t = 1 - arithmetic.pow(local_step, scalar(self.beta_2_decay, dt))
        one_minus = 1 - beta_2_t
        v_var = self._v[i]
        if variable.shape.rank >= 2:
            r_var, c_var = self._r[i], self._c[i]
            r = beta_2_t * r_var.read_value() + one_minus * reduction.reduce_mean(grad_sq, -1)
            c = beta_2_t * c_var.read_value() + one_minus * reduction.reduce_mean(grad_sq, -2)
            r_var.assign(r)
            c_var.assign(c)
            v = expand_dims(r / reduction.reduce_mean(r, -1, keepdims=True), -1) * \
                expand_dims(c, -2)
        else:
            v = beta_2_t * v_var.read_value() + one_minus * grad_sq
        v_var.assign(v)
        u_t = gradient / math.sqrt(v)
        u_t_hat = u_t / arithmetic.maximum(scalar(1.0, dt),
                                           _rms(u_t) / scalar(self.clip_threshold, dt))
        variable.assign_sub(alpha_t * u_t_hat)

    def get_config(self) -> dict:
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay,
                "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                "clip_threshold": self.clip_threshold, "relative_step": self.relative_step}


def _base_name(var) -> str:
    """The variable's own name, Keras's name for its r and c variables."""
    path = getattr(var, "path", None)
    name = path if path is not None else str(var.name).split(":")[0]
    return name.split("/")[-1]
