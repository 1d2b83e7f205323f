"""The register-blocked product on the calling thread (kernels/small_gemm_numba.py) against
NumPy in float64 for every operand layout, bias and ReLU; kernels/gemm.py's choice of it for a
shape, timed call by call where the product runs (autotune.run_in_turn), and the product made
ready for its shape once chosen; Dense layers and their gradients on it."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import core_monitor, determinism
from ndflow.kernels import autotune, gemm, raw_memory, small_gemm_numba

RNG = np.random.default_rng(3)
pytestmark = pytest.mark.skipif(small_gemm_numba._kernel() is None, reason="needs numba")


def _layout(x: np.ndarray, kind: str) -> torch.Tensor:
    """`x` as a float32 tensor of the given memory layout, same values."""
    if kind == "rows":
        return torch.tensor(x, dtype=torch.float32)
    if kind == "columns":    # a transposed view of a contiguous tensor
        return torch.tensor(x.T.copy(), dtype=torch.float32).t()
    wide = torch.zeros((x.shape[0], 2 * x.shape[1] + 3), dtype=torch.float32)
    wide[:, 3::2] = torch.tensor(x, dtype=torch.float32)   # every other column of a wider one
    return wide[:, 3::2]


@pytest.mark.parametrize("a_kind", ["rows", "columns", "strided"])
@pytest.mark.parametrize("w_kind", ["rows", "columns", "strided"])
@pytest.mark.parametrize("m,k,n", [(7, 5, 16), (64, 64, 64), (9, 33, 80), (4, 1, 48),
                                   (64, 64, 10), (6, 20, 1), (5, 17, 37)])
def test_products_of_every_layout(a_kind, w_kind, m, k, n):
    a, w, bias = RNG.standard_normal((m, k)), RNG.standard_normal((n, k)), RNG.standard_normal(n)
    at, wt = _layout(a, a_kind), _layout(w, w_kind)
    assert small_gemm_numba.applies(at, wt)
    want = a @ w.T
    np.testing.assert_allclose(small_gemm_numba.linear(at, wt).numpy(), want, rtol=1e-5,
                               atol=1e-5)
    got = small_gemm_numba.linear(at, wt, torch.tensor(bias, dtype=torch.float32), relu=True)
    assert got.is_contiguous() and got.shape == (m, n)
    np.testing.assert_allclose(got.numpy(), np.maximum(want + bias, 0), rtol=1e-5, atol=1e-5)


def test_relu_keeps_nan_and_prepared_products_take_new_operands():
    a, w = torch.randn(8, 16), torch.randn(32, 16)
    a[2, 3] = float("nan")
    run = small_gemm_numba.prepared(a, w, True)
    out = run(a, w, None)
    assert torch.isnan(out[2]).all() and not torch.isnan(out[[0, 1, 3]]).any()
    b, v = torch.randn(8, 16), torch.randn(32, 16)   # other tensors of the same layout
    torch.testing.assert_close(run(b, v, None), torch.relu(b @ v.t()), rtol=1e-5, atol=1e-5)


def test_what_it_does_not_take():
    a, w = torch.randn(8, 16), torch.randn(32, 16)
    assert not small_gemm_numba.applies(a.double(), w.double())
    assert not small_gemm_numba.applies(torch.randn(2, 8, 16), w)          # 3-D
    assert not small_gemm_numba.applies(torch.randn(0, 16), w)
    with pytest.raises(raw_memory.RawMemoryError, match="float32"):
        raw_memory.matrix(a.double(), torch.float32)
    with pytest.raises(raw_memory.RawMemoryError, match="non-empty"):
        raw_memory.matrix(torch.randn(0, 4), torch.float32)
    with pytest.raises(raw_memory.RawMemoryError, match="outside it"):
        raw_memory.within(a[6:], torch.float32, a.numel())   # past the end of the storage
    run = small_gemm_numba.prepared(a, w, False)
    with pytest.raises(raw_memory.RawMemoryError):
        run(a.double(), w, None)


@pytest.fixture
def timing_now(monkeypatch):
    monkeypatch.setattr(core_monitor, "ready_to_time", lambda threads: True)
    monkeypatch.delenv("TF_CUDNN_USE_AUTOTUNE", raising=False)
    autotune.clear()
    yield
    autotune.clear()


@pytest.mark.parametrize("fastest", [gemm.ATEN, gemm.VECTOR])
def test_small_products_timed_in_turn_then_made_ready(fastest, timing_now, monkeypatch):
    """Each call of a new small shape runs one candidate in turn (its result the caller's);
    after the timed rounds the faster is kept and made ready: later calls skip the tuner."""
    ran = []
    monkeypatch.setattr(autotune, "_timed", lambda run, algorithm, credit=None: (
        0.001 if algorithm == fastest else 0.002, run(algorithm)))
    real_ready = gemm._ready
    monkeypatch.setattr(gemm, "_ready", lambda algorithm, *args: (
        ran.append(algorithm), real_ready(algorithm, *args))[1])
    a, w, bias = torch.randn(64, 48), torch.randn(32, 48), torch.randn(32)
    post = ("relu", [], torch.relu_)
    want = torch.relu(a @ w.t() + bias)
    calls = (1 + autotune._IN_TURN_ROUNDS) * 2
    for _ in range(calls):
        torch.testing.assert_close(gemm.linear(a, w, bias, post), want, rtol=1e-5, atol=1e-5)
    assert ran[:2] == [gemm.ATEN, gemm.VECTOR]      # each candidate made ready once, in turn
    assert autotune.decided(gemm._key(a, w, bias, post)) == fastest
    assert ran[-1] == fastest and autotune.prepared(gemm._key(a, w, bias, post)) is not None
    made = len(ran)
    for _ in range(3):
        torch.testing.assert_close(gemm.linear(a, w, bias, post), want, rtol=1e-5, atol=1e-5)
    assert len(ran) == made
    determinism.set_enabled(True)    # the default runs, whatever was chosen
    try:
        assert autotune.prepared(gemm._key(a, w, bias, post)) is None
        torch.testing.assert_close(gemm.linear(a, w, bias, post), want, rtol=1e-5, atol=1e-5)
    finally:
        determinism.set_enabled(False)


def test_tiny_products_are_not_timed(timing_now):
    a, w = torch.randn(4, 8), torch.randn(16, 8)      # 1K FLOPs
    for _ in range(20):
        torch.testing.assert_close(gemm.linear(a, w), a @ w.t())
    assert not autotune.choices()


def test_a_narrow_product_is_timed_against_the_vector_kernel(timing_now, monkeypatch):
    """A 10-column output (a classifier's logits) is a candidate for the vector kernel too."""
    monkeypatch.setattr(autotune, "_timed", lambda run, algorithm, credit=None: (
        0.001 if algorithm == gemm.VECTOR else 0.002, run(algorithm)))
    a, w, bias = torch.randn(64, 128), torch.randn(10, 128), torch.randn(10)
    for _ in range((1 + autotune._IN_TURN_ROUNDS) * 2 + 2):
        torch.testing.assert_close(gemm.linear(a, w, bias), torch.addmm(bias, a, w.t()),
                                   rtol=1e-5, atol=1e-5)
    assert _gemm_choices() == [gemm.VECTOR]


@pytest.fixture
def vector_gemm(monkeypatch):
    from tests.conftest import _tuned_to_prefer
    yield from _tuned_to_prefer(monkeypatch, gemm, gemm.VECTOR)


def test_dense_layers_and_gradients_on_the_vector_kernel(vector_gemm):
    """A relu Dense stack (fused bias and activation) trained on the kernel: the loss and
    every gradient against NumPy in float64, each product's choice the vector kernel."""
    x = RNG.standard_normal((24, 32))
    w1, b1 = RNG.standard_normal((32, 48)) * 0.3, RNG.standard_normal(48)
    w2 = RNG.standard_normal((48, 16)) * 0.3
    v1, c1, v2 = (tf.Variable(t.astype(np.float32)) for t in (w1, b1, w2))

    @tf.function
    def grads(xt):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.nn.bias_add(tf.matmul(xt, v1), c1)),
                                           v2) ** 2)
        return loss, tape.gradient(loss, [v1, c1, v2])
    loss, (g1, gb, g2) = grads(tf.constant(x, tf.float32))
    h = np.maximum(x @ w1 + b1, 0)
    y = h @ w2
    dy = 2 * y
    dh = (dy @ w2.T) * (h > 0)
    np.testing.assert_allclose(loss.numpy(), (y ** 2).sum(), rtol=1e-4)
    np.testing.assert_allclose(g2.numpy(), h.T @ dy, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(g1.numpy(), x.T @ dh, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(gb.numpy(), dh.sum(0), rtol=1e-4, atol=1e-3)
    assert {c for k, c in autotune.choices().items() if k[0] == "gemm"} == {gemm.VECTOR}


def test_vector_transpose_of_a_block():
    """simd_numba's `vtranspose` (the packing of a transposed operand): a 16 x 16 block of a
    wider source into a wider destination, nothing else written."""
    import numba

    from ndflow.kernels import simd_numba
    ops = simd_numba.vector_ops()
    vtranspose = ops.vtranspose

    @numba.njit
    def block(src, src_base, src_stride, dst, dst_base, dst_stride):
        vtranspose(src, src_base, src_stride, dst, dst_base, dst_stride)

    src = RNG.standard_normal((20, 23)).astype(np.float32)
    dst = np.full((18, 40), -7.0, np.float32)
    block(src.reshape(-1), 2 * 23 + 5, 23, dst.reshape(-1), 1 * 40 + 3, 40)
    want = np.full_like(dst, -7.0)
    want[1:17, 3:19] = src[2:18, 5:21].T
    np.testing.assert_array_equal(dst, want)


@pytest.mark.parametrize("fastest", [gemm.ATEN, gemm.VECTOR])
@pytest.mark.parametrize("a_transposed", [False, True])
@pytest.mark.parametrize("w_transposed", [False, True])
def test_an_ops_product_keeps_its_ready_kernel(fastest, a_transposed, w_transposed,
                                               timing_now, monkeypatch):
    """gemm.Linear (an op's products) takes its operands as the op holds them (transposed
    where its attributes say), keeps the product made ready for their layout and runs it
    without the tuner's lookups; another layout, a forgotten choice or op determinism go
    through `linear` again. Every result against NumPy in float64."""
    monkeypatch.setattr(autotune, "_timed", lambda run, algorithm, credit=None: (
        0.001 if algorithm == fastest else 0.002, run(algorithm)))
    post = ("relu", [], torch.relu_)
    site = gemm.Linear(post, a_transposed, w_transposed)
    looked_up = []
    real_linear = gemm.linear
    monkeypatch.setattr(gemm, "linear", lambda *args: (looked_up.append(1),
                                                      real_linear(*args))[1])

    def check(m=32, k=48, n=64):
        a, w, bias = (RNG.standard_normal(s) for s in ((m, k), (n, k), (n,)))
        at = torch.tensor(a.T if a_transposed else a, dtype=torch.float32)
        wt = torch.tensor(w.T if w_transposed else w, dtype=torch.float32)
        got = site(at, wt, torch.tensor(bias, dtype=torch.float32))
        np.testing.assert_allclose(got.numpy(), np.maximum(a @ w.T + bias, 0), rtol=1e-5,
                                   atol=1e-5)
    for _ in range((1 + autotune._IN_TURN_ROUNDS) * 2):
        check()
    assert set(_gemm_choices()) == {fastest}
    before = len(looked_up)
    for _ in range(3):
        check()
    assert len(looked_up) == before                 # the kept product ran
    check(m=16)                                     # another layout: looked up
    assert len(looked_up) == before + 1
    check()                                         # ... and kept in its place
    check()
    assert len(looked_up) == before + 2
    autotune.forget(next(k for k in autotune.choices() if k[1] == (32, 48)))
    check()                                         # a forgotten choice is not kept
    assert len(looked_up) == before + 3
    determinism.set_enabled(True)
    try:
        check(m=16)
        check(m=16)
        assert len(looked_up) == before + 5         # under determinism: the default, looked up
    finally:
        determinism.set_enabled(False)


def _gemm_choices() -> list:
    return [c for k, c in autotune.choices().items() if k[0] == "gemm"]
