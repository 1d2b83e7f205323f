"""`tf.custom_gradient`: a function that supplies its own gradient to GradientTapes.

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

The active tapes record the body, as TensorFlow's do (so `grad`'s use of `e` differentiates
in turn: second order); then its results pass through Identity ops and the tapes record one
op whose inputs are the tensor arguments, whose outputs are those identities and whose
gradient function is `grad`, so the results' gradients reach the arguments through `grad`
only. While a graph is built (tf.function, TF1), the results instead pass through an
IdentityN whose registered gradient calls `grad`, as TensorFlow's graph mode does, so
`tf.gradients` and tapes around a call of the function see it too; `grad` may use the body's
tensors (`e` above), which on a copy of the op (the function inlined into a caller, run op by
op under a tape, a cond or while body rematerialized by its gradient) stand for the copy's
(ops/forward_copies.py). When the body read trainable variables, `grad` must take
`variables=` (TF's TypeError otherwise), is called with them and returns
`(input_grads, variable_grads)`.
"""

from __future__ import annotations

import functools
import inspect
import itertools

from ndflow.autodiff.gradients import as_source
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import EagerOperation
from ndflow.ops.array_core import identity, identity_n
from ndflow.ops.gradient_registry import GRADIENTS
from ndflow.ops.op_def import OpDef

_UIDS = itertools.count()


class _VariableCollector:
    """A stand-in tape that notes the variables read while the body runs."""

    def __init__(self):
        self.variables: list = []

    def record(self, op) -> None:
        pass

    def variable_accessed(self, var) -> None:
        if getattr(var, "trainable", True) and not any(v is var for v in self.variables):
            self.variables.append(var)

    def watch(self, tensor) -> None:
        pass


@tf_export("custom_gradient")
def custom_gradient(f=None):
    """A decorator defining a function together with its own gradient.

    The decorated `f(*args)` returns `(outputs, grad_fn)`: `grad_fn(*upstream)` returns the
    gradients with respect to `args` (and, when `f` uses variables, accepts a `variables=`
    keyword and returns `(input_grads, variable_grads)`). Tapes and `tf.gradients` use
    `grad_fn` instead of differentiating the ops inside `f`.

    Args:
      f: the function to decorate (None when used as `@tf.custom_gradient()`).

    Returns:
      The decorated function, returning only the outputs.

    Example:
      >>> @tf.custom_gradient
      ... def clipped_identity(x):
      ...     def grad(dy):
      ...         return tf.clip_by_value(dy, -1.0, 1.0)
      ...     return tf.identity(x), grad
      >>> x = tf.constant(2.0)
      >>> with tf.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = clipped_identity(x) * 5.0
      >>> float(tape.gradient(y, x))
      1.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        st = context.state()
        collector = _VariableCollector()
        outer_tapes = list(context.active_tapes())
        saved = st.tapes
        st.tapes = list(saved) + [collector]   # the tapes record the body, as TF's
        try:
            result, grad_fn = f(*args, **kwargs)
        finally:
            st.tapes = saved
        inputs = [a for a in flatten((args, kwargs)) if isinstance(a, Tensor)]
        outputs = [o for o in flatten(result) if isinstance(o, Tensor)]
        variables = collector.variables
        for var in variables:
            for tape in outer_tapes:
                tape.variable_accessed(var)
        if not context.executing_eagerly():   # building a graph (tf.function, TF1)
            return _through_identity_n(f, result, grad_fn, inputs, variables)
        if not outer_tapes:
            return result
        grad, handles = _gradient(grad_fn, inputs, variables)
        od = OpDef("CustomGradient", [], [], {}, grad_fn=grad)
        with context.stop_recording():   # the op below is what produces them on the tapes
            passed = [identity(o) for o in outputs]
        record = EagerOperation(od, f"{getattr(f, '__name__', 'custom')}_CustomGradient",
                                inputs + handles, passed, {}, "")
        for tape in outer_tapes:
            tape.record(record)
        it = iter(passed)
        return pack_sequence_as(result, [next(it) if isinstance(o, Tensor) else o
                                         for o in flatten(result)])

    return wrapped


def _gradient(grad_fn, inputs: list, variables: list) -> tuple:
    """(the gradient function of the op standing for the body: output gradients -> input
    and variable gradients, the variable handles it differentiates)."""
    params = inspect.signature(grad_fn).parameters
    takes_vars = "variables" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if variables and not takes_vars:
        raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument "
                        f"'variables', since function uses variables: {variables}")
    wants_vars = takes_vars and bool(variables)   # TF passes them only when there are
    # inside a function being traced, the captured placeholder stands for each handle
    handles = [as_source(v) for v in variables] if wants_vars else []

    def grad(op, *dys):
        if wants_vars:
            in_grads, var_grads = grad_fn(*dys, variables=variables)
        else:
            in_grads, var_grads = grad_fn(*dys), []
        in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(inputs):
            raise ValueError(f"custom_gradient function returned {len(in_grads)} "
                             f"gradients but {len(inputs)} inputs were given")
        return in_grads + list(var_grads)
    return grad, handles


def _through_identity_n(f, result, grad_fn, inputs: list, variables: list):
    """TF's graph-mode custom gradient: the results pass through one IdentityN over
    [results, inputs, variable values] whose gradient (registered under a fresh name, kept
    by every copy of the op as its `_gradient_op_type`) sends the results' gradients to the
    inputs through `grad_fn`, and nothing to the results' own producers. So tf.gradients,
    tapes inside the function and tapes around a call of it all see the override. A
    variable enters as a read of it (as in TF), whose gradient reaches its handle: the op's
    gradient function takes and returns plain tensors, which a SavedModel can hold
    (ndflow/saved_model/gradient_saving.py)."""
    flat = [o for o in flatten(result) if isinstance(o, Tensor)]
    if not flat:
        return result
    grad, handles = _gradient(grad_fn, inputs, variables)
    name = f"CustomGradient-{next(_UIDS)}"

    def identity_n_grad(op, *dys):
        return [None] * len(flat) + grad(op, *dys[:len(flat)])
    GRADIENTS[name] = identity_n_grad
    graph = context.get_default_graph()
    with graph.gradient_override_map({"IdentityN": name}):
        reads = [v.value() for v in variables] if handles else []
        passed = identity_n(flat + inputs + reads)
    passed[0].op.attrs["_gradient_op_type"] = name
    it = iter(passed[:len(flat)])
    return pack_sequence_as(result, [next(it) if isinstance(o, Tensor) else o
                                     for o in flatten(result)])
