"""The op tags on OpDefs (ndflow/ops/op_def.py: POINTWISE, BROADCASTING, REDUCTION), which
tf.data's vectorization, the profiler's cost model and the arithmetic optimizer read instead of
tables of op names.

Each tag is checked by what it promises: a pointwise op run on a tensor gives, at each
position, what it gives for that element alone; a broadcasting op's operands broadcast as
NumPy's; the tags agree with TensorFlow's own XLA categories (ndflow/jit/fusible_ops.py holds
TF's table, which names ops as TF does and is not derived)."""

from __future__ import annotations

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import dtypes
from ndflow.jit.fusible_ops import CATEGORIES
from ndflow.ops.apply import apply_op
from ndflow.ops.op_def import BROADCASTING, POINTWISE, REDUCTION, lookup, tagged
from tests.conftest import NDFLOW_OP_NAMES  # ndflow's own ops (tests register more)

# In TF's "PW" category but not elementwise functions of their inputs' values: constants,
# layout ops, lists, a placeholder, a collective, and the v1 Select (a vector condition
# picks whole rows).
NOT_POINTWISE_IN_TF_PW = {"Const", "_EagerConst", "Empty", "IdentityN", "Transpose",
                          "ConjugateTranspose", "Bitcast", "PlaceholderWithDefault",
                          "CollectiveReduceV2", "CollectiveAssignGroupV2", "Select",
                          "_UnaryOpsComposition", "PreventGradient", "Snapshot"}

rng = np.random.default_rng(5)


def test_tags_agree_with_tensorflows_xla_categories():
    pw = {n for n in CATEGORIES["PW"] if n in NDFLOW_OP_NAMES} - NOT_POINTWISE_IN_TF_PW
    assert pw - set(tagged(POINTWISE)) == set()
    assert {n for n in CATEGORIES["RED"] if n in NDFLOW_OP_NAMES} == set(tagged(REDUCTION)) - {
        "ArgMax", "ArgMin"}                   # TF files the index reductions under PWRED
    assert {"ArgMax", "ArgMin"} <= CATEGORIES["PWRED"]


def test_broadcasting_implies_pointwise_and_unknown_tags_are_refused():
    assert set(tagged(BROADCASTING)) <= set(tagged(POINTWISE))
    assert all(len(lookup(n).inputs) >= 2 for n in tagged(BROADCASTING))
    assert "AddV2" in tagged(BROADCASTING) and "MatMul" not in tagged(POINTWISE)
    assert "NoSuchOp" not in tagged(POINTWISE)
    with pytest.raises(ValueError, match="unknown op tag"):
        tagged("elementwise")


def _dtype_for(op) -> dtypes.DType:
    """A dtype every input of `op` accepts: float32 where allowed, else int32, complex64,
    bool (the fixed-type inputs keep theirs)."""
    allowed = None
    for a in op.attrs.values():
        if a.kind == "type" and any(x.type_attr == a.name for x in op.inputs):
            allowed = a.allowed
            break
    for d in (dtypes.float32, dtypes.int32, dtypes.complex64, dtypes.bool):
        if allowed is None or d in allowed:
            return d
    return allowed[0]


def _values(dtype, shape, op_type: str) -> np.ndarray:
    if dtype == dtypes.bool:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        high = 4 if op_type in ("LeftShift", "RightShift") else 9
        return rng.integers(1, high, shape).astype(dtype.as_numpy_dtype)
    x = rng.uniform(0.2, 0.9, shape)
    if dtype.is_complex:
        x = x + 1j * rng.uniform(0.2, 0.9, shape)
    return x.astype(dtype.as_numpy_dtype)


def _run(op, arrays):
    inputs = []
    for arg, array in zip(op.inputs, arrays):
        inputs.append(tf.constant(array, arg.dtype or dtypes.as_dtype(array.dtype)))
    attrs = {a.name: inputs[0].dtype for a in op.attrs.values()
             if a.kind == "type" and not a.has_default
             and not any(x.type_attr == a.name for x in op.inputs)}   # Cast's DstT
    return apply_op(op, inputs, attrs).outputs[0].numpy()


def _inputs(op, shapes):
    dtype = _dtype_for(op)
    return [_values(arg.dtype or dtype, shape, op.name) for arg, shape in zip(op.inputs, shapes)]


POINTWISE_OPS = sorted(n for n in tagged(POINTWISE)
                       if n in NDFLOW_OP_NAMES and not lookup(n).inputs[0].is_list)


@pytest.mark.parametrize("name", POINTWISE_OPS)
def test_a_pointwise_op_at_each_position_is_the_op_of_that_element(name):
    """What tf.data's vectorization relies on: running the op on a stacked tensor equals
    running it on each element. Broadcasting ops get a (2, 1) and a (1, 3) operand and are
    checked against NumPy's broadcast of the per-element results."""
    op = lookup(name)
    broadcasting = name in tagged(BROADCASTING)
    shapes = [(2, 1) if i == 0 else (1, 3) for i in range(len(op.inputs))] if broadcasting \
        else [(2, 3)] * len(op.inputs)
    arrays = _inputs(op, shapes)
    if name == "SelectV2":
        arrays[0] = rng.random((2, 1)) < 0.5
    whole = _run(op, arrays)
    assert whole.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = [a[min(i, a.shape[0] - 1), min(j, a.shape[1] - 1)].reshape(()) for a in arrays]
            # (a kernel's vector and scalar paths may round the last bit differently)
            np.testing.assert_allclose(_run(op, one), whole[i, j], rtol=2e-6,
                                       err_msg=f"{name} {i},{j}")


def test_addn_is_pointwise_over_its_list():
    a, b = rng.random((2, 3)).astype(np.float32), rng.random((2, 3)).astype(np.float32)
    whole = tf.add_n([a, b]).numpy()
    assert "AddN" in tagged(POINTWISE)
    np.testing.assert_array_equal(whole, np.float32(a) + np.float32(b))


@pytest.mark.parametrize("name", sorted(n for n in tagged(REDUCTION) if n in NDFLOW_OP_NAMES))
def test_a_reduction_reduces_input_0_over_the_axes_of_input_1(name):
    op = lookup(name)
    assert [a.name for a in op.inputs][1] in ("reduction_indices", "dimension")
    x = _inputs(op, [(2, 3)])[0]
    out = _run(op, [x, np.array(1, np.int32)])
    assert out.shape == (2,)
