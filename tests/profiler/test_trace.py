"""tf.profiler.experimental: the trace-event file it writes (format, nesting, coverage of the
step), the summaries beside it, TensorFlow's errors, and Keras' profile_batch."""

from __future__ import annotations

import gzip
import json
import socket

import numpy as np
import pytest

import ndflow as tf
from ndflow.core import errors
from ndflow.runtime import plan as plan_module

REQUIRED_X = ("name", "ph", "ts", "dur", "pid", "tid")


@tf.function
def _step(x, w):
    h = tf.nn.relu(tf.matmul(x, w))
    return tf.reduce_sum(tf.matmul(h, w))


def _profile_steps(logdir, steps=3):
    x = tf.constant(np.ones((96, 96), np.float32))
    w = tf.constant(np.full((96, 96), 0.01, np.float32))
    _step(x, w)  # traced and compiled before profiling
    tf.profiler.experimental.start(str(logdir))
    for i in range(steps):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            _step(x, w)
    tf.profiler.experimental.stop()
    [run] = list((logdir / "plugins" / "profile").iterdir())
    return run


def _events(run):
    with gzip.open(run / f"{socket.gethostname()}.trace.json.gz", "rt") as f:
        return json.load(f)


def _check_nesting(spans):
    """Per track, spans sorted by start form a forest: each starts and ends inside its
    parent. Returns {id(span): parent}."""
    parents = {}
    by_track: dict = {}
    for e in spans:
        by_track.setdefault((e["pid"], e["tid"]), []).append(e)
    for track in by_track.values():
        stack = []
        for e in track:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-6:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + 1e-3, (e, top)
                parents[id(e)] = top
            stack.append(e)
    return parents


def test_trace_is_valid_nested_and_covers_the_step(tmp_path):
    run = _profile_steps(tmp_path)
    doc = _events(run)
    events = doc["traceEvents"]
    assert events and all("ph" in e and "pid" in e for e in events)
    spans = [e for e in events if e["ph"] == "X"]
    for e in spans:
        for k in REQUIRED_X:
            assert k in e, (k, e)
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert any(n.startswith("/host:CPU") for n in names)
    parents = _check_nesting(spans)
    steps = [e for e in spans if e["cat"] == "user"]
    assert [s["args"]["step_num"] for s in steps] == ["0", "1", "2"]
    for step in steps:
        [plan] = [e for e in spans if e["cat"] == "plan" and parents.get(id(e)) is step]
        assert plan["name"].startswith("_step")
        nodes = [e for e in spans if e["cat"] == "node" and parents.get(id(e)) is plan]
        assert {e["args"]["op"] for e in nodes} >= {"MatMul", "Relu", "Sum"}
        kernels = [e for e in spans if e["cat"] == "kernel" and parents.get(id(e)) in nodes]
        assert len(kernels) == len(nodes)  # plan -> node -> kernel
        node_time = sum(e["dur"] for e in nodes)
        assert 0 < node_time <= plan["dur"] <= step["dur"]
    for name in ("nodes.csv", "op_types.csv", "iterations.csv", "reduced_precision.csv",
                 "profile.json"):
        assert (run / name).stat().st_size > 0
    # the program's Trace(step_num=...) spans are the iterations
    doc = json.loads((run / "profile.json").read_text())
    assert doc["key_node"] == "trace:train" and len(doc["iterations"]) == 3


def test_profiler_api_errors_and_profile_context(tmp_path):
    with pytest.raises(errors.UnavailableError, match="No profiler is running"):
        tf.profiler.experimental.stop()
    tf.profiler.experimental.start(str(tmp_path / "a"))
    try:
        with pytest.raises(errors.AlreadyExistsError, match="Another profiler is running"):
            tf.profiler.experimental.start(str(tmp_path / "b"))
    finally:
        tf.profiler.experimental.stop(save=False)
    assert plan_module._profiler is None
    assert not (tmp_path / "a" / "plugins").exists()  # save=False writes nothing
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(errors.FailedPreconditionError, match="Cannot write the profile"):
        tf.profiler.experimental.start(str(blocker / "logs"))
    with pytest.raises(errors.UnavailableError):  # the failed start left nothing running
        tf.profiler.experimental.stop()
    opts = tf.profiler.experimental.ProfilerOptions(host_tracer_level=3)
    assert opts == (3, 0, 1, None)
    with tf.profiler.experimental.Profile(str(tmp_path / "c"), options=opts):
        tf.reduce_sum(tf.constant([1.0, 2.0]))
        with tf.profiler.experimental.Trace("outside_any_plan") as t:
            t.set_metadata(note="x")
    [run] = list((tmp_path / "c" / "plugins" / "profile").iterdir())
    user = [e for e in _events(run)["traceEvents"] if e.get("cat") == "user"]
    assert [(e["name"], e["args"]) for e in user] == [("outside_any_plan", {"note": "x"})]
    with tf.profiler.experimental.Trace("no profiler"):  # a no-op when none is running
        pass


def test_keras_profile_batch_traces_those_batches(tmp_path):
    keras = tf.keras
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((24, 4), np.float32), np.ones((24, 1), np.float32)
    cb = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3), write_graph=False)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cb])
    [run] = list((tmp_path / "train" / "plugins" / "profile").iterdir())
    doc = json.loads((run / "profile.json").read_text())
    # batches 2 and 3: two calls of the train step's plan
    [train_plan] = [p for p in doc["plans"] if p["calls"] == 2 and p["kernels"] > 5]
    assert train_plan["calls"] == 2
    assert "MatMul" in {r["op_type"] for r in doc["op_types"]}
    assert plan_module._profiler is None


def test_summary_trace_on_with_profiler(tmp_path):
    x = tf.constant(np.ones((8, 8), np.float32))
    _step(x, x)
    tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=str(tmp_path / "prof"))
    assert plan_module._profiler is not None
    _step(x, x)
    with tf.summary.create_file_writer(str(tmp_path / "logs")).as_default():
        tf.summary.trace_export("step", step=0)
    assert plan_module._profiler is None  # trace_export stopped the profiler and saved
    [run] = list((tmp_path / "prof" / "plugins" / "profile").iterdir())
    assert json.loads((run / "profile.json").read_text())["plans"][0]["calls"] == 1
    tf.summary.trace_on(profiler=True)  # no directory: TF's warning, no profiler
    assert plan_module._profiler is None
    tf.summary.trace_off()
