"""The debugging and execution switches programs set at start-up, against TensorFlow 2.21
(tests/fixtures/tf_debug_switches, written by its generate.py): check numerics, device
placement logging, op determinism, synchronous execution, device policies and details, and
the deprecated `experimental_run_functions_eagerly` aliases. Every test that turns a
process-wide switch on turns it off again in a fixture."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import time

import numpy as np
import pytest
import torch

import ndflow as tf
from ndflow.core import context, determinism
from ndflow.core.errors import InvalidArgumentError
from ndflow.ops import random_generator
from ndflow.runtime import eager, execution_config, plan

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_debug_switches",
                       "debug_switches.json")
with open(FIXTURE) as _f:
    TF = json.load(_f)

_EAGER_PREFIX = ("{{function_node __wrapped__CheckNumericsV2_device_/job:localhost/replica:0/"
                 "task:0/device:CPU:0}} ")


@pytest.fixture
def check_numerics():
    tf.debugging.enable_check_numerics()
    try:
        yield
    finally:
        tf.debugging.disable_check_numerics()


@pytest.fixture
def op_determinism():
    saved_seed = context.state().seed
    tf.random.set_seed(None)
    execution_config.enable_op_determinism()
    try:
        yield
    finally:
        execution_config.disable_op_determinism()
        context.state().seed = saved_seed


@pytest.fixture
def placement_logging(monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    tf.debugging.set_log_device_placement(True)
    try:
        yield
    finally:
        tf.debugging.set_log_device_placement(False)


def _tf_eager_text(key: str) -> str:
    kind, text = TF["check_numerics"][key]
    assert kind == "InvalidArgumentError"
    assert text.startswith(_EAGER_PREFIX) and text.endswith(" name: ")
    return text[len(_EAGER_PREFIX):-len(" name: ")]  # ndflow's eager errors omit both


# -- check numerics ------------------------------------------------------------------------

EAGER_CASES = {
    "eager_log": lambda: tf.math.log(tf.constant([1.0, 0.0])),
    "eager_div": lambda: 1.0 / tf.constant([[1.0, 0.0]], tf.float64),
    "eager_mixed": lambda: tf.math.log(tf.constant([-1.0, 0.0, 1.0, 2.0])),
    "eager_nan_add": lambda: tf.constant([np.nan]) + 1.0,
}


@pytest.mark.parametrize("key", sorted(EAGER_CASES))
def test_check_numerics_eager_message(check_numerics, key):
    with pytest.raises(InvalidArgumentError) as info:
        EAGER_CASES[key]()
    assert str(info.value) == _tf_eager_text(key)


def test_check_numerics_skips_integers_and_safe_ops(check_numerics):
    assert TF["check_numerics"]["int_ok"] and TF["check_numerics"]["reshape_ok"]
    assert tf.constant([1, 0]) // tf.constant([1, 1]) is not None
    nan = tf.constant([np.nan])
    assert np.isnan(tf.reshape(nan, [1]).numpy()).all()  # a "safe" op: moves values only


def _graph_parts(text: str) -> tuple:
    """(head line, the report from "!!!" to the stack trace, the tail's first line)."""
    head = text.split("\n")[2]
    body = text[text.index("!!! Detected"):text.index("  Stack trace")]
    tail = text[text.index(" : Tensor had"):text.index("]]") + 2]
    return head, body, tail


def test_check_numerics_in_function(check_numerics):
    @tf.function
    def f(x):
        return tf.math.log(x, name="mylog") * 2.0

    with pytest.raises(InvalidArgumentError) as info:
        f(tf.constant([1.0, 0.0]))
    text = str(info.value)
    assert _graph_parts(text) == _graph_parts(TF["check_numerics"]["graph"][1])
    assert text.startswith("Graph execution error:\n\nDetected at node mylog/CheckNumericsV2")
    # the op's creation stack: this test's frames, marked as user code
    this_file = __file__ if len(__file__) <= 50 else "..." + __file__[-50:]
    assert f"    + {this_file} (L" in text and " -> |   \n" in text
    assert "in test_check_numerics_in_function\n" in text


def test_check_numerics_graph_constant(check_numerics):
    @tf.function
    def with_const(x):
        return tf.constant([np.inf], name="cc") + x

    with pytest.raises(InvalidArgumentError) as info:
        with_const(tf.constant([1.0]))
    text, tf_text = str(info.value), TF["check_numerics"]["graph_const"][1]
    body, tail = _graph_parts(text)[1:]
    tf_body, tf_tail = _graph_parts(tf_text)[1:]
    assert body == tf_body
    assert tail.split("\n")[0] == tf_tail.split("\n")[0] == " : Tensor had +Inf values"
    assert "Detected at node cc/CheckNumericsV2 defined at" in text  # TF: CheckNumericsV2_1
    with pytest.raises(InvalidArgumentError):  # every call
        with_const(tf.constant([1.0]))


def test_check_numerics_in_session(check_numerics):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None])
        y = tf.math.log(x, name="lg")
    with tf.compat.v1.Session(graph=g) as sess:
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(y, {x: [0.0]})
        np.testing.assert_array_equal(sess.run(y, {x: [1.0]}), [0.0])  # still usable
    text, tf_text = str(info.value), TF["check_numerics"]["session"][1]
    assert _graph_parts(text) == _graph_parts(tf_text)
    node_line = "Node: 'lg/CheckNumericsV2'\n!!! Detected"
    assert node_line in tf_text and node_line in text
    assert "Graph name" not in text  # a TF1 graph has none


def test_disable_check_numerics():
    @tf.function
    def checked(x):
        return tf.math.log(x)

    @tf.function
    def unchecked(x):
        return tf.math.log(x)

    zero = tf.constant([0.0])
    tf.debugging.enable_check_numerics()
    tf.debugging.enable_check_numerics(stack_height_limit=5)  # idempotent
    try:
        with pytest.raises(InvalidArgumentError):
            checked(zero)
    finally:
        tf.debugging.disable_check_numerics()
    tf.debugging.disable_check_numerics()  # idempotent
    assert tf.math.log(zero).numpy().tolist() == TF["check_numerics"]["after_disable"]
    assert unchecked(zero).numpy().tolist() == [-np.inf]
    # TF: a graph instrumented while on keeps its checks
    with pytest.raises(InvalidArgumentError):
        checked(zero)
    # nothing left on the hot paths
    assert context.hooks.eager_execute is eager.eager_execute
    assert plan.KERNEL_WRAPPERS == []


def test_check_numerics_stack_height_limit():
    @tf.function
    def f(x):
        return tf.math.log(x)

    tf.debugging.enable_check_numerics(stack_height_limit=1, path_length_limit=10)
    try:
        with pytest.raises(InvalidArgumentError) as info:
            f(tf.constant([0.0]))
    finally:
        tf.debugging.disable_check_numerics()
    text = str(info.value)
    assert re.search(r"    \+ \.\.\. \(Omitted \d+ frames\)\n", text)
    assert f"    + ...{__file__[-10:]} (L" in text and text.count(" -> |   \n") == 1


# -- device placement logging --------------------------------------------------------------

def _kernel_lines(text: str) -> set:
    return {line for line in text.splitlines()
            if ": (" in line and "(_Arg)" not in line and "(_Retval)" not in line
            and "(Placeholder)" not in line}


def test_log_device_placement(placement_logging, capsys):
    assert not TF["placement"]["default"]
    assert tf.debugging.get_log_device_placement()
    a = tf.constant([[1.0, 2.0]])
    capsys.readouterr()
    tf.matmul(a, a, transpose_b=True)
    err = capsys.readouterr().err
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert f"] Executing op MatMul in device {device}\n" in err
    tf_eager = TF["placement"]["executing_lines"][1]
    assert tf_eager.endswith(f" in device {device}")  # TF names MKL's rewrite, _MklMatMul

    @tf.function
    def f(x):
        return tf.matmul(x, x, transpose_b=True) + 1.0

    f(a)
    first = capsys.readouterr()
    f(a)
    second = capsys.readouterr()
    tf_out = TF["placement"]["stdout"]
    tf_function = tf_out[tf_out.index("---function"):tf_out.index("---second")]
    assert _kernel_lines(first.out) == _kernel_lines(tf_function)
    assert _kernel_lines(second.out) == set()  # placed on the first run only, as in TF
    for captured in (first, second):
        assert re.search(rf"\] Executing op \S+ in device {device}\n", captured.err)
    tf.debugging.set_log_device_placement(False)
    tf.matmul(a, a, transpose_b=True)
    assert "Executing op" not in capsys.readouterr().err
    assert context.hooks.eager_execute is eager.eager_execute


def test_session_and_global_placement_log_once(placement_logging, capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [1], name="x")
        y = tf.math.exp(x, name="ex")
    config = tf.compat.v1.ConfigProto(log_device_placement=True)
    with tf.compat.v1.Session(graph=g, config=config) as sess:
        capsys.readouterr()
        sess.run(y, {x: [1.0]})
    out = capsys.readouterr().out
    assert out.count("ex: (Exp): /job:localhost/replica:0/task:0/device:CPU:0\n") == 1


# -- op determinism ------------------------------------------------------------------------

def _determinism_cases():
    def v1_graph():
        with tf.Graph().as_default():
            tf.compat.v1.random_uniform([2])

    return {
        "uniform": lambda: tf.random.uniform([2]),
        "uniform_op_seed": lambda: tf.random.uniform([2], seed=1),
        "shuffle": lambda: tf.random.shuffle([1, 2, 3]),
        "dropout": lambda: tf.nn.dropout(tf.ones([4]), 0.5),
        "in_function": lambda: tf.function(lambda: tf.random.normal([2]))(),
        "v1_graph": v1_graph,
        "stateless": lambda: tf.random.stateless_uniform([2], [1, 2]),
        "unsorted_segment_sum": lambda: tf.math.unsorted_segment_sum(tf.ones([3]),
                                                                     [0, 1, 0], 2),
        "get_global_generator": tf.random.get_global_generator,
        "from_non_deterministic_state": tf.random.Generator.from_non_deterministic_state,
        "bbox_v2": lambda: tf.image.sample_distorted_bounding_box([4, 4, 1],
                                                                  tf.zeros([1, 0, 4])),
        "bbox_v1": lambda: tf.compat.v1.image.sample_distorted_bounding_box(
            [4, 4, 1], tf.zeros([1, 0, 4])),
    }


@pytest.mark.parametrize("key", sorted(_determinism_cases()))
def test_op_determinism_like_tf(op_determinism, monkeypatch, key):
    monkeypatch.setattr(random_generator, "_global_generator", None)
    expected = TF["determinism"][key]
    if expected is None:
        _determinism_cases()[key]()
        return
    kind = {"RuntimeError": RuntimeError, "ValueError": ValueError}[expected[0]]
    with pytest.raises(kind) as info:
        _determinism_cases()[key]()
    assert expected[1] in str(info.value)  # in a function: under AutoGraph's "in user code"


def test_op_determinism_switches_aten(op_determinism):
    assert determinism.enabled() and torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.backends.cudnn.deterministic
    assert TF["determinism"]["after_set_seed"] is None
    tf.random.set_seed(1)
    a = tf.random.uniform([3]).numpy()
    tf.random.set_seed(1)
    np.testing.assert_array_equal(tf.random.uniform([3]).numpy(), a)


def test_op_determinism_orders_parallel_map(op_determinism):
    def slow_first(x):
        def f(v):
            if int(v) == 0:
                time.sleep(0.3)  # without the override, element 0 would come last
            return v
        return tf.py_function(f, [x], tf.int64)

    ds = tf.data.Dataset.range(8).map(slow_first, num_parallel_calls=4, deterministic=False)
    assert [int(v) for v in ds] == list(range(8))  # TF: `deterministic` overridden to True


def test_op_determinism_off_by_default():
    assert not determinism.enabled()
    assert not torch.are_deterministic_algorithms_enabled()


# -- execution settings --------------------------------------------------------------------

def test_synchronous_execution():
    ex = TF["execution"]
    try:
        assert tf.config.experimental.get_synchronous_execution() is ex["sync_default"]
        tf.config.experimental.set_synchronous_execution(False)
        assert tf.config.experimental.get_synchronous_execution() is ex["sync_off"]
        tf.config.experimental.set_synchronous_execution(None)
        assert tf.config.experimental.get_synchronous_execution() is ex["sync_none"]
    finally:
        tf.config.experimental.set_synchronous_execution(True)


def test_device_policy():
    ex = TF["execution"]
    try:
        assert tf.config.experimental.get_device_policy() == ex["policy_default"]
        for policy, expected in ex["policies"].items():
            tf.config.experimental.set_device_policy(None if policy == "None" else policy)
            assert tf.config.experimental.get_device_policy() == expected
        for bad, key in (("bad", "policy_bad"), (1, "policy_int")):
            with pytest.raises(ValueError) as info:
                tf.config.experimental.set_device_policy(bad)
            assert [type(info.value).__name__, str(info.value)] == ex[key]
    finally:
        tf.config.experimental.set_device_policy(None)


def test_device_details():
    ex = TF["execution"]
    cpu = tf.config.list_physical_devices("CPU")[0]
    assert tf.config.experimental.get_device_details(cpu) == ex["cpu_details"]
    for bad, key in (("CPU:0", "details_str"), (None, "details_none")):
        with pytest.raises(ValueError) as info:
            tf.config.experimental.get_device_details(bad)
        assert [type(info.value).__name__, str(info.value)] == ex[key]
    for gpu in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(gpu)
        assert set(details) == {"device_name", "compute_capability"}
        assert len(details["compute_capability"]) == 2


def test_experimental_run_functions_eagerly(monkeypatch):
    monkeypatch.setattr(execution_config, "_warned", set())
    ex = TF["execution"]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    tf.get_logger().addHandler(handler)
    try:
        tf.config.experimental_run_functions_eagerly(True)
        on = [tf.config.experimental_functions_run_eagerly(), tf.config.functions_run_eagerly()]
        tf.config.experimental_run_functions_eagerly(False)
        off = tf.config.experimental_functions_run_eagerly()
    finally:
        tf.get_logger().removeHandler(handler)
        tf.config.run_functions_eagerly(False)
    assert on == ex["eagerly_on"] and off is ex["eagerly_off"]

    def normalized(text):
        text = re.sub(r"From \S+:\d+: ", "From FILE: ", text)
        return re.sub(r"\(from [\w.]+\)", "(from MODULE)", text)

    assert normalized(stream.getvalue()) == normalized(ex["deprecation_log"])  # once each
    assert f"From {__file__}:" in stream.getvalue()
