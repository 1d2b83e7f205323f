"""Function wrappers that change how gradients flow, as TensorFlow's:

- `tf.grad_pass_through(f)`: `f`'s value forward, the identity's gradient backward (e.g. a
  variable assignment or a quantizer treated as the identity);
- `tf.recompute_grad(f)`: `f`'s activations are not kept for the backward pass; its gradient
  runs `f` again under a tape (memory for compute);
- `tf.AggregationMethod`: the names `tf.gradients(aggregation_method=...)` accepts (ndflow
  always sums with AddN; the choice only orders the additions in TensorFlow).
"""

from __future__ import annotations

import functools

from ndflow.autodiff.custom_gradient import custom_gradient
from ndflow.autodiff.tape import GradientTape
from ndflow.core.api_export import tf_export


@tf_export("AggregationMethod", v1=["AggregationMethod"])
class AggregationMethod:
    """How gradients reaching one tensor from several consumers are summed.

    Attributes:
      ADD_N: one AddN of all the contributions (the default; `DEFAULT` is the same).
      EXPERIMENTAL_TREE: pairwise sums in a tree.
      EXPERIMENTAL_ACCUMULATE_N: accumulate as the contributions arrive.

    In TensorFlow the methods differ only in memory use and scheduling. ndflow accepts the
    `aggregation_method` argument of `tf.gradients` for compatibility and always sums the
    contributions the same way.

    Example:
      >>> x = tf.constant(3.0)
      >>> with tf.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = x * x + x
      >>> float(tape.gradient(y, x))
      7.0
    """
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


@tf_export("grad_pass_through", v1=["grad_pass_through"])
def grad_pass_through(f):
    """Wraps `f` so that its gradient passes the upstream gradient through unchanged.

    The forward pass computes `f`; the backward pass treats it as the identity with respect
    to each input (a straight-through estimator, e.g. around a rounding or an assignment).

    Args:
      f: a function of tensors.

    Returns:
      The wrapped function.

    Example:
      >>> x = tf.constant(1.4)
      >>> with tf.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = tf.grad_pass_through(tf.round)(x) * 3.0
      >>> float(y), float(tape.gradient(y, x))
      (3.0, 3.0)
    """
    @custom_gradient
    def passed_through(*args, **kwargs):
        def grad(*dys, variables=None):
            return (list(dys), [None] * len(variables)) if variables else list(dys)
        return f(*args, **kwargs), grad

    return functools.wraps(f)(passed_through)


@tf_export("recompute_grad", v1=["recompute_grad"])
def recompute_grad(f):
    """`f` whose backward pass recomputes its forward pass instead of keeping activations;
    gradients reach its inputs and the variables it reads."""
    @custom_gradient
    def recomputed(*args, **kwargs):
        result = f(*args, **kwargs)

        def grad(*dresult, variables=None):
            watched = list(variables or [])
            with GradientTape() as tape:
                tape.watch(list(args))
                tape.watch(watched)
                again = f(*args, **kwargs)
            grads = tape.gradient(again, list(args) + watched,
                                  output_gradients=list(dresult),
                                  unconnected_gradients="zero")
            inputs = grads[:len(args)]
            return (inputs, grads[len(args):]) if variables else inputs
        return result, grad

    return functools.wraps(f)(recomputed)
