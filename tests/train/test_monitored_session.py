"""tf.compat.v1.train.MonitoredTrainingSession / MonitoredSession and the basic hooks, with
TensorFlow's semantics: hook fetches ride in the caller's Session.run, StopAtStepHook stops at
the global step, checkpoints are written at creation, every N steps and at the end, and a
new session resumes from them; an exhausted input ends the loop normally."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _counting_graph():
    step = v1.train.get_or_create_global_step()
    x = tf.Variable(0.0, name="x")
    train = tf.group(x.assign_add(1.0), step.assign_add(1))
    return step, x, train


class Recorder(v1.train.SessionRunHook):
    def __init__(self, fetch):
        self.fetch, self.calls, self.results = fetch, [], []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append(("created", float(session.run(self.fetch))))

    def before_run(self, run_context):
        assert isinstance(run_context.original_args, v1.train.SessionRunArgs)
        return v1.train.SessionRunArgs({"x": self.fetch})

    def after_run(self, run_context, run_values):
        self.results.append(float(run_values.results["x"]))

    def end(self, session):
        self.calls.append("end")


def test_hooks_see_fetches_and_stop_at_last_step():
    with tf.Graph().as_default():
        step, x, train = _counting_graph()
        rec = Recorder(x)
        runs = 0
        with v1.train.MonitoredTrainingSession(
                hooks=[v1.train.StopAtStepHook(last_step=5), rec]) as sess:
            while not sess.should_stop():
                assert sess.run(train) is None
                runs += 1
        assert runs == 5
        assert rec.calls == ["begin", ("created", 0.0), "end"]
        # Fetched in the same run as the update: either side of it is allowed by TF; ndflow
        # reads before the (unordered) assignment.
        assert rec.results in ([0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0])
        assert tf.compat.v1.get_default_graph().finalized


def test_stop_at_step_num_steps_counts_from_restored_step(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        step, x, train = _counting_graph()
        with v1.train.MonitoredTrainingSession(
                checkpoint_dir=d, save_summaries_steps=None, log_step_count_steps=None,
                hooks=[v1.train.StopAtStepHook(last_step=3)]) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert v1.train.latest_checkpoint(d).endswith("model.ckpt-3")
    assert os.path.exists(os.path.join(d, "graph.pbtxt"))
    with tf.Graph().as_default():
        step, x, train = _counting_graph()
        with v1.train.MonitoredTrainingSession(
                checkpoint_dir=d, save_summaries_steps=None, log_step_count_steps=None,
                hooks=[v1.train.StopAtStepHook(num_steps=2)]) as sess:
            assert sess.run(step) == 3 and sess.run(x) == 3.0  # restored, not initialized
            while not sess.should_stop():
                sess.run(train)
            assert sess.run(step) == 5
    assert v1.train.latest_checkpoint(d).endswith("model.ckpt-5")


def test_checkpoint_saver_hook_every_n_steps(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        step, x, train = _counting_graph()
        saver = v1.train.Saver(max_to_keep=None)
        hooks = [v1.train.CheckpointSaverHook(d, save_steps=2, saver=saver),
                 v1.train.StopAtStepHook(last_step=5)]
        with v1.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)
    steps = sorted(int(p.rsplit("-", 1)[1]) for p in
                   v1.train.get_checkpoint_state(d).all_model_checkpoint_paths)
    assert steps == [0, 2, 4, 5]


def test_nan_tensor_hook():
    with tf.Graph().as_default():
        v1.train.get_or_create_global_step()
        loss = v1.placeholder(tf.float32, [])
        with pytest.raises(v1.train.NanLossDuringTrainingError, match="NaN loss during"):
            with v1.train.MonitoredSession(hooks=[v1.train.NanTensorHook(loss)]) as sess:
                sess.run(loss, {loss: 1.0})
                sess.run(loss, {loss: np.nan})
    with tf.Graph().as_default():
        loss = v1.placeholder(tf.float32, [])
        with v1.train.MonitoredSession(
                hooks=[v1.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
            sess.run(loss, {loss: np.nan})
            assert sess.should_stop()


def test_out_of_range_ends_the_loop_normally():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(3)
        nxt = v1.data.make_one_shot_iterator(ds).get_next()
        rec = Recorder(tf.constant(0.0))
        seen = []
        with v1.train.MonitoredSession(hooks=[rec]) as sess:
            while not sess.should_stop():
                seen.append(int(sess.run(nxt)))
        assert seen == [0, 1, 2] and rec.calls[-1] == "end"


def test_conflicting_feeds_and_bad_arguments():
    class Feeder(v1.train.SessionRunHook):
        def __init__(self, t):
            self.t = t

        def before_run(self, run_context):
            return v1.train.SessionRunArgs(None, feed_dict={self.t: 1.0})

    with tf.Graph().as_default():
        p = v1.placeholder(tf.float32, [])
        doubled = p * 2
        with v1.train.MonitoredSession(hooks=[Feeder(p)]) as sess:
            assert sess.run(doubled) == 2.0
            with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
                sess.run(p, {p: 3.0})
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        v1.train.StopAtStepHook()
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="Global step should be created"):
            v1.train.MonitoredSession(hooks=[v1.train.StopAtStepHook(last_step=1)])


def test_logging_tensor_hook(caplog):
    # TF's format: "tag = value, ..." (tags in order, dict keys sorted), the seconds since the
    # last log after the first, every_n_iter local steps, a formatter, at_end; names resolve
    # to tensors ("x" is "x:0")
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        v = v1.Variable([1.5, 2.0], name="v")
        inc = v1.assign_add(step, 1)
        tf.identity(tf.reduce_sum(v), name="total")   # logged by its name
        hooks = [v1.train.LoggingTensorHook({"v": v.value(), "step": step}, every_n_iter=2),
                 v1.train.LoggingTensorHook(["total"], at_end=True),
                 v1.train.LoggingTensorHook(
                     [step], every_n_iter=3,
                     formatter=lambda d: f"steps {[int(x) for x in d.values()]}")]
        with caplog.at_level("INFO", logger="tensorflow"), \
                v1.train.MonitoredSession(hooks=hooks) as sess:
            for _ in range(5):
                sess.run(inc)
    logged = [r.getMessage() for r in caplog.records
              if "=" in r.getMessage() or r.getMessage().startswith("steps")]
    assert logged[0] == "step = 0, v = [1.5 2. ]"
    assert logged[1] == "steps [0]"
    assert logged[2].startswith("step = 2, v = [1.5 2. ] (") and logged[2].endswith(" sec)")
    assert logged[3] == "steps [3]"
    assert logged[4].startswith("step = 4, v = [1.5 2. ] (")
    assert logged[5] == "total = 3.5"
    with pytest.raises(ValueError, match="either at_end and/or exactly one of"):
        v1.train.LoggingTensorHook(["x"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        v1.train.LoggingTensorHook(["x"], every_n_iter=0)


def test_feed_fn_and_final_ops_hooks(caplog):
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [])
        total = v1.Variable(0.0)
        add = v1.assign_add(total, x)
        feeds = iter([1.0, 2.0, 4.0])
        final = v1.train.FinalOpsHook({"total": total.value(), "doubled": total.value() * 2})
        with v1.train.MonitoredSession(hooks=[
                v1.train.FeedFnHook(lambda: {x: next(feeds)}), final]) as sess:
            assert [float(sess.run(add)) for _ in range(3)] == [1.0, 3.0, 7.0]
        assert {k: float(v) for k, v in final.final_ops_values.items()} == {
            "total": 7.0, "doubled": 14.0}
    with tf.Graph().as_default():   # a final op that reads input again: TF's warning, re-raised
        nxt = v1.data.make_one_shot_iterator(tf.data.Dataset.range(1)).get_next()
        hook = v1.train.FinalOpsHook(nxt)
        with pytest.raises(tf.errors.OutOfRangeError):
            with caplog.at_level("WARNING", logger="tensorflow"), \
                    v1.train.MonitoredSession(hooks=[hook]) as sess:
                sess.run(nxt)
        assert "exception is raised by the code in FinalOpsHook" in caplog.text
