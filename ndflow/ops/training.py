"""Training ops: fused optimizer updates of resource variables (TF's `training_ops.cc`).

Each op reads a variable and its slot variables through their resource handles, computes
the update in one kernel and stores the new values; it has no outputs and is stateful
(TF: `ResourceApplyAdam` and friends). Names, input order and attrs are TensorFlow's; the
update formulas are documented on each op and implemented in `ndflow/kernels/training.py`.
"""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.shapes import TensorShape, fmt
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import OpDef, op_def
from ndflow.ops.state_sparse import handle_shape

_T_ATTRS = ["T: numbertype", "use_locking: bool = false"]


def merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's `InferenceContext::Merge`, with its error messages."""
    if a.rank is None:
        return b
    if b.rank is None:
        return a
    if a.rank != b.rank:
        raise ValueError(f"Shapes must be equal rank, but are {a.rank} and {b.rank}")
    for i, (x, y) in enumerate(zip(a.dims, b.dims)):
        if x is not None and y is not None and x != y:
            raise ValueError(f"Dimension {i} in both shapes must be equal, but are {x} and {y}."
                             f" Shapes are {fmt(a)} and {fmt(b)}.")
    return a.merge_with(b)


def _apply_shape_fn(n_resources: int, scalar_args: tuple, grad_index: int):
    """Shape rule of a dense apply op: slots match var, hyperparameters are scalars."""
    def shape_fn(ctx):
        inputs = ctx._inputs  # the input tensors (for the variables' handle shapes)
        if not hasattr(inputs[0], "op"):
            return []  # eager: the kernel checks the actual values, with TF's messages
        s = handle_shape(inputs[0])
        for i in range(1, n_resources):
            s = merge_shapes(s, handle_shape(inputs[i]))
        for i in scalar_args:
            if ctx.shapes[i].rank is not None and ctx.shapes[i].rank != 0:
                raise ValueError(f"Shape must be rank 0 but is rank {ctx.shapes[i].rank}")
        merge_shapes(s, ctx.shapes[grad_index])
        return []
    return shape_fn


def _declare(name: str, resources: list, scalars: list, grad: str, extra_attrs=(),
             grad_first: bool = False, doc: str = "") -> OpDef:
    """Declares `name(resources..., scalars..., grad)`; `grad_first` puts grad before scalars
    from the position TF uses (Momentum: lr, grad, momentum)."""
    args = [f"{r}: resource" for r in resources]
    order = list(scalars)
    if grad_first:
        order.insert(1, grad)
    else:
        order.append(grad)
    args += [f"{a}: T" for a in order]
    n = len(resources)
    scalar_idx = tuple(n + order.index(s) for s in scalars)
    grad_idx = n + order.index(grad)
    return op_def(name, inputs=args, outputs=[], attrs=_T_ATTRS + list(extra_attrs),
                  shape=_apply_shape_fn(n, scalar_idx, grad_idx), gradient_undefined=True,
                  stateful=True, doc=doc)


ResourceApplyGradientDescent = _declare(
    "ResourceApplyGradientDescent", ["var"], ["alpha"], "delta",
    doc="var -= alpha * delta")

ResourceApplyMomentum = _declare(
    "ResourceApplyMomentum", ["var", "accum"], ["lr", "momentum"], "grad",
    ["use_nesterov: bool = false"], grad_first=True,
    doc="accum = accum * momentum + grad; var -= lr * accum "
        "(nesterov: var -= grad * lr + accum * momentum * lr)")

ResourceApplyKerasMomentum = _declare(
    "ResourceApplyKerasMomentum", ["var", "accum"], ["lr", "momentum"], "grad",
    ["use_nesterov: bool = false"], grad_first=True,
    doc="accum = accum * momentum - lr * grad; var += accum "
        "(nesterov: var += accum * momentum - lr * grad)")

ResourceApplyAdam = _declare(
    "ResourceApplyAdam", ["var", "m", "v"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"], "grad",
    ["use_nesterov: bool = false"],
    doc="lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) * (1 - beta1);"
        " v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon) (nesterov:"
        " var -= lr_t * (grad * (1 - beta1) + beta1 * m) / (sqrt(v) + epsilon))")

ResourceApplyAdamWithAmsgrad = _declare(
    "ResourceApplyAdamWithAmsgrad", ["var", "m", "v", "vhat"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"], "grad",
    doc="As ResourceApplyAdam with vhat = max(vhat, v) in the denominator.")

ResourceApplyRMSProp = _declare(
    "ResourceApplyRMSProp", ["var", "ms", "mom"], ["lr", "rho", "momentum", "epsilon"], "grad",
    doc="ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / "
        "sqrt(ms + epsilon); var -= mom")

ResourceApplyCenteredRMSProp = _declare(
    "ResourceApplyCenteredRMSProp", ["var", "mg", "ms", "mom"],
    ["lr", "rho", "momentum", "epsilon"], "grad",
    doc="mg = rho * mg + (1 - rho) * grad; ms = rho * ms + (1 - rho) * grad^2; mom = momentum"
        " * mom + lr * grad / sqrt(ms - mg^2 + epsilon); var -= mom")


# -- wrappers (TF's gen_training_ops signatures) ----------------------------------------------


def as_handle(var):
    """A Variable's resource handle; resource tensors pass through."""
    if isinstance(var, Tensor):
        if var.dtype is not dtypes.resource:
            raise TypeError(f"Expected a resource handle or a resource variable, got a tensor "
                            f"of dtype {var.dtype.name}.")
        return var
    handle = getattr(var, "handle", None)
    if handle is None:
        raise TypeError(f"Expected a resource variable, got {type(var).__name__}.")
    return handle


def _run(op: OpDef, resources, scalars, attrs, name):
    return apply_op(op, [as_handle(r) for r in resources] + list(scalars), attrs, name=name)


def resource_apply_gradient_descent(var, alpha, delta, use_locking: bool = False,
                                    name: str | None = None):
    return _run(ResourceApplyGradientDescent, [var], [alpha, delta],
                {"use_locking": use_locking}, name)


def resource_apply_momentum(var, accum, lr, grad, momentum, use_locking: bool = False,
                            use_nesterov: bool = False, name: str | None = None):
    return _run(ResourceApplyMomentum, [var, accum], [lr, grad, momentum],
                {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def resource_apply_keras_momentum(var, accum, lr, grad, momentum, use_locking: bool = False,
                                  use_nesterov: bool = False, name: str | None = None):
    return _run(ResourceApplyKerasMomentum, [var, accum], [lr, grad, momentum],
                {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def resource_apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
                        use_locking: bool = False, use_nesterov: bool = False,
                        name: str | None = None):
    return _run(ResourceApplyAdam, [var, m, v],
                [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad],
                {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def resource_apply_adam_with_amsgrad(var, m, v, vhat, beta1_power, beta2_power, lr, beta1,
                                     beta2, epsilon, grad, use_locking: bool = False,
                                     name: str | None = None):
    return _run(ResourceApplyAdamWithAmsgrad, [var, m, v, vhat],
                [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad],
                {"use_locking": use_locking}, name)


def resource_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking: bool = False, name: str | None = None):
    return _run(ResourceApplyRMSProp, [var, ms, mom], [lr, rho, momentum, epsilon, grad],
                {"use_locking": use_locking}, name)


def resource_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                                     use_locking: bool = False, name: str | None = None):
    return _run(ResourceApplyCenteredRMSProp, [var, mg, ms, mom],
                [lr, rho, momentum, epsilon, grad], {"use_locking": use_locking}, name)
