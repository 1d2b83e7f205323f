"""In-place elementwise kernels in plans: only for exclusive intermediates that die at the
op; values, feeds, variables and views are never disturbed; the planned peak drops."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

v1 = tf.compat.v1
N = 1 << 15  # above inplace.MIN_ELEMENTS


def _plan(body, shape=(N,), monkeypatch=None, inplace=True):
    if monkeypatch is not None:
        monkeypatch.setenv("NDFLOW_INPLACE", "1" if inplace else "0")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, list(shape), name="x")
        outs = body(x)
    return Plan(g, [x], outs, [], RuntimeContext())


def _inplace_types(plan):
    return [s.op.type for s in plan._steps if s.inplace_of is not None]


def _chain(x):
    a = x * 2.0                     # fresh: Mul of a feed
    r = tf.nn.relu(a)               # a dies here: relu_ in place
    s = tf.add(r, tf.ones([N]))     # r dies here: add_ in place
    return [tf.math.subtract(s, 1.0)]


def test_chain_runs_in_place_with_the_same_values(monkeypatch):
    xv = torch.from_numpy(np.random.default_rng(0).normal(size=N).astype(np.float32))
    keep = xv.clone()
    on = _plan(_chain, monkeypatch=monkeypatch)
    assert _inplace_types(on) == ["Relu", "AddV2", "Sub"]
    out = on.run([xv])[0]
    torch.testing.assert_close(xv, keep)  # the feed is never written
    np.testing.assert_allclose(out.numpy(), np.maximum(keep.numpy() * 2, 0), atol=1e-6)
    off = _plan(_chain, monkeypatch=monkeypatch, inplace=False)
    assert _inplace_types(off) == []
    # ones([N]) is a Fill: live with r and s. In place, r, s and the result share one buffer.
    assert on.memory_plan().peak_bytes == 2 * 4 * N < off.memory_plan().peak_bytes == 3 * 4 * N


def test_values_with_other_readers_or_views_are_not_overwritten(monkeypatch):
    def body(x):
        a = x * 2.0
        view = tf.reshape(a, [N // 2, 2])  # a view of a outlives a's last use
        r = tf.nn.relu(a)
        return [r, tf.reshape(view, [N]) * 1.0, tf.nn.relu(x), tf.nn.relu(a[:10])]
    p = _plan(body, monkeypatch=monkeypatch)
    assert _inplace_types(p) == []
    xv = torch.linspace(-1, 1, N)
    r, v, rx, _ = p.run([xv])
    np.testing.assert_allclose(v.numpy(), 2 * xv.numpy(), rtol=1e-6)  # not clobbered
    np.testing.assert_allclose(rx.numpy(), np.maximum(xv.numpy(), 0))


@pytest.mark.parametrize("case", ["small", "broadcast", "fetched", "int"])
def test_not_in_place(case, monkeypatch):
    def body(x):
        if case == "small":
            return [tf.nn.relu(x[:100] * 2.0)]
        if case == "broadcast":
            return [tf.reshape(x, [N, 1]) * 2.0 + tf.ones([N, 4])]
        if case == "fetched":
            a = x * 2.0
            return [a, tf.nn.relu(a)]
        if case == "int":
            i = tf.cast(x, dtypes.int32) * 2
        return [i + 1]
    p = _plan(body, monkeypatch=monkeypatch)
    assert _inplace_types(p) == []


def test_variable_values_are_never_overwritten(monkeypatch):
    monkeypatch.setenv("NDFLOW_INPLACE", "1")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, [N], name="x")
        v = tf.Variable(np.full(N, -1.0, np.float32))
        y = tf.nn.relu(v.read_value()) + x
        read = v.read_value()
    ctx = RuntimeContext()
    Plan(g, [], [], [v.initializer], ctx).run([])
    p = Plan(g, [x], [y], [], ctx)
    assert _inplace_types(p) == ["AddV2"]  # relu's output is fresh; the read is not
    p.run([torch.ones(N)])
    np.testing.assert_allclose(Plan(g, [], [read], [], ctx).run([])[0].numpy(), -1.0)


def test_mul_of_a_value_by_itself_and_relu_grad(monkeypatch):
    def body(x):
        a = x + 1.0
        sq = a * a                       # both operands the same buffer: out of place
        (g,) = tf.gradients(tf.reduce_sum(tf.nn.relu(sq * 3.0)), [x])
        return [sq * 1.5, g]
    xv = torch.linspace(-2, 2, N)
    on = _plan(body, monkeypatch=monkeypatch).run([xv])
    off = _plan(body, monkeypatch=monkeypatch, inplace=False).run([xv])
    for a, b in zip(on, off):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def _dyn_plan(body, dtype=dtypes.float32, shapes=([None, 64],)):
    g = tf.Graph()
    with g.as_default():
        xs = [v1.placeholder(dtype, list(s), name=f"x{i}") for i, s in enumerate(shapes)]
        outs = body(*xs)
    return Plan(g, xs, outs, [], RuntimeContext())


def test_unknown_batch_dimensions_run_in_place(monkeypatch):
    """A map over batches ([None, ...]): cast -> scale and noise chains run in place; a
    Cast between dtypes and a random op's output are fresh buffers."""
    monkeypatch.setenv("NDFLOW_INPLACE", "1")

    def body(x):
        f = tf.cast(x, dtypes.float32) / 255.0                       # RealDiv of a Cast
        noise = tf.random.uniform(tf.shape(f), -0.5, 0.5, seed=1)    # Mul, AddV2 of it
        return [f + noise]
    p = _dyn_plan(body, dtypes.uint8)
    assert _inplace_types(p) == ["RealDiv", "Mul", "AddV2", "AddV2"]
    xv = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (5, 64), np.uint8))
    keep = xv.clone()
    out = p.run([xv])[0].numpy()
    assert torch.equal(xv, keep)
    noise = out - keep.numpy().astype(np.float32) / np.float32(255.0)
    assert out.shape == (5, 64) and np.abs(noise).max() <= 0.5 and noise.std() > 0.1


def test_unknown_shapes_that_broadcast_at_run_time_compute_out_of_place(monkeypatch):
    monkeypatch.setenv("NDFLOW_INPLACE", "1")

    def body(x, y):
        return [x * 2.0 + y]   # x * 2.0: fresh, [None]; the add may run in place on it
    p = _dyn_plan(body, shapes=([None], [None]))
    assert _inplace_types(p) == ["AddV2"]
    x, y = torch.tensor([3.0]), torch.arange(5, dtype=torch.float32)
    (s,) = p.run([x, y])        # [1] + [5] -> [5]: out of place
    np.testing.assert_array_equal(s.numpy(), 6.0 + np.arange(5, dtype=np.float32))
    (s,) = p.run([torch.arange(4, dtype=torch.float32), torch.tensor([1.0])])
    np.testing.assert_array_equal(s.numpy(), [1.0, 3.0, 5.0, 7.0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        p.run([torch.ones(4), torch.ones(3)])


def test_a_cast_to_its_own_dtype_is_not_a_fresh_buffer(monkeypatch):
    monkeypatch.setenv("NDFLOW_INPLACE", "1")

    def body(x):
        same = tf.raw_ops.Cast(x=x, DstT=dtypes.float32)   # returns x itself
        return [same * 2.0, x]
    p = _dyn_plan(body)
    assert _inplace_types(p) == []
    xv = torch.ones(3, 64)
    out, back = p.run([xv])
    assert torch.equal(back, torch.ones(3, 64)) and torch.equal(out, torch.full((3, 64), 2.0))
