"""`tf.edit_distance`: the Levenshtein distance between the sequences of two SparseTensors
(each sequence: the values along the last dimension at one index prefix), as TensorFlow's
EditDistance op; normalized by the truth's length (inf for a non-empty hypothesis against an
empty truth, 0 for two empty ones). Not differentiable."""

from __future__ import annotations

from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor, SparseTensorValue

EditDistance = op_def(
    "EditDistance",
    inputs=["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
            "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
    outputs=["output: float"], attrs=["normalize: bool = true", "T: type"],
    shape=lambda ctx: [TensorShape(None)], not_differentiable=True)


@tf_export("edit_distance", v1=["edit_distance"])
def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """The Levenshtein distance between sequences given as SparseTensors.

    Each sequence is one row (the last dimension) of `hypothesis` and `truth`.

    Args:
      hypothesis: a SparseTensor of hypothesis sequences.
      truth: a SparseTensor of reference sequences, of the same rank.
      normalize: if True, divide each distance by the length of its truth sequence.
      name: optional name for the operation.

    Returns:
      A float32 tensor shaped as the larger of the two dense shapes without the last dimension.

    Raises:
      TypeError: if an argument is not a SparseTensor.

    Example:
      >>> h = tf.sparse.SparseTensor([[0, 0]], ["a"], [1, 1])
      >>> t = tf.sparse.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
      >>> tf.edit_distance(h, t).numpy()
      array([0.5], dtype=float32)
    """
    sparse = (SparseTensor, SparseTensorValue)
    if not isinstance(hypothesis, sparse):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, sparse):
        raise TypeError("Truth must be a SparseTensor.")
    return apply_op(EditDistance, [hypothesis.indices, hypothesis.values,
                                   hypothesis.dense_shape, truth.indices, truth.values,
                                   truth.dense_shape], {"normalize": normalize},
                    name=name).outputs[0]
