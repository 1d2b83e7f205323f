"""`tf.keras.optimizers.Muon`: Keras 3's Muon. 2-D variables (not embeddings, not matching
`exclude_layers`) take the orthogonalized-momentum step::

    m = momentum * m + g;  G = g + momentum * m (nesterov) or m
    O = NewtonSchulz5(G) (ns_steps of X = a X + (b A + c A A) X, A = X X^T, X = G / ||G||_F)
    var -= lr * O * sqrt(max(rows, cols)) * rms_rate

the others AdamW's step (learning rate * adam_lr_ratio) with slots "momentum", "velocity".
Weight decay: `weight_decay` for the Muon variables, `adam_weight_decay` for the others.
"""

from __future__ import annotations

import math as pymath
import re

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import update_moments
from ndflow.keras.optimizers.base_optimizer import Optimizer, cast, scalar
from ndflow.ops import arithmetic, linalg, math, reduction
from ndflow.ops.array_transpose import transpose


def _variable_path(variable) -> str:
    path = getattr(variable, "path", None)
    return path if path is not None else str(variable.name).split(":")[0]


@tf_export("keras.optimizers.Muon", "optimizers.Muon", v1=["keras.optimizers.Muon"])
class Muon(Optimizer):
    """Muon for matrices, AdamW for the rest."""

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
                 adam_weight_decay=0.004, epsilon=1e-7, weight_decay=0.004, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema: bool = False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name: str | None = None,
                 exclude_layers=None, exclude_embeddings: bool = True, muon_a=3.4445,
                 muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95,
                 ns_steps: int = 5, nesterov: bool = True, rms_rate=0.2, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.adam_beta_1 = adam_beta_1
        self.adam_beta_2 = adam_beta_2
        self.epsilon = epsilon
        self.muon_a = muon_a
        self.muon_b = muon_b
        self.muon_c = muon_c
        self.adam_lr_ratio = adam_lr_ratio
        self.momentum = momentum
        self.ns_steps = ns_steps
        self.nesterov = nesterov
        self.exclude_embeddings = exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay = adam_weight_decay
        self.rms_rate = rms_rate

    def _should_use_adamw(self, variable) -> bool:
        if variable.shape.rank != 2:
            return True
        path = _variable_path(variable)
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self.momentums, self.adam_velocities = [], []
        for var in var_list:   # Keras's order: per variable, momentum then velocity
            self.momentums.append(self.add_variable_from_reference(var, "momentum"))
            self.adam_velocities.append(self.add_variable_from_reference(var, "velocity")
                                        if self._should_use_adamw(var) else None)

    def update_step(self, gradient, variable, learning_rate) -> None:
        i = self._get_variable_index(variable)
        m, v = self.momentums[i], self.adam_velocities[i]
        if v is not None:
            self._adamw_step(gradient, variable, learning_rate * self.adam_lr_ratio, m, v)
        else:
            self._muon_step(gradient, variable, learning_rate, m)

    def _muon_step(self, gradient, variable, lr, m_var):
        dt = variable.dtype
        m = m_var.read_value()
        m = m + (gradient + m * scalar(self.momentum - 1, dt))
        m_var.assign(m)
        g = gradient + scalar(self.momentum, dt) * m if self.nesterov else m
        update = cast(lr, dt) * self._newton_schulz5(g, self.ns_steps)
        if self.rms_rate is not None:
            rows, cols = variable.shape.as_list()
            update = update * scalar(pymath.sqrt(max(rows, cols)), dt) * \
                scalar(self.rms_rate, dt)
        variable.assign_sub(update)

    def _newton_schulz5(self, x, steps: int):
        """Keras's quintic Newton-Schulz orthogonalization of a matrix."""
        rows, cols = x.shape.as_list()
        tall = rows > cols
        if tall:
            x = transpose(x)
        dt = x.dtype
        norm = math.sqrt(reduction.reduce_sum(math.square(x), axis=[-2, -1], keepdims=True))
        x = x / (norm + scalar(1e-7, dt))
        a, b, c = (scalar(k, dt) for k in (self.muon_a, self.muon_b, self.muon_c))
        for _ in range(steps):
            gram = linalg.matmul(x, x, transpose_b=True)
            poly = b * gram + linalg.matmul(c * gram, gram)
            x = a * x + linalg.matmul(poly, x)
        return transpose(x) if tall else x

    def _adamw_step(self, gradient, variable, learning_rate, m_var, v_var):
        dt = variable.dtype
        lr = cast(learning_rate, dt)
        local_step = cast(self.iterations + 1, dt)
        b1_power = arithmetic.pow(cast(self.adam_beta_1, dt), local_step)
        b2_power = arithmetic.pow(cast(self.adam_beta_2, dt), local_step)
        alpha = lr * math.sqrt(1 - b2_power) / (1 - b1_power)
        m, v = update_moments(m_var, v_var, gradient, self.adam_beta_1, self.adam_beta_2)
        variable.assign_sub(m * alpha / (math.sqrt(v) + scalar(self.epsilon, dt)))

    def _apply_weight_decay(self, variables_) -> None:
        for variable in variables_:
            decay = self.adam_weight_decay if self._should_use_adamw(variable) \
                else self.weight_decay
            if decay is None:
                continue
            wd, lr = cast(decay, variable.dtype), cast(self.learning_rate, variable.dtype)
            value = variable.read_value()
            variable.assign(value - value * wd * lr)

    # its own config entries, in Keras's order
    _CONFIG_KEYS = ("adam_beta_1", "adam_beta_2", "epsilon", "exclude_layers", "muon_a",
                    "muon_b", "muon_c", "adam_lr_ratio", "momentum", "ns_steps", "nesterov",
                    "exclude_embeddings", "adam_weight_decay", "rms_rate")

    def get_config(self) -> dict:
        return {**super().get_config(), **{k: getattr(self, k) for k in self._CONFIG_KEYS}}
