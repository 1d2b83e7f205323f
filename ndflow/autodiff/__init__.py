"""Layer 2: symbolic gradients (tf.gradients), the eager tape (GradientTape), custom
gradients, and the vector-Jacobian products that gradient functions ask for."""

from ndflow.autodiff import (  # noqa: F401 - registers tf.custom_gradient; vjp installs
    custom_gradient,  # context.hooks.vjp; py_function_grad: EagerPyFunc's gradient
    forwardprop,  # tf.autodiff.ForwardAccumulator
    gradient_wrappers,
    py_function_grad,
    vjp,
)
