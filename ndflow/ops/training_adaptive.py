"""The fused updates of TF1's Adagrad, Adadelta, FTRL and proximal optimizers, dense and on
rows (`indices`), with TensorFlow's op names, input orders and attrs (`training_ops.cc`);
kernels in ndflow/kernels/training_adaptive.py.

    Adagrad:           accum += g^2 (update_slots); var -= lr * g / sqrt(accum)
    Adadelta:          accum = rho accum + (1-rho) g^2;
                       update = sqrt(accum_update + eps) / sqrt(accum + eps) * g;
                       accum_update = rho accum_update + (1-rho) update^2; var -= lr * update
    ProximalGD:        prox = var - alpha g; var = sign(prox) max(|prox| - alpha l1, 0) /
                       (1 + alpha l2)
    ProximalAdagrad:   accum += g^2; lr_t = lr / sqrt(accum); then ProximalGD with lr_t
    Ftrl (V2):         g' = g + 2 l2_shrinkage var (V2); n = accum + g^2;
                       linear += g' - (n^-p - accum^-p) / lr * var;
                       var = |linear| > l1 ? (sign(linear) l1 - linear) / (n^-p / lr + 2 l2) : 0;
                       accum = n                                        (p = lr_power)
"""

from __future__ import annotations

from ndflow.ops.op_def import op_def
from ndflow.ops.training import _T_ATTRS, _apply_shape_fn, _declare, _run
from ndflow.ops.training_sparse import _declare as _declare_sparse
from ndflow.ops.training_sparse import _indices
from ndflow.ops.training_sparse import _run as _run_sparse

_UPDATE_SLOTS = ["update_slots: bool = true"]
_FTRL_ATTRS = ["multiply_linear_by_lr: bool = false"]

ResourceApplyAdagrad = _declare("ResourceApplyAdagrad", ["var", "accum"], ["lr"], "grad",
                                _UPDATE_SLOTS)
ResourceApplyAdadelta = _declare("ResourceApplyAdadelta", ["var", "accum", "accum_update"],
                                 ["lr", "rho", "epsilon"], "grad")
ResourceApplyProximalGradientDescent = _declare(
    "ResourceApplyProximalGradientDescent", ["var"], ["alpha", "l1", "l2"], "delta")
ResourceApplyProximalAdagrad = _declare("ResourceApplyProximalAdagrad", ["var", "accum"],
                                        ["lr", "l1", "l2"], "grad")


def _ftrl(name: str, scalars: list):
    """FTRL's dense op: the gradient comes before the hyperparameters."""
    args = ["var: resource", "accum: resource", "linear: resource", "grad: T"]
    args += [f"{s}: T" for s in scalars]
    return op_def(name, inputs=args, outputs=[], attrs=_T_ATTRS + _FTRL_ATTRS,
                  shape=_apply_shape_fn(3, tuple(range(4, 4 + len(scalars))), 3),
                  gradient_undefined=True, stateful=True)


ResourceApplyFtrl = _ftrl("ResourceApplyFtrl", ["lr", "l1", "l2", "lr_power"])
ResourceApplyFtrlV2 = _ftrl("ResourceApplyFtrlV2", ["lr", "l1", "l2", "l2_shrinkage",
                                                    "lr_power"])

ResourceSparseApplyAdagrad = _declare_sparse("ResourceSparseApplyAdagrad", ["var", "accum"],
                                             ["lr"], extra_attrs=_UPDATE_SLOTS)
ResourceSparseApplyAdadelta = _declare_sparse(
    "ResourceSparseApplyAdadelta", ["var", "accum", "accum_update"], ["lr", "rho", "epsilon"])
ResourceSparseApplyProximalGradientDescent = _declare_sparse(
    "ResourceSparseApplyProximalGradientDescent", ["var"], ["alpha", "l1", "l2"])
ResourceSparseApplyProximalAdagrad = _declare_sparse(
    "ResourceSparseApplyProximalAdagrad", ["var", "accum"], ["lr", "l1", "l2"])
ResourceSparseApplyFtrl = _declare_sparse(
    "ResourceSparseApplyFtrl", ["var", "accum", "linear"], [], ["lr", "l1", "l2", "lr_power"],
    extra_attrs=_FTRL_ATTRS)
ResourceSparseApplyFtrlV2 = _declare_sparse(
    "ResourceSparseApplyFtrlV2", ["var", "accum", "linear"], [],
    ["lr", "l1", "l2", "l2_shrinkage", "lr_power"], extra_attrs=_FTRL_ATTRS)


def _locking(use_locking: bool) -> dict:
    return {"use_locking": use_locking}


def resource_apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True,
                           name=None):
    return _run(ResourceApplyAdagrad, [var, accum], [lr, grad],
                {"use_locking": use_locking, "update_slots": update_slots}, name)


def resource_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False,
                            name=None):
    return _run(ResourceApplyAdadelta, [var, accum, accum_update], [lr, rho, epsilon, grad],
                _locking(use_locking), name)


def resource_apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False,
                                             name=None):
    return _run(ResourceApplyProximalGradientDescent, [var], [alpha, l1, l2, delta],
                _locking(use_locking), name)


def resource_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    return _run(ResourceApplyProximalAdagrad, [var, accum], [lr, l1, l2, grad],
                _locking(use_locking), name)


def resource_apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=None,
                        use_locking=False, name=None):
    """ResourceApplyFtrl, or ResourceApplyFtrlV2 when `l2_shrinkage` is given."""
    if l2_shrinkage is None:
        return _run(ResourceApplyFtrl, [var, accum, linear], [grad, lr, l1, l2, lr_power],
                    _locking(use_locking), name)
    return _run(ResourceApplyFtrlV2, [var, accum, linear],
                [grad, lr, l1, l2, l2_shrinkage, lr_power], _locking(use_locking), name)


def resource_sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False,
                                  update_slots=True, name=None):
    return _run_sparse(ResourceSparseApplyAdagrad, [var, accum], [lr, grad, _indices(indices)],
                       {"use_locking": use_locking, "update_slots": update_slots}, name)


def resource_sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices,
                                   use_locking=False, name=None):
    return _run_sparse(ResourceSparseApplyAdadelta, [var, accum, accum_update],
                       [lr, rho, epsilon, grad, _indices(indices)], _locking(use_locking), name)


def resource_sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices,
                                                    use_locking=False, name=None):
    return _run_sparse(ResourceSparseApplyProximalGradientDescent, [var],
                       [alpha, l1, l2, grad, _indices(indices)], _locking(use_locking), name)


def resource_sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices,
                                           use_locking=False, name=None):
    return _run_sparse(ResourceSparseApplyProximalAdagrad, [var, accum],
                       [lr, l1, l2, grad, _indices(indices)], _locking(use_locking), name)


def resource_sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power,
                               l2_shrinkage=None, use_locking=False, name=None):
    if l2_shrinkage is None:
        return _run_sparse(ResourceSparseApplyFtrl, [var, accum, linear],
                           [grad, _indices(indices), lr, l1, l2, lr_power],
                           _locking(use_locking), name)
    return _run_sparse(ResourceSparseApplyFtrlV2, [var, accum, linear],
                       [grad, _indices(indices), lr, l1, l2, l2_shrinkage, lr_power],
                       _locking(use_locking), name)
