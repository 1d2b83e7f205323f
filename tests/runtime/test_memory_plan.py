"""Per-plan memory plans (static and measured peaks of live intermediates) and
tf.config.experimental.get_memory_info / reset_memory_stats with TensorFlow's behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import dtypes
from ndflow.runtime import memory_plan
from ndflow.runtime.plan import Plan
from ndflow.runtime.state import RuntimeContext

v1 = tf.compat.v1
N = 1000  # float32 elements: 4000 bytes per value


def _plan(shape, body, fetch_extra=False):
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, shape, name="x")
        outs = body(x)
    fetches = outs if isinstance(outs, list) else [outs]
    return Plan(g, [x], fetches, [], RuntimeContext())


def _chain(x):
    a = x * 2.0              # live: a
    b = a + 1.0              # live: a, b (a dies after)
    return tf.nn.relu(b)     # live: b, c


def test_static_peak_of_a_chain():
    p = _plan([N], _chain)
    mp = p.memory_plan()
    assert mp.peak_bytes == 2 * 4 * N and not mp.measured and mp.num_steps == 3
    out = p.run([torch.ones(N)])
    np.testing.assert_allclose(out[0].numpy(), 3.0)
    assert p.memory_plan() is mp  # static plans are not re-measured


def test_unknown_shapes_are_measured_on_the_first_run():
    p = _plan(None, _chain)
    assert p.memory_plan().peak_bytes is None
    p.run([torch.ones(3 * N)])
    mp = p.memory_plan()
    assert mp.measured and mp.peak_bytes == 2 * 4 * 3 * N
    p.run([torch.ones(10 * N)])  # a later run does not change the figure
    assert p.memory_plan() is mp


def test_fetched_values_stay_live_and_unread_outputs_count_during_their_step():
    def body(x):
        a = x * 2.0
        b = a * 3.0  # a is fetched: it stays live to the end
        c = b + 1.0
        return [a, tf.nn.relu(c)]
    p = _plan([N], body)
    assert p.memory_plan().peak_bytes == 3 * 4 * N  # a + c + relu(c) at the last step


def test_views_and_forwarded_values_share_a_buffer():
    def body(x):
        a = x * 2.0
        r = tf.reshape(a, [10, N // 10])  # a view of a
        return tf.reshape(r + 1.0, [N])
    static = _plan([N], body)
    measured = _plan(None, body)
    measured.run([torch.ones(N)])
    assert static.memory_plan().peak_bytes == 2 * 4 * N
    assert measured.memory_plan().peak_bytes == 2 * 4 * N


def test_feeds_constants_and_variables_are_not_intermediates():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float32, None, name="x")
        c = tf.constant(np.ones(N, np.float32))
        v = tf.Variable(np.ones(N, np.float32))
        y = tf.identity(x) + c + v.read_value()  # the only new buffers: the two sums
    ctx = RuntimeContext()
    init = Plan(g, [], [], [v.initializer], ctx)
    init.run([])
    p = Plan(g, [x], [y], [], ctx)
    p.run([torch.ones(N)])
    assert p.memory_plan().peak_bytes == 2 * 4 * N


def test_static_sizes_from_shapes_and_dtypes():
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(dtypes.float64, [3, 5])
        y = tf.cast(x, dtypes.int32)
        s = tf.strings.as_string(y)
        i = tf.identity(y)
    assert memory_plan.static_size(y) == 3 * 5 * 4
    assert memory_plan.static_size(i) == 0
    assert memory_plan.static_size(s) == 0


def test_concrete_function_memory_plan():
    @tf.function(autograph=False)
    def f(x):
        return _chain(x)

    cf = f.get_concrete_function(tf.TensorSpec([N], tf.float32))
    assert cf.experimental_get_memory_plan() == {"peak": 2 * 4 * N, "measured": False,
                                                 "steps": 4}
    cf2 = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
    assert cf2.experimental_get_memory_plan()["peak"] is None
    cf2(tf.constant(np.ones(2 * N, np.float32)))
    assert cf2.experimental_get_memory_plan()["peak"] == 2 * 4 * 2 * N


@pytest.mark.parametrize("device,message", [
    ("CPU:0", "Allocator stats not available for device 'CPU:0'"),
    ("/device:CPU:0", "Allocator stats not available for device '/device:CPU:0'"),
    ("/job:localhost/replica:0/task:0/device:CPU:0", "Allocator stats not available"),
    ("CPU:1", "No matching devices found for 'CPU:1'"),
    ("cpu:0", "No matching devices found for 'cpu:0'"),
    ("foo", "Failed parsing device name: 'foo'"),
])
def test_get_memory_info_raises_as_tensorflow_does_on_cpu(device, message):
    with pytest.raises(ValueError, match=message):
        tf.config.experimental.get_memory_info(device)
    with pytest.raises(ValueError):
        tf.config.experimental.reset_memory_stats(device)
    with pytest.raises(ValueError):
        tf.config.experimental.get_memory_usage(device)


def test_reset_memory_stats_cpu_message():
    with pytest.raises(ValueError, match="Cannot reset memory stats for device 'CPU:0'"):
        tf.config.experimental.reset_memory_stats("CPU:0")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_gpu_memory_info_tracks_allocations():
    tf.config.experimental.reset_memory_stats("GPU:0")
    base = tf.config.experimental.get_memory_info("GPU:0")
    with tf.device("/GPU:0"):
        x = tf.ones([1024, 1024])
    info = tf.config.experimental.get_memory_info("GPU:0")
    assert info["peak"] >= base["current"] + 4 * 1024 * 1024 and x.shape == (1024, 1024)
