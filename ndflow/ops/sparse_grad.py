"""Gradients of the sparse ops (TensorFlow's sparse_grad.py)."""

from __future__ import annotations

from ndflow.ops.arithmetic import subtract
from ndflow.ops.array_nd import gather_nd
from ndflow.ops.reduction import reduce_sum
from ndflow.ops.sparse_tensor import SparseToDense


@SparseToDense.def_grad
def _sparse_to_dense_grad(op, grad):
    # Each listed value lands at its index; every other output element is the default.
    sparse_indices = op.inputs[0]
    values_grad = gather_nd(grad, sparse_indices)
    default_grad = subtract(reduce_sum(grad), reduce_sum(values_grad))
    return [None, None, values_grad, default_grad]
