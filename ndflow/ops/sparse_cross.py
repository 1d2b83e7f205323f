"""Feature crosses (TensorFlow's SparseCross / SparseCrossV2): `tf.sparse.cross` joins one
value of each input per row with a separator; `tf.sparse.cross_hashed` chains the values'
fingerprints (FarmHash Fingerprint64 of strings, int64 values as they are) with
FingerprintCat64 from `hash_key`, modulo `num_buckets`: the same ids as TensorFlow, bit for
bit. Inputs are rank-2 SparseTensors or dense tensors, int64 or string; the sparse ones come
first in the cross, then the dense ones (TensorFlow's order). Host kernel:
kernels/sparse_cross.py; tf.ragged.cross* in ragged_cross.py."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import tf_export
from ndflow.core.shapes import TensorShape
from ndflow.ops.apply import apply_op, convert_to_tensor
from ndflow.ops.cast import cast
from ndflow.ops.op_def import op_def
from ndflow.ops.sparse_tensor import SparseTensor

DEFAULT_HASH_KEY = 0xDECAFCAFFE
_OUT = ["output_indices: int64", "output_values: out_type", "output_shape: int64"]
_SHAPES = (lambda ctx: [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])])

SparseCross = op_def(
    "SparseCross", inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
                           "dense_inputs: dense_types"],
    outputs=_OUT,
    attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
           "sparse_types: list(type)", "dense_types: list(type)",
           "out_type: {int64, string}", "internal_type: {int64, string}"],
    shape=_SHAPES, gradient_undefined=True)

SparseCrossV2 = op_def(
    "SparseCrossV2", inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
                             "dense_inputs: dense_types", "sep: string"],
    outputs=["output_indices: int64", "output_values: string", "output_shape: int64"],
    attrs=["N: int >= 0", "sparse_types: list(type)", "dense_types: list(type)"],
    shape=_SHAPES, gradient_undefined=True)


def split_inputs(inputs):
    """(sparse inputs, dense inputs), integer values cast to int64 (TF's preparation)."""
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    sparse, dense = [], []
    for t in inputs:
        if isinstance(t, SparseTensor):
            values = t.values if t.dtype is dtypes.string else cast(t.values, dtypes.int64)
            sparse.append(SparseTensor(t.indices, values, t.dense_shape))
        else:
            t = convert_to_tensor(t)
            dense.append(t if t.dtype is dtypes.string else cast(t, dtypes.int64))
    return sparse, dense


def _operands(sparse, dense):
    return [[s.indices for s in sparse], [s.values for s in sparse],
            [s.dense_shape for s in sparse], dense]


@tf_export("sparse.cross")
def cross(inputs, name=None, separator=None):
    """Each row's combinations of one value per input, joined by `separator` ("_X_")."""
    sparse, dense = split_inputs(inputs)
    sep = convert_to_tensor("_X_" if separator is None else separator, dtypes.string)
    out = apply_op(SparseCrossV2, _operands(sparse, dense) + [sep],
                   name=name or "SparseCrossV2").outputs
    return SparseTensor(*out)


@tf_export("sparse.cross_hashed")
def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Each row's combinations of one value per input, as fingerprint-chained ids modulo
    `num_buckets` (0: modulo 2**63 - 1)."""
    sparse, dense = split_inputs(inputs)
    internal = dtypes.int64 if any(t.dtype is dtypes.int64 for t in
                                   [s.values for s in sparse] + dense) else dtypes.string
    attrs = {"hashed_output": True, "num_buckets": int(num_buckets),
             "hash_key": int(hash_key or DEFAULT_HASH_KEY), "out_type": dtypes.int64,
             "internal_type": internal}
    out = apply_op(SparseCross, _operands(sparse, dense), attrs,
                   name=name or "SparseCross").outputs
    return SparseTensor(*out)
