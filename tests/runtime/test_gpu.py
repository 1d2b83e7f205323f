"""GPU placement: the same ops and kernels run on CUDA devices (skipped without a GPU)."""

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.kernels import host_memory

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _run_without_waiting(step, *args):
    """`step(*args)` once to trace and plan it, then again where any synchronizing CUDA call
    (a wait for the device) raises."""
    step(*args)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        return step(*args)
    finally:
        torch.cuda.set_sync_debug_mode(0)


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


def test_scalar_variables_only_updates_read_are_read_on_the_host():
    """The placement rule behind the next test, checked on any machine: a read of a scalar
    variable (or of a captured handle, rank unknown) whose every reader updates a variable runs
    on the host; one that any other op reads, or a vector, does not."""
    g = tf.Graph()
    with g.as_default():
        var = tf.Variable(np.ones(4, np.float32))
        accum = tf.Variable(np.zeros(4, np.float32))
        lr, mu, other = tf.Variable(0.5), tf.Variable(0.9), tf.Variable(2.0)
        lr_t, mu_t, other_t, var_t = (tf.raw_ops.ReadVariableOp(resource=v.handle,
                                                                dtype=tf.float32)
                                      for v in (lr, mu, other, var))
        tf.raw_ops.ResourceApplyKerasMomentum(var=var.handle, accum=accum.handle, lr=lr_t,
                                              grad=var_t * other_t, momentum=mu_t)
        captured = tf.compat.v1.placeholder(tf.resource, [])
        unknown = tf.raw_ops.ReadVariableOp(resource=captured, dtype=tf.float32)
        tf.raw_ops.AssignAddVariableOp(resource=captured, value=unknown)
    assert unknown.shape.rank is None
    readers = {}
    for op in g.get_operations():
        for t in op.inputs:
            readers.setdefault(t, []).append(op)

    chain = host_memory.host_scalar_chains(g.get_operations(), readers, lambda op: True, set())

    def on_host(t):
        return t.op in chain

    assert on_host(lr_t) and on_host(mu_t) and on_host(unknown)
    assert not on_host(other_t)      # a Mul reads it
    assert not on_host(var_t)        # a vector


def test_shapes_only_read_as_shapes_are_made_on_the_host():
    """On a GPU, a Shape/ShapeN whose every reader takes it as a shape in host memory (the
    convolution gradients' sizes, a random op's shape, Reshape's shape) runs on the host, as
    TensorFlow's GPU Shape kernel writes host memory; one that other ops compute on does not
    (checked on any machine: the plan's rule)."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 3])
        w = tf.constant(np.ones((3, 3, 3, 4), np.float32))
        y = tf.nn.conv2d(x, w, 1, "SAME")
        tf.gradients(tf.reduce_sum(y), [x, w])
        drawn = tf.raw_ops.Shape(input=y)
        tf.raw_ops.RandomUniform(shape=drawn, dtype=tf.float32)
        reshaped = tf.raw_ops.Shape(input=x)
        tf.reshape(y, reshaped)
        computed = tf.raw_ops.Shape(input=x)
        tf.cast(computed, tf.float32)
        wide = tf.raw_ops.Shape(input=y, out_type=tf.int64)
        tf.reshape(y, wide)
    readers = {}
    for op in g.get_operations():
        for t in op.inputs:
            readers.setdefault(t, []).append(op)
    sizes = [op for op in g.get_operations() if op.type == "ShapeN"]
    assert sizes and all(host_memory.shape_on_host(op, readers) for op in sizes)
    assert host_memory.shape_on_host(drawn.op, readers)
    assert host_memory.shape_on_host(reshaped.op, readers)
    assert not host_memory.shape_on_host(computed.op, readers)   # a Cast computes on it
    assert not host_memory.shape_on_host(wide.op, readers)       # int64: copied over anyway


def test_int32_constants_only_read_as_shapes_or_axes_are_made_on_the_host():
    """On a GPU, an int32 Const whose every reader takes it in host memory (a random op's
    shape, Reshape's shape, reduction axes) stays on the host, as TensorFlow's GPU Const of
    int32 does; one that an op computes on, or a float one, does not."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [4, 6])
        shape = tf.constant([2, 3], tf.int32)
        tf.raw_ops.RandomUniform(shape=shape, dtype=tf.float32)
        axes = tf.constant([0], tf.int32)
        tf.reduce_sum(x, axes)
        dims = tf.constant([6, 4], tf.int32)
        tf.reshape(x, dims)
        summed = tf.constant([1, 2], tf.int32)
        tf.add(summed, summed)
        scale = tf.constant(2.0)
        tf.reshape(x * scale, dims)
    readers = {}
    for op in g.get_operations():
        for t in op.inputs:
            readers.setdefault(t, []).append(op)
    assert all(host_memory.shape_on_host(t.op, readers) for t in (shape, axes, dims))
    assert not host_memory.shape_on_host(summed.op, readers)     # an Add computes on it
    assert not host_memory.shape_on_host(scale.op, readers)      # float


def test_host_scalars_stay_on_the_host_unless_an_op_spreads_them():
    """A host scalar read by an op on another device stays on the host (ATen reads it as a
    scalar), unless the op puts its value into a larger tensor (Reshape, Fill, ...), which
    would then be made on the host: then it is copied (checked on any machine with the meta
    device standing in for a GPU)."""
    meta = torch.device("meta")
    scalar, vector = torch.tensor(2.0), torch.ones(3)
    assert host_memory.to_device(scalar, meta) is scalar
    assert host_memory.to_device(scalar, meta, scalars_stay=False).device == meta
    assert host_memory.to_device(vector, meta).device == meta
    shape = torch.tensor([2, 3], dtype=torch.int32)
    assert host_memory.to_device(shape, meta, scalars_stay=False) is shape
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(2.0)
        spread = [tf.reshape(x, [1]), tf.fill([3], x), tf.stack([x, x]), tf.expand_dims(x, 0)]
        kept = [x * x, tf.cast(x, tf.float64)]
    assert all(host_memory.spreads(t.op) for t in spread)
    assert not any(host_memory.spreads(t.op) for t in kept)


def test_scalar_chains_that_only_updates_read_run_on_the_host():
    """The placement rule behind the Adam GPU test, checked on any machine: scalar arithmetic
    placed on a GPU whose every reader is an update or more such arithmetic, and which reads
    only such values, constants or host values, runs on the host; a scalar another op also
    reads, or one computed from a value made on the GPU, stays."""
    g = tf.Graph()
    with g.as_default():
        var = tf.Variable(np.ones(4, np.float32))
        m, v = tf.Variable(np.zeros(4, np.float32)), tf.Variable(np.zeros(4, np.float32))
        step = tf.Variable(3, dtype=tf.int64)
        t = tf.cast(step.read_value() + 1, tf.float32)
        b1p, b2p = tf.pow(0.9, t), tf.pow(0.999, t)
        shared = tf.sqrt(tf.cast(step.read_value(), tf.float32))   # a vector op reads it
        grad = var.read_value() * shared
        loss_scale = tf.reduce_sum(grad)                      # a scalar made from the GPU value
        lr = 0.01 / loss_scale
        tf.raw_ops.ResourceApplyAdam(var=var.handle, m=m.handle, v=v.handle, beta1_power=b1p,
                                     beta2_power=b2p, lr=lr, beta1=0.9, beta2=0.999,
                                     epsilon=1e-7, grad=grad)
    ops = g.get_operations()
    readers = {}
    for op in ops:
        for x in op.inputs:
            readers.setdefault(x, []).append(op)
    chain = host_memory.host_scalar_chains(ops, readers, lambda op: True, set())
    assert {b1p.op, b2p.op, t.op, t.op.inputs[0].op} <= chain
    assert shared.op not in chain and lr.op not in chain and loss_scale.op not in chain
    fetched = host_memory.host_scalar_chains(ops, readers, lambda op: True, {b1p, b2p, t})
    assert not {b1p.op, b2p.op, t.op, t.op.inputs[0].op} & fetched   # a fetch stays placed


def test_a_resource_handle_reports_its_variables_device():
    """An eager variable's `device` is where its value lives, the device its handle was made
    on (checked on any machine with a resource on a named GPU)."""
    from ndflow.core.tensor import EagerTensor
    from ndflow.runtime.state import Resource
    on_gpu = Resource("v", tf.float32, tf.TensorShape([]), torch.device("cuda", 1))
    on_host = Resource("w", tf.float32, tf.TensorShape([]), torch.device("cpu"))
    assert EagerTensor(on_gpu, tf.resource).device.endswith("device:GPU:1")
    assert EagerTensor(on_host, tf.resource).device.endswith("device:CPU:0")
    assert tf.Variable(1.0).device.endswith("device:CPU:0")


@gpu
def test_host_values_reach_the_gpu_without_waiting_for_it():
    """A function argument and a host variable read on the GPU are copied there through
    pinned memory, and the int32 constants a random op, Reshape and a reduction read stay on
    the host: a step of them issues no synchronizing CUDA call."""
    host = tf.Variable(np.arange(4, dtype=np.float32))          # on the host
    with tf.device("/GPU:0"):
        out = tf.Variable(np.zeros(4, np.float32))

    @tf.function
    def step(x):
        with tf.device("/GPU:0"):
            noise = tf.reshape(tf.random.uniform([2, 2], seed=1), [4])
            out.assign(host * 2.0 + tf.reduce_sum(x, axis=0) + noise * 0.0)

    x = tf.constant(np.ones((3, 4), np.float32))                # on the host
    _run_without_waiting(step, x)
    np.testing.assert_allclose(out.numpy(), np.arange(4) * 2.0 + 3.0, rtol=1e-6)
    assert out.device.endswith("GPU:0") and host.device.endswith("CPU:0")


@gpu
def test_a_host_scalar_spread_into_a_tensor_on_the_gpu_is_copied_there():
    """A scalar made on the host, computed or constant, that a GPU op reshapes, fills or
    stacks reaches that op on the GPU, so the ops after it read a GPU tensor."""
    with tf.device("/CPU:0"):
        v = tf.Variable(3.0)

    @tf.function
    def f(x):
        with tf.device("/CPU:0"):
            s = v * 2.0                                   # computed on the host
            c = tf.constant(5.0)                          # a host constant
        with tf.device("/GPU:0"):
            return (x + tf.reshape(s, [1]) + tf.fill([4], c) + tf.stack([s, c, s, c])
                    + tf.expand_dims(c, 0))

    with tf.device("/GPU:0"):
        x = tf.constant(np.arange(4, dtype=np.float32))
    got = f(x)
    assert got.device.endswith("GPU:0")
    np.testing.assert_allclose(got.numpy(), np.arange(4) + 6.0 + 5.0 + [6, 5, 6, 5] + 5.0)


@gpu
def test_an_adam_step_on_the_gpu_computes_its_bias_corrections_on_the_host():
    """Adam's beta powers, computed from a host step counter under a GPU scope, are computed on
    the host for the GPU update that reads them to Python: the step waits for no device."""
    with tf.device("/GPU:0"):
        var = tf.Variable(np.ones(4, np.float32))
        m, v = tf.Variable(np.zeros(4, np.float32)), tf.Variable(np.zeros(4, np.float32))
    step_count = tf.Variable(0, dtype=tf.int64)                 # on the host

    @tf.function
    def step():
        with tf.device("/GPU:0"):
            t = tf.cast(step_count.read_value() + 1, tf.float32)
            tf.raw_ops.ResourceApplyAdam(var=var.handle, m=m.handle, v=v.handle,
                                         beta1_power=tf.pow(0.9, t),
                                         beta2_power=tf.pow(0.999, t), lr=0.1, beta1=0.9,
                                         beta2=0.999, epsilon=1e-7, grad=var * 2.0)
            step_count.assign_add(1)

    _run_without_waiting(step)
    w, mm, vv = np.ones(4), np.zeros(4), np.zeros(4)
    for k in (1, 2):
        g = 2.0 * w
        mm, vv = 0.9 * mm + 0.1 * g, 0.999 * vv + 0.001 * g * g
        lr = 0.1 * np.sqrt(1 - 0.999 ** k) / (1 - 0.9 ** k)
        w = w - lr * mm / (np.sqrt(vv) + 1e-7)
    np.testing.assert_allclose(var.numpy(), w, rtol=1e-5)
    assert int(step_count.numpy()) == 2


@gpu
def test_a_session_feeds_the_gpu_without_waiting_for_it():
    """Fed arrays go to the GPU ops reading them through pinned memory: a Session step that
    fetches nothing back issues no synchronizing CUDA call."""
    g = tf.Graph()
    with g.as_default(), tf.device("/GPU:0"):
        x = tf.compat.v1.placeholder(tf.float32, [8])
        acc = tf.compat.v1.Variable(np.zeros(8, np.float32))
        update = acc.assign_add(x * 2.0)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        feed = {x: np.arange(8, dtype=np.float32)}
        _run_without_waiting(lambda: sess.run(update.op, feed))
        np.testing.assert_allclose(sess.run(acc), np.arange(8) * 4.0, rtol=1e-6)


@gpu
def test_an_update_on_the_gpu_reads_host_scalars_without_waiting_for_the_gpu():
    """A scalar variable on the host that only updates read (a learning rate) is read on the
    host, and a constant on the GPU that an update reads (a momentum, here also a factor of the
    gradient) is given to the update as a host copy made once: the update takes both to Python
    with no copy to the GPU and back, so the step never waits for the device."""
    with tf.device("/GPU:0"):
        var = tf.Variable(np.ones(4, np.float32))
        accum = tf.Variable(np.zeros(4, np.float32))
    lr = tf.Variable(0.5)                                # on the host

    @tf.function
    def step():
        with tf.device("/GPU:0"):
            mu = tf.constant(0.9)
            grad = var * 2.0 / mu * mu
            lr_t = tf.raw_ops.ReadVariableOp(resource=lr.handle, dtype=tf.float32)
            tf.raw_ops.ResourceApplyKerasMomentum(var=var.handle, accum=accum.handle,
                                                  lr=lr_t, grad=grad, momentum=mu)

    _run_without_waiting(step)
    # Keras momentum: accum = mu * accum - lr * g; var += accum (g = 2 var)
    a1 = -0.5 * 2.0
    v1 = 1.0 + a1
    a2 = 0.9 * a1 - 0.5 * 2.0 * v1
    np.testing.assert_allclose(var.numpy(), np.full(4, v1 + a2, np.float32), rtol=1e-6)
    assert var.device.endswith("GPU:0") and lr.device.endswith("CPU:0")


@gpu
def test_sparse_xent_on_the_gpu_gives_nan_rows_for_labels_out_of_range():
    """TensorFlow's GPU kernel raises nothing for a label outside [0, classes): its rows of
    the loss and the gradient are NaN (the CPU kernel raises InvalidArgumentError)."""
    logits = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    with tf.device("/GPU:0"):
        f = tf.constant(logits)
        with tf.GradientTape() as tape:
            tape.watch(f)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                tf.constant(np.array([1, 4, 0], np.int64)), f)
        grad = tape.gradient(loss, f).numpy()
    loss = loss.numpy()
    assert np.isnan(loss[1]) and np.isnan(grad[1]).all()
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(loss[[0, 2]], -np.log(p[[0, 2], [1, 0]]), rtol=1e-5)
    p[0, 1] -= 1
    p[2, 0] -= 1
    np.testing.assert_allclose(grad[[0, 2]], p[[0, 2]], rtol=1e-5, atol=1e-6)


@gpu
@pytest.mark.parametrize("make_opt", [lambda: tf.keras.optimizers.Adam(0.1),
                                      lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9)],
                         ids=["adam", "momentum"])
@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "single"])
def test_updates_of_host_variables_take_gradients_made_on_the_gpu(make_opt, grouped):
    """Updates of variables on the host, grouped or single, run where the variables live and
    copy gradients made on the GPU there (TF colocates an update with its variable;
    MultiWorkerMirrored's Keras fit on a GPU machine gave the grouped Adam update GPU
    gradients)."""
    init = [np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)]
    if not grouped:   # one variable: its update stays a single op
        init = init[:1]

    def train(grad_device):
        with tf.device("/CPU:0"):
            vs = [tf.Variable(v) for v in init]
        opt = make_opt()

        @tf.function
        def step():
            with tf.device(grad_device):
                with tf.GradientTape() as tape:
                    h = tf.matmul(tf.ones([4, 2]), vs[0])
                    loss = tf.reduce_sum(tf.nn.relu(h + vs[1] if grouped else h))
                grads = tape.gradient(loss, vs)
            with tf.device("/CPU:0"):
                opt.apply_gradients(zip(grads, vs))

        for _ in range(3):
            step()
        assert all(v.device.endswith("CPU:0") for v in vs)
        return [v.numpy() for v in vs]

    for got, want in zip(train("/GPU:0"), train("/CPU:0")):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
