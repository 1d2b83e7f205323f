"""`keras.layers.SpectralNormalization` (Miyato et al. 2018): a wrapper that, in training,
divides the wrapped layer's kernel (or embeddings) by its largest singular value, estimated
by power iteration from a persistent vector `vector_u`, and writes both back, as Keras 3 does
(GAN discriminators use it)."""

from __future__ import annotations

from ndflow.core import context
from ndflow.core.api_export import keras_export
from ndflow.keras.layers.input_spec import InputSpec
from ndflow.keras.layers.wrappers import Wrapper
from ndflow.ops import init_ops, linalg, math, reduction
from ndflow.ops.arithmetic import divide, minimum
from ndflow.ops.array_core import reshape, stop_gradient
from ndflow.ops.array_transpose import transpose
from ndflow.ops.cast import cast
from ndflow.ops.comparison import equal
from ndflow.runtime.control_flow import cond

_EPSILON = 1e-7   # keras.config.epsilon(), which Keras' normalize divides by at least


def _normalized(x):
    """`x` over its L2 norm (the norm at least epsilon), as keras.ops.normalize(axis=None)."""
    inverse = math.rsqrt(reduction.reduce_sum(math.square(x)))
    return x * minimum(inverse, cast(1.0 / _EPSILON, x.dtype))


@keras_export("keras.layers.SpectralNormalization")
class SpectralNormalization(Wrapper):
    """Wraps a layer so that its kernel is divided by its spectral norm (largest singular
    value), estimated by power iteration; this bounds the layer's Lipschitz constant (e.g.
    for GAN discriminators).

    Args:
      layer: the wrapped layer, which has a `kernel` (or `embeddings`).
      power_iterations: power-iteration steps per training call (a positive int).
      **kwargs: Layer arguments (name, dtype, ...).

    Raises:
      ValueError: `power_iterations` is not positive; when built, a layer without a
        kernel.
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        if hasattr(self.layer, "kernel"):
            self.kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            self.kernel = self.layer.embeddings
        else:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        # Keras tracks the attribute: the kernel is the wrapper's own first weight, so its
        # weights are ordered [kernel, vector_u, the layer's others] (get/set_weights, files)
        self._trainable_variables.append(self.kernel)
        self.kernel_shape = tuple(self.kernel.shape)
        self.vector_u = self.add_weight(
            shape=(1, self.kernel_shape[-1]),
            initializer=init_ops.TruncatedNormal(stddev=0.02), trainable=False,
            name="vector_u", dtype=self.kernel.dtype)
        self.built = True

    def call(self, inputs, training=False):
        if training:
            kernel, vector_u = self.kernel.value(), self.vector_u.value()
            all_zero = reduction.reduce_all(equal(kernel, 0))
            if context.executing_eagerly():
                new_u, new_kernel = ((vector_u, kernel) if bool(all_zero)
                                     else self.normalized_weights())
            else:
                new_u, new_kernel = cond(all_zero, lambda: (vector_u, kernel),
                                         self.normalized_weights)
            self.vector_u.assign(new_u)
            self.kernel.assign(new_kernel)
        output = self.layer(inputs)
        return output if output.dtype == inputs.dtype else cast(output, inputs.dtype)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def normalized_weights(self):
        """(the updated vector_u, the kernel over its estimated spectral norm)."""
        weights = reshape(self.kernel.value(), [-1, self.kernel_shape[-1]])
        vector_u = self.vector_u.value()
        for _ in range(self.power_iterations):
            vector_v = _normalized(linalg.matmul(vector_u, transpose(weights)))
            vector_u = _normalized(linalg.matmul(vector_v, weights))
        vector_u, vector_v = stop_gradient(vector_u), stop_gradient(vector_v)
        sigma = linalg.matmul(linalg.matmul(vector_v, weights), transpose(vector_u))
        kernel = reshape(divide(self.kernel.value(), sigma), self.kernel_shape)
        return cast(vector_u, self.vector_u.dtype), cast(kernel, self.kernel.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "power_iterations": self.power_iterations}
