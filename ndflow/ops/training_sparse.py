"""Sparse training ops (TF's ResourceSparseApply*): the fused optimizer updates of
`ndflow.ops.training` applied to the rows `indices` of a variable and its slots only, so a
step on an embedding costs the rows it touched. `grad` holds one row per index; TF's
optimizers sum repeated indices first (`_resource_apply_sparse_duplicate_indices`)."""

from __future__ import annotations

from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.op_def import OpDef, op_def
from ndflow.ops.training import as_handle


def _shape_fn(grad_index: int):
    """Rank checks of grad (at least a vector) and indices (a vector), as TF's shape fns."""
    def shape(ctx):
        grad, idx = ctx.shapes[grad_index], ctx.shapes[grad_index + 1]
        if idx.rank not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {idx.rank}")
        if grad.rank == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
        return []
    return shape


def _declare(name: str, resources: list, scalars_before: list, scalars_after: list = (),
             extra_attrs=(), doc: str = "") -> OpDef:
    """`name(resources..., scalars_before..., grad, indices, scalars_after...)`."""
    args = [f"{r}: resource" for r in resources] + [f"{s}: T" for s in scalars_before]
    grad_index = len(args)
    args += ["grad: T", "indices: Tindices"] + [f"{s}: T" for s in scalars_after]
    return op_def(name, inputs=args, outputs=[],
                  attrs=["T: numbertype", "Tindices: {int32, int64}",
                         "use_locking: bool = false"] + list(extra_attrs),
                  shape=_shape_fn(grad_index), stateful=True, gradient_undefined=True,
                  doc=doc)


ResourceSparseApplyMomentum = _declare(
    "ResourceSparseApplyMomentum", ["var", "accum"], ["lr"], ["momentum"],
    ["use_nesterov: bool = false"],
    doc="accum[i] = accum[i] * momentum + grad; var[i] -= lr * accum[i] (Nesterov: var[i] -= "
        "grad * lr + accum[i] * momentum * lr)")

ResourceSparseApplyRMSProp = _declare(
    "ResourceSparseApplyRMSProp", ["var", "ms", "mom"], ["lr", "rho", "momentum", "epsilon"],
    doc="ms = rho ms + (1-rho) g^2; mom = momentum mom + lr g / sqrt(ms + epsilon); "
        "var -= mom (rows `indices`)")

ResourceSparseApplyCenteredRMSProp = _declare(
    "ResourceSparseApplyCenteredRMSProp", ["var", "mg", "ms", "mom"],
    ["lr", "rho", "momentum", "epsilon"],
    doc="mg = rho mg + (1-rho) g; ms = rho ms + (1-rho) g^2; mom = momentum mom + lr g / "
        "sqrt(ms - mg^2 + epsilon); var -= mom (rows `indices`)")

ResourceSparseApplyAdagradV2 = _declare(
    "ResourceSparseApplyAdagradV2", ["var", "accum"], ["lr", "epsilon"],
    extra_attrs=["update_slots: bool = true"],
    doc="accum += g^2 (if update_slots); var -= lr g / (sqrt(accum) + epsilon) (rows)")


# ndflow-internal (no TF op): Keras 3's Adam of an IndexedSlices gradient, which decays every
# row's moments and sums the slices' squares (not the square of their sum) into v
ResourceSparseApplyKerasAdam = _declare(
    "_ResourceSparseApplyKerasAdam", ["var", "m", "v"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"],
    doc="g = the rows' sums of grad, g2 = their sums of grad^2 (zero elsewhere); "
        "m += (g - m) * (1 - beta1); v += (g2 - v) * (1 - beta2); var -= m * lr_t / "
        "(sqrt(v) + epsilon), lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); "
        "every row")

def _run(op, resources, values, attrs, name):
    return apply_op(op, [as_handle(r) for r in resources] + list(values), attrs, name=name)


def _indices(indices):
    return convert_to_tensor(indices, name="indices")


def resource_sparse_apply_momentum(var, accum, lr, grad, indices, momentum,
                                   use_locking: bool = False, use_nesterov: bool = False,
                                   name: str | None = None):
    return _run(ResourceSparseApplyMomentum, [var, accum],
                [lr, grad, _indices(indices), momentum],
                {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def resource_sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking: bool = False, name: str | None = None):
    return _run(ResourceSparseApplyRMSProp, [var, ms, mom],
                [lr, rho, momentum, epsilon, grad, _indices(indices)],
                {"use_locking": use_locking}, name)


def resource_sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                                            indices, use_locking: bool = False,
                                            name: str | None = None):
    return _run(ResourceSparseApplyCenteredRMSProp, [var, mg, ms, mom],
                [lr, rho, momentum, epsilon, grad, _indices(indices)],
                {"use_locking": use_locking}, name)


def resource_sparse_apply_adagrad_v2(var, accum, lr, epsilon, grad, indices,
                                     use_locking: bool = False, update_slots: bool = True,
                                     name: str | None = None):
    return _run(ResourceSparseApplyAdagradV2, [var, accum],
                [lr, epsilon, grad, _indices(indices)],
                {"use_locking": use_locking, "update_slots": update_slots}, name)


def resource_sparse_apply_keras_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
                                     epsilon, grad, indices, name: str | None = None):
    return _run(ResourceSparseApplyKerasAdam, [var, m, v],
                [beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, _indices(indices)],
                {}, name or "ResourceSparseApplyKerasAdam")
