"""Layer 2: symbolic gradients (tf.gradients), the eager tape (GradientTape), custom
gradients, and the vector-Jacobian products that gradient functions ask for."""

from ndflow.autodiff import vjp  # noqa: F401 - installs context.hooks.vjp
