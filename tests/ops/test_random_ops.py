"""Random ops: TF's seeding semantics (get_seed, set_seed, graph seeds), reproducibility,
distributions (generous statistical bounds), shapes, names and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow  # noqa: F401 - registers ops and kernels
import ndflow.random as tf_random
from ndflow.core import dtypes
from ndflow.core.errors import InvalidArgumentError
from ndflow.core.graph import Graph
from ndflow.core.shapes import TensorShape
from ndflow.ops import random as R
from ndflow.ops import random_seed
from ndflow.ops.array_core import constant, placeholder
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import EAGER_CONTEXT, RuntimeContext

MAXINT32 = 2**31 - 1


@pytest.fixture(autouse=True)
def _no_global_seed():
    random_seed.set_seed(None)
    yield
    random_seed.set_seed(None)


def run(graph, fetches, ctx=None, feeds=None):
    feeds = feeds or {}
    plan = Plan(graph, list(feeds), list(fetches), [], ctx or RuntimeContext())
    return [o.numpy() for o in plan.run([torch.as_tensor(np.asarray(v))
                                         for v in feeds.values()])]


# -- get_seed ----------------------------------------------------------------------------------

def test_get_seed_eager_rules():
    assert random_seed.get_seed(None) == (None, None)
    assert random_seed.get_seed(5) == (random_seed.DEFAULT_GRAPH_SEED, 5)
    assert random_seed.DEFAULT_GRAPH_SEED == 87654321
    assert random_seed.get_seed(2**31 + 5) == (random_seed.DEFAULT_GRAPH_SEED, 6)
    random_seed.set_seed(3)
    assert random_seed.get_seed(7) == (3, 7)
    first = [random_seed.get_seed(None) for _ in range(3)]
    assert len({s for _, s in first}) == 3 and all(s1 == 3 for s1, _ in first)
    random_seed.set_seed(3)
    assert [random_seed.get_seed(None) for _ in range(3)] == first   # replays after set_seed
    random_seed.set_seed(0)
    assert random_seed.get_seed(0) == (0, MAXINT32)


def test_get_seed_graph_rules():
    def seeds(graph_seed, op_seeds):
        g = Graph()
        g.seed = graph_seed
        with g.as_default():
            return [random_seed.get_seed(s) for s in op_seeds]

    assert seeds(None, [None, 4]) == [(None, None), (random_seed.DEFAULT_GRAPH_SEED, 4)]
    assert seeds(11, [None, None, 9, None]) == [(11, 0), (11, 1), (11, 9), (11, 2)]
    assert seeds(11, [None]) == [(11, 0)]                 # counters are per graph
    g = Graph()
    with g.as_default():
        random_seed.set_random_seed(42)                   # graph mode: sets the graph seed
    assert g.seed == 42


# -- eager reproducibility ---------------------------------------------------------------------

def test_eager_seeded_stream_replays_after_set_seed():
    random_seed.set_seed(1)
    a = R.random_uniform([5], seed=2).numpy()
    b = R.random_uniform([5], seed=2).numpy()
    assert not np.array_equal(a, b)                       # same op seed: the stream continues
    random_seed.set_seed(1)
    np.testing.assert_array_equal(R.random_uniform([5], seed=2).numpy(), a)
    np.testing.assert_array_equal(R.random_uniform([5], seed=2).numpy(), b)


def test_eager_global_seed_only_replays():
    tf_random.set_seed(123)
    xs = [R.random_normal([4]).numpy() for _ in range(3)]
    assert not np.array_equal(xs[0], xs[1])
    tf_random.set_seed(123)
    for x in xs:
        np.testing.assert_array_equal(R.random_normal([4]).numpy(), x)
    tf_random.set_seed(124)
    assert not np.array_equal(R.random_normal([4]).numpy(), xs[0])


def test_eager_global_seed_stream_is_bounded():
    tf_random.set_seed(9)
    R.random_uniform([2])
    before = len(EAGER_CONTEXT.kernel_states._states)
    for _ in range(50):
        R.random_uniform([2])
    assert len(EAGER_CONTEXT.kernel_states._states) == before      # one stream, not one per call


def test_eager_different_op_seeds_differ_and_unseeded_differ():
    random_seed.set_seed(5)
    assert not np.array_equal(R.random_uniform([8], seed=1).numpy(),
                              R.random_uniform([8], seed=2).numpy())
    random_seed.set_seed(None)
    assert not np.array_equal(R.random_uniform([8]).numpy(), R.random_uniform([8]).numpy())


def test_op_seed_without_global_seed_is_reproducible_across_set_seed_none():
    random_seed.set_seed(None)
    a = R.truncated_normal([6], seed=77).numpy()
    random_seed.set_seed(None)
    np.testing.assert_array_equal(R.truncated_normal([6], seed=77).numpy(), a)


# -- graph reproducibility ---------------------------------------------------------------------

def _graph(graph_seed=None, op_seed=None):
    g = Graph()
    g.seed = graph_seed
    with g.as_default():
        a = R.random_uniform([6], seed=op_seed)
        b = R.random_uniform([6], seed=op_seed)
    return g, a, b


def test_graph_seed_makes_graphs_reproducible():
    g1, a1, b1 = _graph(graph_seed=10)
    g2, a2, b2 = _graph(graph_seed=10)
    x1, y1 = run(g1, [a1, b1])
    x2, y2 = run(g2, [a2, b2])
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(x1, y1)                     # two ops of one graph differ
    g3, a3, _ = _graph(graph_seed=11)
    assert not np.array_equal(run(g3, [a3])[0], x1)


def test_graph_runs_advance_and_new_context_replays():
    g, a, _ = _graph(graph_seed=1, op_seed=2)
    ctx = RuntimeContext()
    first, second = run(g, [a], ctx)[0], run(g, [a], ctx)[0]
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(run(g, [a], RuntimeContext())[0], first)


def test_graph_op_seed_only_uses_default_graph_seed():
    g1, a1, _ = _graph(op_seed=3)
    g2, a2, _ = _graph(op_seed=3)
    assert a1.op.inputs[0].op.type == "Const"
    rnd = a1.op if a1.op.type == "RandomUniform" else a1.op.inputs[0].op
    assert rnd.attrs["seed"] == random_seed.DEFAULT_GRAPH_SEED and rnd.attrs["seed2"] == 3
    np.testing.assert_array_equal(run(g1, [a1])[0], run(g2, [a2])[0])


def test_graph_names_and_static_shapes():
    g = Graph()
    with g.as_default():
        u = R.random_uniform([2, 3], 1.0, 2.0, seed=1)
        n = R.random_normal([4])
        t = R.truncated_normal([5, 1], dtype=dtypes.float64)
        i = R.random_uniform([7], 0, 10, dtype=dtypes.int64)
        p = placeholder(dtypes.int32, [3])
        d = R.random_uniform(p)
    ops = {o.name: o for o in g.get_operations()}
    assert ops["random_uniform/RandomUniform"].type == "RandomUniform"
    assert ops["random_uniform/shape"].type == "Const"
    assert {"random_uniform/min", "random_uniform/max"} <= set(ops)
    assert ops["random_normal/RandomStandardNormal"].attrs["dtype"] is dtypes.float32
    assert ops["truncated_normal/TruncatedNormal"].attrs["dtype"] is dtypes.float64
    # as in TF, the result is named by the scope: AddV2 `random_uniform`, the int op itself
    assert ops["random_uniform"].type == "AddV2" and u.op.name == "random_uniform"
    assert ops["random_uniform_1"].type == "RandomUniformInt"
    assert ops["random_uniform_1"].attrs["Tout"] is dtypes.int64
    for op in ops.values():
        if op.type.startswith(("Random", "Truncated")):
            assert op.is_stateful and {"seed", "seed2"} <= set(op.attrs)
    assert u.shape == TensorShape([2, 3]) and n.shape == TensorShape([4])
    assert t.shape == TensorShape([5, 1]) and i.shape == TensorShape([7])
    assert d.shape.as_list() == [None, None, None]
    # a shape known in part (a batch size stacked with constants): TF's MakeShapeFromShapeTensor
    with g.as_default():
        images = placeholder(dtypes.float32, [None, 8, 8, 1])
        batch = ndflow.shape(images)[0]
        flips = R.random_uniform(ndflow.stack([batch, 1, 1, 1]))
        noise = R.random_normal(ndflow.shape(images))
    assert flips.shape.as_list() == [None, 1, 1, 1]
    assert noise.shape.as_list() == [None, 8, 8, 1]
    (dv,) = run(g, [d], feeds={p: np.array([2, 1, 3], np.int32)})
    assert dv.shape == (2, 1, 3)


# -- distributions -----------------------------------------------------------------------------

def test_uniform_float_range_and_moments():
    x = R.random_uniform([20000], -3.0, 5.0, seed=4).numpy()
    assert x.dtype == np.float32 and x.min() >= -3.0 and x.max() < 5.0
    assert abs(x.mean() - 1.0) < 0.1 and abs(x.var() - 64.0 / 12) < 0.3
    y = R.random_uniform([10000]).numpy()
    assert y.min() >= 0.0 and y.max() < 1.0 and abs(y.mean() - 0.5) < 0.02


def test_uniform_int_range_covers_all_values():
    x = R.random_uniform([5000], -2, 3, dtype=dtypes.int32, seed=9).numpy()
    assert x.dtype == np.int32 and set(np.unique(x)) == {-2, -1, 0, 1, 2}
    counts = np.bincount(x + 2)
    assert counts.min() > 800


def test_normal_moments():
    x = R.random_normal([40000], mean=3.0, stddev=2.0, dtype=dtypes.float64, seed=1).numpy()
    assert x.dtype == np.float64
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.std() - 2.0) < 0.05


def test_truncated_normal_within_two_stddev():
    x = R.truncated_normal([40000], mean=-1.0, stddev=0.5, seed=2).numpy()
    assert x.min() >= -2.0 and x.max() <= 0.0          # mean +- 2 stddev
    assert abs(x.mean() + 1.0) < 0.02
    assert abs(x.std() - 0.5 * 0.87962566103423978) < 0.01


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16, dtypes.float64])
def test_low_and_double_precision(dtype):
    for fn in (R.random_uniform, R.random_normal, R.truncated_normal):
        x = fn([1000], dtype=dtype, seed=3)
        assert x.dtype is dtype and x.shape == TensorShape([1000])
    t = R.truncated_normal([5000], dtype=dtype).numpy()
    assert np.abs(t).max() <= 2.0


def test_shuffle_is_a_permutation_of_rows():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = R.random_shuffle(constant(x), seed=5).numpy()
    assert sorted(map(tuple, y)) == sorted(map(tuple, x))
    assert any(not np.array_equal(R.random_shuffle(constant(x)).numpy(), x) for _ in range(5))
    np.testing.assert_array_equal(tf_random.shuffle(constant(3.0)).numpy(), 3.0)


# -- errors ------------------------------------------------------------------------------------

def test_errors():
    with pytest.raises(InvalidArgumentError, match=r"Need minval < maxval: 5 >= 5 "
                                                   r"\[Op:RandomUniformInt\]"):
        R.random_uniform([2], 5, 5, dtype=dtypes.int32)
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        R.random_uniform([2], dtype=dtypes.int32)
    with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
        R.random_uniform([2], dtype=dtypes.uint8)
    with pytest.raises(InvalidArgumentError, match="must be >= 0"):
        R.random_normal([2, -1])
    # TF 2.21's message: the float mean cannot become an int32 tensor.
    with pytest.raises(TypeError, match="Cannot convert 0.0 to EagerTensor of dtype int32"):
        R.random_normal([2], dtype=dtypes.int32)


def test_namespace():
    assert tf_random.uniform is R.random_uniform and tf_random.normal is R.random_normal
    assert tf_random.truncated_normal is R.truncated_normal
    assert tf_random.set_seed is random_seed.set_seed
