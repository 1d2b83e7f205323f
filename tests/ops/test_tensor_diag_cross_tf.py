"""tf.linalg.tensor_diag / tensor_diag_part / cross against TensorFlow 2.21
(tests/fixtures/tf_tensor_diag_cross, generate.py beside it): outputs exactly (float, integer
and wrapping uint8 cases), gradients, static shapes of graph builds, and TF's errors eager
and in graphs; gradients also by finite differences in float64."""

import json
import os
import re

import numpy as np
import pytest

import ndflow as tf
from tests.fixtures.tf_tensor_diag_cross.cases import BAD, CASES, SPECS, inputs

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_tensor_diag_cross")
EXPECTED = np.load(os.path.join(HERE, "expected.npz"))
META = json.load(open(os.path.join(HERE, "expected.json")))
FUNCTIONS = {"diag": tf.linalg.tensor_diag, "diag_part": tf.linalg.tensor_diag_part,
             "cross": tf.linalg.cross}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("traced", [False, True])
def test_outputs_and_gradients_equal_tensorflow(case, traced):
    fn = FUNCTIONS[CASES[case][0]]
    args = [tf.constant(a) for a in inputs(case)]
    call = tf.function(fn) if traced else fn
    with tf.GradientTape() as tape:
        tape.watch(args)
        y = call(*args)
        weights = np.random.RandomState(7).uniform(0.5, 1.5, y.shape).astype(
            y.dtype.as_numpy_dtype)
        loss = tf.reduce_sum(y * weights) if y.dtype.is_floating else None
    np.testing.assert_array_equal(y.numpy(), EXPECTED[f"{case}/y"])
    assert y.dtype.as_numpy_dtype == EXPECTED[f"{case}/y"].dtype
    if loss is not None:
        for i, g in enumerate(tape.gradient(loss, args)):
            np.testing.assert_allclose(g.numpy(), EXPECTED[f"{case}/grad{i}"], rtol=1e-6)


def _core(kind: str, msg: str) -> str:
    """The op's own words: an eager error's text between the function node and [Op:...], a
    graph build's before its node description."""
    if kind == "ValueError":
        msg = msg.split("ValueError: ", 1)[-1]
        return msg.split(" for '{{node", 1)[0]
    return re.sub(r"^\{\{function_node [^}]*\}\} ", "", msg).split(" [Op:", 1)[0]


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_errors_are_tensorflows(case, mode):
    fn, shapes, dtype = BAD[case]
    kind, msg = META["errors"][f"{case}/{mode}"]
    with pytest.raises(getattr(tf.errors, kind, ValueError)) as info:
        if mode == "eager":
            FUNCTIONS[fn](*[tf.zeros(s, dtype) for s in shapes])
        else:
            tf.function(FUNCTIONS[fn]).get_concrete_function(
                *[tf.TensorSpec(s, dtype) for s in shapes])
    assert type(info.value).__name__ == kind
    assert _core(kind, str(info.value)) == _core(kind, msg)


@pytest.mark.parametrize("case", sorted(SPECS))
def test_static_shapes_are_tensorflows(case):
    fn, specs = SPECS[case]
    cf = tf.function(FUNCTIONS[fn]).get_concrete_function(
        *[tf.TensorSpec(s, tf.float32) for s in specs])
    shape = cf.structured_outputs.shape
    assert (shape.as_list() if shape.rank is not None else None) == META["shapes"][case]


def test_gradients_by_finite_differences():
    rng = np.random.RandomState(0)
    for fn, shapes in (("diag", [(2, 3)]), ("diag_part", [(2, 3, 2, 3)]),
                       ("cross", [(4, 3), (4, 3)])):
        args = [tf.constant(rng.uniform(-1, 1, s)) for s in shapes]
        theoretical, numerical = tf.test.compute_gradient(FUNCTIONS[fn], args)
        for t, n in zip(theoretical, numerical):
            np.testing.assert_allclose(t, n, atol=1e-8)


def test_tf1_names_and_scalar_diag_part():
    assert tf.compat.v1.diag is tf.linalg.tensor_diag
    assert tf.compat.v1.diag_part is tf.linalg.tensor_diag_part
    assert tf.compat.v1.cross is tf.linalg.cross
    # TF's kernel takes a scalar (rank 0 is even) and returns it
    assert tf.linalg.tensor_diag_part(5.0).numpy() == 5.0
