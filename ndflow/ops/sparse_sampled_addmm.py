"""`tf.sparse.sampled_addmm`: alpha * (mat1 @ mat2) sampled at a sparse pattern's indices plus
beta * its values (TensorFlow writes it in Python on gather_nd; the gradients follow)."""

from __future__ import annotations

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import reshape
from ndflow.ops.array_gather import gather
from ndflow.ops.array_range import range as tf_range
from ndflow.ops.linalg_extra import matrix_transpose
from ndflow.ops.reduction import reduce_sum


@tf_export("sparse.sampled_addmm", v1=[])
def sampled_addmm(indices, values, dense_shape, mat1, mat2, beta=1.0, alpha=1.0,
                  output_type=dtypes.float32):
    """(indices, alpha * <mat1 row, mat2 column> + beta * values, dense_shape) for each index
    (row, column), batched over the matrices' leading dimensions."""
    indices = convert_to_tensor(indices)
    values = convert_to_tensor(values, output_type)
    dense_shape = convert_to_tensor(dense_shape, dtypes.int32)
    mat1 = convert_to_tensor(mat1, output_type)
    mat2 = convert_to_tensor(mat2, output_type)
    rows_n, cols_n = mat1.shape.as_list()[-2], mat2.shape.as_list()[-1]
    known = getattr(dense_shape, "numpy", None)
    if known is not None and rows_n is not None and cols_n is not None:
        want = np.asarray(known()).reshape(-1)
        if want.tolist() != [rows_n, cols_n]:
            raise ValueError(f"Dense shape: {want} does not match output shape: "
                             f"{np.array([rows_n, cols_n])}")
    if mat1.shape.rank == 2:
        rows = gather(mat1, indices[..., 0])
        cols = gather(matrix_transpose(mat2), indices[..., 1])
    else:   # batched: gather from the matrices with their batch dimensions flattened
        rows = _batched_rows(mat1, indices[..., 0])
        cols = _batched_rows(matrix_transpose(mat2), indices[..., 1])
    dot = reduce_sum(rows * cols, axis=-1)
    return indices, dot * alpha + values * beta, dense_shape


def _batched_rows(mat, row_ids):
    """mat[..., row_ids[..., n], :] per batch: mat [*batch, M, K], row_ids [*batch, N]."""
    dims = mat.shape.as_list()
    if any(d is None for d in dims):
        raise NotImplementedError("sampled_addmm of batched matrices needs static shapes")
    batch, m, k = int(np.prod(dims[:-2])), dims[-2], dims[-1]
    ids = reshape(row_ids, [batch, -1])
    flat_ids = ids + reshape(tf_range(batch, dtype=ids.dtype) * m, [batch, 1])
    picked = gather(reshape(mat, [batch * m, k]), flat_ids)
    return reshape(picked, dims[:-2] + [-1, k])
