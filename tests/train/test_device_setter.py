"""tf.compat.v1.train.replica_device_setter: the devices it gives variables and compute ops
equal TF 2.21's (tests/fixtures/replica_device_setter: round-robin ps tasks, a ClusterSpec,
worker devices, merging with inner device scopes, custom ps ops, merge_devices=False); device
functions in graphs (`tf.compat.v1.device`, `Graph.device`) and TF's refusals; the greedy
load-balancing strategy by bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tensorboard.compat.proto import node_def_pb2

import ndflow as tf
from ndflow.train.device_setter import GreedyLoadBalancingStrategy, byte_size_load_fn
from tests import fixture_modules

v1 = tf.compat.v1
HERE = Path(__file__).parents[1] / "fixtures" / "replica_device_setter"
cases = fixture_modules.load("replica_device_setter", "cases")
WANT = json.loads((HERE / "expected.json").read_text())


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_devices_match_tensorflow(case):
    assert cases.CASES[case](tf) == WANT[case]


def test_a_graph_under_the_setter_runs():
    with tf.Graph().as_default() as g:
        with g.device(v1.train.replica_device_setter(ps_tasks=2)):
            a = tf.Variable(2.0)
            y = a * 3.0
        assert a.handle.op.device == "/job:ps/task:0" and y.op.device == "/job:worker"
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(y) == 6.0


def test_device_functions_nest_with_device_strings():
    """The placements TF 2.21 makes of the same program (checked there)."""
    with tf.Graph().as_default():
        seen = []

        def fn(op):
            seen.append((op.name, op.device))
            return "/job:fn/device:CPU:0" if op.type == "Const" else op.device

        with tf.device("/job:outer/task:3"):
            with v1.device(fn):
                c = tf.constant(1.0, name="c")
                i = tf.identity(c, name="i")
                with tf.device("/job:inner"):
                    j = tf.identity(c, name="j")
                with tf.device(None):
                    k = tf.identity(c, name="k")
                with v1.device(lambda op: tf.DeviceSpec.from_string("/device:GPU:1")):
                    m = tf.identity(c, name="m")
                with v1.device(lambda op: None):
                    with pytest.raises(TypeError, match="Expected binary or unicode string, "
                                                        "got None"):
                        tf.identity(c, name="bad")
                assert c.consumers() == [i.op, j.op, k.op, m.op]  # none for the failed op
        # inner scopes first: each function sees the op as placed so far, and each string
        # scope fills what is still unset
        assert [t.op.device for t in (c, i, j, k, m)] == [
            "/job:fn/task:3/device:CPU:0", "/job:outer/task:3", "/job:inner/task:3", "",
            "/job:outer/task:3/device:GPU:1"]
        assert seen == [("c", ""), ("i", ""), ("j", "/job:inner"), ("m", "/device:GPU:1")]


def test_refusals_are_tensorflows():
    with pytest.raises(RuntimeError, match="tf.device does not support functions."):
        with tf.device(lambda op: ""):
            pass
    with pytest.raises(RuntimeError, match="tf.device does not support functions when eager "
                                           "execution is enabled"):
        with v1.device(lambda op: ""):
            pass
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        v1.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_node_defs_are_placed_too():
    fn = v1.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:7")
    var = node_def_pb2.NodeDef(name="v", op="VarHandleOp")
    mul = node_def_pb2.NodeDef(name="m", op="Mul", device="/device:GPU:1")
    assert fn(var) == "/job:ps/task:0" and fn(var) == "/job:ps/task:1"
    assert fn(mul) == "/job:worker/task:7/device:GPU:1"


def test_greedy_strategy_balances_bytes():
    with tf.Graph().as_default():
        greedy = GreedyLoadBalancingStrategy(2, byte_size_load_fn)
        with v1.device(v1.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
            big = tf.Variable(tf.zeros([100, 10]), name="big")      # 4000 bytes -> task 0
            small = tf.Variable(tf.zeros([10], tf.float64), name="small")  # 80 -> task 1
            mid = tf.Variable(tf.zeros([30]), name="mid")           # 120 -> task 1 (80 < 4000)
            last = tf.Variable(tf.zeros([], tf.int64), name="last")  # 8 -> task 1 (200 < 4000)
        devices = [v.handle.op.device for v in (big, small, mid, last)]
        assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1",
                           "/job:ps/task:1"]
        assert byte_size_load_fn(big.handle.op) == 4000
        assert byte_size_load_fn(small.handle.op) == 80
