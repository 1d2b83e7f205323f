"""`tf.linalg.logm`: the MatrixLogarithm op (kernels/matrix_logarithm.py), the principal
logarithm of each square matrix of a complex64/complex128 tensor [..., N, N].

As TF's, the op takes complex types only (a real matrix is rejected by the type check: cast it
to complex first) and has no registered gradient: differentiating through it raises
LookupError ("gradient registry has no entry for: MatrixLogarithm").
"""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import apply_op
from ndflow.ops.linalg_decomp import _square_shape
from ndflow.ops.op_def import op_def

MatrixLogarithm = op_def("MatrixLogarithm", inputs=["input: T"], outputs=["output: T"],
                         attrs=["T: {complex64, complex128}"], shape=_square_shape,
                         gradient_undefined=True)


@tf_export("linalg.logm")
def matrix_logarithm(input, name=None) -> Tensor:  # noqa: A002 - TF's name
    """`tf.linalg.logm`: the principal logarithm of each square matrix of `input`."""
    return apply_op(MatrixLogarithm, [input], name=name).outputs[0]
