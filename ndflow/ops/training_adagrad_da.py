"""AdagradDA's fused updates (TF's ResourceApplyAdagradDA / ResourceSparseApplyAdagradDA,
`training_ops.cc`); kernels in ndflow/kernels/training_adagrad_da.py.

    g_acc += grad; gg_acc += grad^2               (T = global_step, an int64 scalar)
    l1 > 0:  var = lr sign(-g_acc) max(|g_acc| - l1 T, 0) / (l2 T lr + sqrt(gg_acc))
    else:    var = -lr g_acc / (l2 T lr + sqrt(gg_acc))

The sparse op does this on the rows `indices` of the three variables.
"""

from __future__ import annotations

from ndflow.ops.op_def import op_def
from ndflow.ops.training import _T_ATTRS, _apply_shape_fn, _run
from ndflow.ops.training_sparse import _indices, _shape_fn

_SLOTS = ["var: resource", "gradient_accumulator: resource",
          "gradient_squared_accumulator: resource"]
_HYPER = ["lr: T", "l1: T", "l2: T", "global_step: int64"]

ResourceApplyAdagradDA = op_def(
    "ResourceApplyAdagradDA", inputs=_SLOTS + ["grad: T"] + _HYPER, outputs=[],
    attrs=list(_T_ATTRS), shape=_apply_shape_fn(3, (4, 5, 6, 7), 3),
    gradient_undefined=True, stateful=True)

ResourceSparseApplyAdagradDA = op_def(
    "ResourceSparseApplyAdagradDA", inputs=_SLOTS + ["grad: T", "indices: Tindices"] + _HYPER,
    outputs=[], attrs=["T: numbertype", "Tindices: {int32, int64}",
                       "use_locking: bool = false"],
    shape=_shape_fn(3), gradient_undefined=True, stateful=True)


def resource_apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad,
                              lr, l1, l2, global_step, use_locking=False, name=None):
    return _run(ResourceApplyAdagradDA, [var, gradient_accumulator,
                                         gradient_squared_accumulator],
                [grad, lr, l1, l2, global_step], {"use_locking": use_locking}, name)


def resource_sparse_apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator,
                                     grad, indices, lr, l1, l2, global_step, use_locking=False,
                                     name=None):
    return _run(ResourceSparseApplyAdagradDA, [var, gradient_accumulator,
                                               gradient_squared_accumulator],
                [grad, _indices(indices), lr, l1, l2, global_step],
                {"use_locking": use_locking}, name)
