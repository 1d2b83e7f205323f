"""SparseConditionalAccumulator's shape rules, as TF 2.21's kernel: the declared shape bounds
only a gradient's leading dims (`shape=()`, what SyncReplicasOptimizer declares for
IndexedSlices gradients, takes any rank), later gradients must match the accumulated values,
and the taken dense shape is the declared first dim then the values' dims. Expected results:
TF's, with the cases' inputs, in tests/fixtures/sparse_accumulator_shapes (generate.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "sparse_accumulator_shapes",
                       "expected.json")) as _f:
    EXPECTED = json.load(_f)["cases"]


def _run(shape, grads):
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        kw = {} if shape is None else {"shape": shape}
        acc = v1.SparseConditionalAccumulator(tf.float32, **kw)
        ops = [acc.apply_grad(tf.constant(i, tf.int64), np.asarray(v, np.float32), grad_shape=s)
               for i, v, s in grads]
        take = acc.take_grad(1)
        with v1.Session() as sess:
            try:
                for op in ops:
                    sess.run(op)
                idx, val, dense = sess.run(take)
            except tf.errors.OpError as e:
                lines = [t for t in e.message.split("\n") if t and not t.startswith("\t [[")]
                return {"error": [type(e).__name__, lines[-1]]}
    return {"indices": idx.tolist(), "values": val.tolist(), "shape": dense.tolist()}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shape_rules_are_tensorflows(name):
    case = EXPECTED[name]
    assert _run(case["shape"], case["grads"]) == case["result"]
