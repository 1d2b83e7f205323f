"""`tf.keras.optimizers.Adam`: Keras 3's Adam (= TF's ResourceApplyAdam update)::

    t = iterations + 1;  alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
    m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
    var -= alpha * m / (sqrt(v) + epsilon)      (amsgrad: sqrt(max(v_hat, v)))

beta powers are computed from `iterations` in the variable's dtype, once per step.
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.keras.optimizers.adaptive_moments import AdaptiveMomentOptimizer
from ndflow.keras.optimizers.base_optimizer import cast, scalar, with_base_arguments
from ndflow.keras.optimizers.sparse_squares import dense_and_square
from ndflow.ops import arithmetic, math, training, training_sparse
from ndflow.ops.indexed_slices import IndexedSlices


@tf_export("keras.optimizers.Adam", "optimizers.Adam", v1=["keras.optimizers.Adam"])
class Adam(AdaptiveMomentOptimizer):
    """Adam / AMSGrad with slots "momentum", "velocity" (and "velocity_hat")."""

    handles_indexed_slices = True   # (Keras' sum of squares for repeated rows)

    @with_base_arguments
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad: bool = False, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self.amsgrad = amsgrad

    def build(self, var_list) -> None:
        if self.built:
            return
        super().build(var_list)
        self.add_moments(var_list)
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(var_list, "velocity_hat")

    def _beta_powers(self, dtype):
        cached = self._step_cache.get(dtype)
        if cached is None:
            local_step = cast(self.iterations + 1, dtype)
            cached = (arithmetic.pow(cast(self.beta_1, dtype), local_step),
                      arithmetic.pow(cast(self.beta_2, dtype), local_step))
            self._step_cache[dtype] = cached
        return cached

    def update_step(self, gradient, variable, learning_rate) -> None:
        dt = variable.dtype
        b1p, b2p = self._beta_powers(dt)
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        # as Keras: beta powers from float32-cast betas, (1 - beta) and epsilon exact
        if isinstance(gradient, IndexedSlices):
            self._update_from_slices(gradient, variable, m, v, cast(learning_rate, dt), b1p, b2p)
            return
        args = (b1p, b2p, cast(learning_rate, dt), scalar(self.beta_1, dt),
                scalar(self.beta_2, dt), scalar(self.epsilon, dt), gradient)
        if self.amsgrad:
            training.resource_apply_adam_with_amsgrad(
                variable.handle, m.handle, v.handle, self._velocity_hats[i].handle, *args)
        else:
            training.resource_apply_adam(variable.handle, m.handle, v.handle, *args)

    def _update_from_slices(self, gradient, variable, m, v, lr, b1p, b2p) -> None:
        """Keras 3's update on TF for an IndexedSlices gradient (an embedding's): `square`
        acts on the slices' values, so a row looked up twice adds two squares to `v`, while
        `m` takes the summed (dense) gradient."""
        dt = variable.dtype
        if not self.amsgrad:   # one op (kernels/training_sparse.py): m, v, var in one pass
            training_sparse.resource_sparse_apply_keras_adam(
                variable.handle, m.handle, v.handle, b1p, b2p, lr, scalar(self.beta_1, dt),
                scalar(self.beta_2, dt), scalar(self.epsilon, dt), gradient.values,
                gradient.indices)
            return
        g, g2 = dense_and_square(gradient)
        alpha = lr * math.sqrt(1 - b2p) / (1 - b1p)
        m.assign_add((g - m) * cast(1 - self.beta_1, dt))
        v.assign_add((g2 - v) * cast(1 - self.beta_2, dt))
        if self.amsgrad:
            v_hat = self._velocity_hats[self._get_variable_index(variable)]
            v_hat.assign(arithmetic.maximum(v_hat, v))
            v = v_hat
        variable.assign_sub(m * alpha / (math.sqrt(v) + cast(self.epsilon, dt)))

    def get_config(self) -> dict:
        return {**super().get_config(), "amsgrad": self.amsgrad}
