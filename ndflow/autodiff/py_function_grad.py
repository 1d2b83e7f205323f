"""The gradient of tf.py_function (EagerPyFunc): another EagerPyFunc that re-runs the user's
function under a GradientTape and returns the vector-Jacobian product for its floating
inputs. (TF's _EagerPyFuncGrad replays the tape recorded by the forward call; re-running
gives the same value for a pure function.) It lives here, not in ops/, because it needs the
tape."""

from __future__ import annotations

from ndflow.autodiff.tape import GradientTape
from ndflow.ops import script_ops
from ndflow.ops.apply import apply_op
from ndflow.ops.array_fill import zeros_like


def _vjp(func, n_in: int, wanted: list, live: list):
    def run(*args):
        inputs, dys = list(args[:n_in]), list(args[n_in:])
        with GradientTape() as tape:
            for x in inputs:
                tape.watch(x)
            outs = func(*inputs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        targets = [outs[i] for i in live]
        sources = [inputs[i] for i in wanted]
        grads = tape.gradient(targets, sources, output_gradients=dys) if targets else \
            [None] * len(sources)
        return [zeros_like(s) if g is None else g for s, g in zip(sources, grads)]
    return run


@script_ops.EagerPyFunc.def_grad
def _eager_py_func_grad(op, *grads):
    func, _ = script_ops.FUNCTIONS[op.attrs["token"]]
    inputs = list(op.inputs)
    wanted = [i for i, x in enumerate(inputs) if x.dtype.is_floating or x.dtype.is_complex]
    live = [i for i, g in enumerate(grads) if g is not None]
    if not wanted or not live:
        return [None] * len(inputs)
    token = script_ops.register(_vjp(func, len(inputs), wanted, live), True)
    out = apply_op(script_ops.EagerPyFunc, [inputs + [grads[i] for i in live]],
                   {"token": token, "Tout": [inputs[i].dtype for i in wanted]}).outputs
    result = [None] * len(inputs)
    for k, i in enumerate(wanted):
        result[i] = out[k]
    return result
