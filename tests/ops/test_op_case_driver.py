"""The op-case driver's pipeline mode really runs the passes (so it cannot turn into a plain
graph run unnoticed), and a bad result fails it."""

import numpy as np
import pytest

import ndflow as tf
from tests.ops.harness import OpCase, check_pipeline, pipeline_session_config, run_pipeline

_X = np.random.default_rng(0).uniform(-1, 1, (3, 4))
EXP = OpCase("exp", tf.exp, [_X], np.exp)
MATMUL = OpCase("matmul", lambda a: tf.matmul(a, a, transpose_b=True), [_X],
                lambda a: a @ a.T)


def test_constant_inputs_are_folded():
    config = pipeline_session_config(bfloat16=False)
    got, graph = run_pipeline(EXP, tf.float32, config, constants=True)
    types = {op.type for op in graph.get_operations()}
    assert "Const" in types and types <= {"Const", "Identity"}
    np.testing.assert_allclose(got[0], np.exp(_X), rtol=1e-6)


def test_bfloat16_rewrite_converts_an_allow_list_op():
    got, graph = run_pipeline(MATMUL, tf.float32, pipeline_session_config(bfloat16=True))
    matmul = next(op for op in graph.get_operations() if op.type == "MatMul")
    assert matmul.get_attr("T") == tf.bfloat16
    assert not np.allclose(got[0], _X @ _X.T, rtol=1e-6, atol=0)  # rounded to bfloat16
    np.testing.assert_allclose(got[0], _X @ _X.T, rtol=4e-2, atol=4e-2)


def test_a_wrong_result_fails_the_pipeline_check():
    with pytest.raises(AssertionError, match="exp constant inputs"):
        check_pipeline(OpCase("exp", tf.exp, [_X], lambda x: np.exp(x) + 1e-3))
