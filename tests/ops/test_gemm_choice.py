"""Float32 products on either GEMM library (kernels/gemm.py): MatMul with every transpose,
_FusedMatMul's bias and activation, BatchMatMulV2 with one matrix for every batch, and the
einsums that are one matrix product, each forced onto ATen's kernel and onto oneDNN's (plain
products also onto oneDNN's of the transpose),
against NumPy in float64, gradients included; the per-shape choice by timing."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import autotune, gemm
from ndflow.kernels import einsum as einsum_kernels

RNG = np.random.default_rng(0)


def _gemm_choices() -> set:
    return {chosen for key, chosen in autotune.choices().items() if key[0] == "gemm"}


def _check(got, want, rtol=2e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=rtol)


def _checked_matmul(a, b, ta: bool, tb: bool) -> tuple:
    """tf.matmul of a and b (float64 NumPy, given transposed where asked) and its gradients
    against NumPy in float64; returns the float32 operands."""
    a_in, b_in = (a.T if ta else a), (b.T if tb else b)
    g = RNG.standard_normal((a.shape[0], b.shape[1]))
    x, y = tf.constant(a_in, tf.float32), tf.constant(b_in, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
    da, db = tape.gradient(out, [x, y], output_gradients=tf.constant(g, tf.float32))
    _check(out.numpy(), a @ b)
    _check(da.numpy(), (g @ b.T).T if ta else g @ b.T)
    _check(db.numpy(), (a.T @ g).T if tb else a.T @ g)
    return x, y


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_and_its_gradients(ta, tb, plain_gemm_algorithm):
    _checked_matmul(RNG.standard_normal((24, 40)), RNG.standard_normal((40, 16)), ta, tb)
    assert _gemm_choices() == {plain_gemm_algorithm}


_ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda v: np.maximum(v, 0)),
    "relu6": (tf.nn.relu6, lambda v: np.clip(v, 0, 6)),
    "leaky_relu": (lambda v: tf.nn.leaky_relu(v, 0.3), lambda v: np.where(v > 0, v, 0.3 * v)),
    "elu": (tf.nn.elu, lambda v: np.where(v > 0, v, np.expm1(v))),    # no oneDNN post-op
}


@pytest.mark.parametrize("activation", sorted(_ACTIVATIONS))
def test_fused_matmul_bias_and_activation_in_a_graph(activation, gemm_library):
    """_FusedMatMul: on oneDNN the activation is its post-op where it has one (Relu, Relu6,
    LeakyRelu), else applied after the product, as on ATen."""
    a, w, bias = (RNG.standard_normal(s) * 3 for s in ((32, 50), (50, 20), (20,)))
    act, reference = _ACTIVATIONS[activation]

    @tf.function
    def dense(x):
        return act(tf.nn.bias_add(tf.matmul(x, tf.constant(w, tf.float32)),
                                  tf.constant(bias, tf.float32)))
    graph = dense.get_concrete_function(tf.TensorSpec([32, 50], tf.float32))
    assert "_FusedMatMul" in {op.type for op in graph.optimized_graph().get_operations()}
    _check(graph(tf.constant(a, tf.float32)).numpy(), reference(a @ w + bias), rtol=1e-4)
    assert _gemm_choices() == {gemm_library}


@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
def test_batch_matmul_with_one_matrix(adj_x, adj_y, gemm_library):
    x, w = RNG.standard_normal((3, 7, 12)), RNG.standard_normal((12, 5))
    x_in = np.swapaxes(x, 1, 2) if adj_x else x          # the kernel reads x.mH: a strided view
    y = tf.linalg.matmul(tf.constant(x_in, tf.float32),
                         tf.constant(w.T if adj_y else w, tf.float32), adjoint_a=adj_x,
                         adjoint_b=adj_y)
    assert y.shape == (3, 7, 5)
    _check(y.numpy(), x @ w)
    assert _gemm_choices() == {gemm_library}


@pytest.mark.parametrize("equation,shapes", [
    ("abc,cde->abde", ((3, 4, 5), (5, 2, 6))),      # Keras' EinsumDense (query projection)
    ("abc,abde->cde", ((3, 4, 5), (3, 4, 2, 6))),   # its kernel's gradient
    ("abde,cde->abc", ((3, 4, 2, 6), (5, 2, 6))),   # its input's gradient
    ("ij,jk->ki", ((3, 4), (4, 5))),                 # a transposed result
    ("abcd,cde->abe", ((2, 3, 4, 5), (4, 5, 6))),   # the output projection
])
def test_einsums_that_are_one_product(equation, shapes, plain_gemm_algorithm):
    assert einsum_kernels._matrix_product(equation) is not None
    a, b = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    x, y = tf.constant(a, tf.float32), tf.constant(b, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = tf.einsum(equation, x, y)
    g = RNG.standard_normal(out.shape)
    dx, dy = tape.gradient(out, [x, y], output_gradients=tf.constant(g, tf.float32))
    _check(out.numpy(), np.einsum(equation, a, b))
    ins, res = equation.split("->")
    lhs, rhs = ins.split(",")
    _check(dx.numpy(), np.einsum(f"{res},{rhs}->{lhs}", g, b))
    _check(dy.numpy(), np.einsum(f"{lhs},{res}->{rhs}", a, g))
    assert _gemm_choices() == {plain_gemm_algorithm}


@pytest.mark.parametrize("equation", [
    "ij,j->i",           # no column label
    "...ij,jk->...ik",   # an ellipsis
    "iij,jk->ik",        # a repeated label
    "ij,kl->ijkl",       # nothing contracted
    "ij,jk,kl->il",      # three operands
    "ij,jk->i",          # a label summed within one operand
])
def test_other_einsums_keep_torch_einsum(equation):
    assert einsum_kernels._matrix_product(equation) is None


def test_other_dtypes_and_empty_operands_run_aten(gemm_library):
    a, b = RNG.standard_normal((16, 8)), RNG.standard_normal((8, 4))
    _check(tf.matmul(tf.constant(a), tf.constant(b)).numpy(), a @ b, rtol=1e-12)   # float64
    empty = tf.matmul(tf.zeros((0, 8)), tf.constant(b, tf.float32))
    assert empty.shape == (0, 4)
    assert _gemm_choices() == set()


def test_mismatched_einsum_operands_fail_as_before():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.einsum("abc,cde->abde", tf.zeros((2, 3, 4)), tf.zeros((5, 2, 2)))


def test_library_and_linear_share_one_timing(gemm_library, monkeypatch):
    """An op that asks which library is faster (a fused update) and then multiplies with it
    times the shape once."""
    timed = []
    real = autotune._timed
    monkeypatch.setattr(autotune, "_timed", lambda run, algorithm, credit=None: (
        timed.append(algorithm), real(run, algorithm, credit))[1])
    a, w = torch.randn(64, 96), torch.randn(32, 96)
    assert gemm.library(a, w) == gemm_library
    n = len(timed)
    assert n and gemm.linear(a, w).shape == (64, 32) and len(timed) == n


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_products_over_one_term_as_outer_products(ta, tb, monkeypatch):
    """K = 1 (a Dense(1) head's input gradient [B, 1] x [1, D]) runs as a broadcast multiply,
    not a GEMM: values, the fused bias and activation, and the gradients (whose products have
    K = B) against NumPy in float64; a [B, D] x [D, 1] product stays a GEMM."""
    a, b = RNG.standard_normal((64, 1)), RNG.standard_normal((1, 300))
    bias = RNG.standard_normal(300)
    outer = []
    real = gemm._outer
    monkeypatch.setattr(gemm, "_outer", lambda *args: outer.append(args[0].shape) or real(*args))
    x, y = _checked_matmul(a, b, ta, tb)
    assert outer == [(64, 1)]   # the forward product only

    @tf.function
    def dense(u, v):
        return tf.nn.relu(tf.nn.bias_add(tf.matmul(u, v, transpose_a=ta, transpose_b=tb),
                                         tf.constant(bias, tf.float32)))
    got = dense(x, y)
    assert "_FusedMatMul" in {op.type for op in
                              dense.get_concrete_function(x, y).optimized_graph().get_operations()}
    _check(got.numpy(), np.maximum(a @ b + bias, 0))
    assert len(outer) == 2
