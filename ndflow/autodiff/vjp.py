"""Vector-Jacobian products of a composite of ops, for gradient functions that need one.

TensorFlow's second-order gradient of FusedBatchNormGrad opens a GradientTape inside the
gradient function and differentiates the batch-norm backward pass written as ops. Gradient
functions live in the op layer, below autodiff, so they reach this through
`context.hooks.vjp`:

    grads = context.hooks.vjp(fn, [x, scale], [dy_x, dy_scale])

runs `fn(*inputs)` and returns d(sum output_grads * outputs)/d(inputs): symbolically with
`tf.gradients` while building a graph, with a GradientTape when executing eagerly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ndflow.autodiff.gradients import gradients
from ndflow.autodiff.tape import GradientTape
from ndflow.core import context


def vjp(fn: Callable, inputs: Sequence, output_grads: Sequence) -> list:
    """d(sum_i output_grads[i] * fn(*inputs)[i]) / d(inputs), one entry per input."""
    inputs = list(inputs)
    if not context.executing_eagerly():
        return gradients(list(fn(*inputs)), inputs, grad_ys=list(output_grads))
    with GradientTape() as tape:
        for x in inputs:
            tape.watch(x)
        outputs = list(fn(*inputs))
    return tape.gradient(outputs, inputs, output_gradients=list(output_grads))


context.hooks.vjp = vjp
