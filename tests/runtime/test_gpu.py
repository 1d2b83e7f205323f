"""GPU placement: the same ops and kernels run on CUDA devices (skipped without a GPU)."""

import numpy as np
import pytest
import torch

import ndflow as tf

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@gpu
def test_eager_ops_run_on_the_gpu():
    with tf.device("/GPU:0"):
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = tf.matmul(a, a)
    assert b.device.endswith("GPU:0")
    np.testing.assert_allclose(b.numpy(), [[7.0, 10.0], [15.0, 22.0]])


@gpu
def test_session_places_ops_on_the_gpu():
    g = tf.Graph()
    with g.as_default(), tf.device("/GPU:0"):
        x = tf.compat.v1.placeholder(tf.float32, [1, 8, 8, 3])
        w = tf.constant(np.ones((3, 3, 3, 4), np.float32))
        y = tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME"))
    with tf.compat.v1.Session(graph=g) as sess:
        out = sess.run(y, {x: np.ones((1, 8, 8, 3), np.float32)})
    assert out[0, 4, 4, 0] == 27.0 and out[0, 0, 0, 0] == 12.0


@gpu
def test_gradients_on_the_gpu_match_the_cpu():
    def grad(device):
        with tf.device(device):
            w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.nn.relu(tf.matmul(tf.ones([4, 2]), w)))
            return tape.gradient(loss, w).numpy()

    np.testing.assert_allclose(grad("/GPU:0"), grad("/CPU:0"), rtol=1e-6)


def _ln_gelu_step(x, w):
    """A dense layer, LayerNorm and GELU (tanh form) as ops, a mean-square loss and its
    gradient: reductions read back inside a row (row kernels), column sums in the backward."""
    with tf.GradientTape() as tape:
        tape.watch(w)
        h = tf.matmul(x, w)
        d = h - tf.reduce_mean(h, -1, keepdims=True)
        n = d * tf.math.rsqrt(tf.reduce_mean(d * d, -1, keepdims=True) + 1e-5)
        y = 0.5 * n * (1.0 + tf.tanh(0.7978845608 * (n + 0.044715 * n * n * n)))
        loss = tf.reduce_mean(y * y)
    return loss, tape.gradient(loss, w)


@gpu
def test_jit_compile_on_the_gpu_runs_triton_kernels_equal_to_the_uncompiled(monkeypatch):
    pytest.importorskip("triton")
    from ndflow.jit.codegen import triton_backend  # noqa: PLC0415 - imports Triton

    built = []
    real_build = triton_backend.build
    monkeypatch.setattr(triton_backend, "build",
                        lambda ir, *a: built.append(ir.row_split) or real_build(ir, *a))
    rng = np.random.default_rng(0)
    with tf.device("/GPU:0"):
        x = tf.constant(rng.standard_normal((64, 96)).astype(np.float32))
        w = tf.constant(rng.standard_normal((96, 256)).astype(np.float32) * 0.1)
        got = tf.function(_ln_gelu_step, jit_compile=True)(x, w)
        want = tf.function(_ln_gelu_step)(x, w)
    assert any(split is not None for split in built)   # LayerNorm's rows in one kernel
    for g, ref in zip(got, want):
        assert g.device.endswith("GPU:0")
        np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=2e-5, atol=1e-6)


@gpu
def test_a_distributed_dataset_delivers_each_replicas_batch_on_its_gpu():
    strategy = tf.distribute.MirroredStrategy(["/GPU:0"])
    ds = tf.data.Dataset.from_tensor_slices(np.arange(8, dtype=np.float32).reshape(4, 2))
    with strategy.scope():
        w = tf.Variable(np.ones((2, 1), np.float32))

    @tf.function
    def step(x):
        return tf.reduce_sum(tf.matmul(x, w))

    sums = []
    for batch in strategy.experimental_distribute_dataset(ds.batch(2)):
        assert batch.device.endswith("GPU:0")
        sums.append(float(strategy.run(step, (batch,)).numpy()))
    assert sums == [6.0, 22.0]


@gpu
def test_an_op_on_the_gpu_reads_tensors_made_on_the_cpu():
    """The plan copies a CPU-made tensor (and a CPU constant, once) to the GPU op that reads
    it, as TF's Send/Recv pair does; int32 shapes stay on the host."""
    x_np = np.arange(12, dtype=np.float32).reshape(3, 4)
    w_np = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)

    @tf.function
    def step(x):
        with tf.device("/CPU:0"):
            h = x * 2.0                          # made on the CPU
            w = tf.constant(w_np)                # a CPU constant
        with tf.device("/GPU:0"):
            y = tf.nn.relu(tf.matmul(h, w) + 1.0)
            return tf.reshape(y, [2, 3])

    got = step(tf.constant(x_np))
    assert got.device.endswith("GPU:0")
    want = np.maximum(x_np * 2.0 @ w_np + 1.0, 0.0).reshape(2, 3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
