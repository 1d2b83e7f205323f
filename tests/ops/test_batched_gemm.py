"""Batched float32 products (kernels/batched_gemm.py): BatchMatMulV2 and einsums with batch
labels, each forced onto ATen's `matmul` and onto the register-blocked vector kernel
(kernels/bmm_numba.py), against NumPy in float64, gradients included; strided operands (the
permuted views attention's einsums make), batches of one to three dimensions, rows off the
register block, and the shapes the kernel refuses."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import autotune, batched_gemm, bmm_numba, raw_memory

RNG = np.random.default_rng(0)


def _choices() -> set:
    return {chosen for key, chosen in autotune.choices().items() if key[0] == "bmm"}


def _check(got, want, rtol=2e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("batch", [(3,), (2, 3), (2, 1, 3)])
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
@pytest.mark.parametrize("n", [48, 50])     # columns three vectors, or padded to four
def test_batch_matmul_and_its_gradients(batch, adj_x, adj_y, n, bmm_algorithm):
    m, k = 37, 19     # rows off the blocks of 4 and 16
    a, b = RNG.standard_normal((*batch, m, k)), RNG.standard_normal((*batch, k, n))
    a_in = np.swapaxes(a, -1, -2) if adj_x else a
    b_in = np.swapaxes(b, -1, -2) if adj_y else b
    g = RNG.standard_normal((*batch, m, n))
    x, y = tf.constant(a_in, tf.float32), tf.constant(b_in, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = tf.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)
    dx, dy = tape.gradient(out, [x, y], output_gradients=tf.constant(g, tf.float32))
    _check(out.numpy(), a @ b)
    da, db = g @ np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2) @ g
    _check(dx.numpy(), np.swapaxes(da, -1, -2) if adj_x else da)
    _check(dy.numpy(), np.swapaxes(db, -1, -2) if adj_y else db)
    assert bmm_algorithm in _choices()


# Keras MultiHeadAttention's einsums (scores, attention over values) and their gradients'
ATTENTION = ["aecd,abcd->acbe", "acbe,aecd->abcd", "acbe,abcd->aecd", "abcd,aecd->acbe"]


@pytest.mark.parametrize("equation", ATTENTION)
def test_attention_einsums(equation, bmm_algorithm):
    sizes = {"a": 3, "b": 21, "c": 2, "d": 32, "e": 45}     # 21 and 45 columns: padded
    lhs, rhs = equation.split("->")[0].split(",")
    x, y = (RNG.standard_normal([sizes[c] for c in s]) for s in (lhs, rhs))
    out = tf.einsum(equation, tf.constant(x, tf.float32), tf.constant(y, tf.float32))
    _check(out.numpy(), np.einsum(equation, x, y))
    assert _choices() <= {bmm_algorithm}


def test_an_einsum_with_batch_labels_has_tf_s_gradients(bmm_algorithm):
    x = tf.constant(RNG.standard_normal((2, 16, 3, 8)), tf.float32)
    y = tf.constant(RNG.standard_normal((2, 32, 3, 8)), tf.float32)
    g = RNG.standard_normal((2, 3, 32, 16))

    def f(p, q):
        return tf.reduce_sum(tf.einsum("abcd,aecd->aceb", p, q) * g)

    with tf.GradientTape() as tape:
        tape.watch([x, y])
        loss = f(x, y)
    dx, dy = tape.gradient(loss, [x, y])
    xn, yn = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    _check(dx.numpy(), np.einsum("aceb,aecd->abcd", g, yn))
    _check(dy.numpy(), np.einsum("aceb,abcd->aecd", g, xn))
    _check(loss.numpy(), np.sum(np.einsum("abcd,aecd->aceb", xn, yn) * g), rtol=1e-4)


def test_the_kernel_reads_strided_views_in_place():
    q = torch.randn(4, 24, 3, 32)
    a = q.permute(0, 2, 1, 3)                       # [4, 3, 24, 32], rows 96 apart
    b = torch.randn(4, 3, 64, 32).transpose(2, 3)   # columns 32 apart: copied first
    want = torch.matmul(a.double(), b.double())
    got = batched_gemm._product(autotune.VECTOR, a, b)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
    c = torch.randn(4, 3, 32, 64)
    np.testing.assert_allclose(bmm_numba.matmul(a, c).numpy(),
                               torch.matmul(a.double(), c.double()).numpy(),
                               rtol=2e-5, atol=2e-5)


def test_shapes_the_kernel_refuses_run_aten():
    a = torch.randn(2, 3, 8, 5)
    assert not bmm_numba.applies(a, torch.randn(2, 3, 5, 20))       # columns not 16k
    assert not bmm_numba.applies(a, torch.randn(1, 3, 5, 16))       # batch shapes differ
    assert not bmm_numba.applies(a.double(), torch.randn(2, 3, 5, 16).double())
    assert not batched_gemm._candidate(torch.randn(8, 5), torch.randn(5, 16))   # no batch
    assert not batched_gemm._candidate(a, torch.randn(1, 3, 5, 16))   # broadcast batch
    b = torch.randn(2, 3, 5, 20)          # 20 columns: the kernel runs them padded to 32
    out = batched_gemm._product(autotune.VECTOR, a, b)
    np.testing.assert_allclose(out.numpy(), torch.matmul(a.double(), b.double()).numpy(),
                               rtol=2e-5, atol=2e-5)
    assert out.shape == (2, 3, 8, 20) and out.is_contiguous()


def test_a_view_s_span_is_its_first_element_to_its_last():
    t = torch.zeros(40)
    view = t[6:].as_strided((3, 4), (10, 2), storage_offset=6)   # elements 6..32
    assert raw_memory.strided_span(view) == (t.data_ptr() + 6 * 4, 27)
    assert raw_memory.strided_span(t[:0])[1] == 0
