"""ATen kernels for MatMul and BatchMatMulV2 (transposes are views, not copies); float32
products with one matrix operand go through kernels/gemm.py's per-shape library choice, of
batches of matrices through kernels/batched_gemm.py's."""

from __future__ import annotations

from ndflow.kernels import batched_gemm, gemm
from ndflow.kernels.registry import kernel
from ndflow.ops import linalg


@kernel(linalg.MatMul)
def _matmul(node):
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    return gemm.Linear(a_transposed=ta, w_transposed=not tb)


@kernel(linalg.BatchMatMulV2)
def _batch_matmul(node):
    adj_x, adj_y = node.attrs["adj_x"], node.attrs["adj_y"]

    def batch_matmul(x, y):
        # .mH: the adjoint (conjugate transpose; the transpose of a real matrix)
        x = x.mH if adj_x else x
        if y.dim() == 2 and x.dim() >= 2:     # one matrix for every batch: a single product
            return gemm.linear(x, y.conj() if adj_y else y.t())
        return batched_gemm.matmul(x, y.mH if adj_y else y)
    return batch_matmul
