"""`tf.custom_gradient`: a function that supplies its own gradient to GradientTapes.

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

The body runs with recording paused; the active tapes then record one op whose inputs are
the tensor arguments, whose outputs are the returned tensors and whose gradient function is
`grad` (eager, and inside `tf.function` tracing where tapes record graph ops). When the body
read trainable variables, `grad` must take `variables=` (TF's TypeError otherwise), is called
with them and returns `(input_grads, variable_grads)`. Limitation: symbolic `tf.gradients` on
a v1 graph walks the graph and does not see the override.
"""

from __future__ import annotations

import functools
import inspect

from ndflow.autodiff.gradients import as_source
from ndflow.core import context
from ndflow.core.api_export import tf_export
from ndflow.core.nest import flatten
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import EagerOperation
from ndflow.ops.op_def import OpDef


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
    """Decorator: `f(*args)` returns `(outputs, grad_fn)`; tapes use `grad_fn` for `f`."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        st = context.state()
        collector = _VariableCollector()
        outer_tapes = list(context.active_tapes())
        saved = st.tapes
        st.tapes = [collector]
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
        if not outer_tapes:
            return result
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

        od = OpDef("CustomGradient", [], [], {}, grad_fn=grad)
        record = EagerOperation(od, f"{getattr(f, '__name__', 'custom')}_CustomGradient",
                                inputs + handles, outputs, {}, "")
        for tape in outer_tapes:
            tape.record(record)
        return result

    return wrapped
