"""tf.compat.v1.train.Supervisor and basic_train_loop: a real training run in a tmp dir (the
chief initializes, its services write the graph, summaries, the step rate and checkpoints,
a second Supervisor resumes from the checkpoint), stopping, errors in the managed block, the
default ops it adds to the graph, non-chief workers; as TF 2.21 in graph mode."""

from __future__ import annotations

import glob
import os
import time

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _model():
    gs = v1.train.get_or_create_global_step()
    w = v1.get_variable("w", initializer=tf.constant([1.0, -2.0]))
    loss = tf.reduce_sum(w * w)
    v1.summary.scalar("loss", loss)
    train = v1.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=gs)
    return gs, w, train


def _events(logdir):
    out = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        out.extend(v1.train.summary_iterator(path))
    return out


def _wait_for(predicate, secs=20.0):
    end = time.time() + secs
    while not predicate() and time.time() < end:
        time.sleep(0.01)
    return predicate()


def test_training_run_with_services_and_resume(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default() as g:
        gs, w, train = _model()
        sv = v1.train.Supervisor(logdir=logdir, save_summaries_secs=0.02, save_model_secs=0.02)
        assert g.finalized and sv.is_chief and sv.global_step is not None
        assert sv.save_path == os.path.join(logdir, "model.ckpt")
        for key in ("init_op", "ready_op", "summary_op"):
            assert g.get_collection(key) == [getattr(sv, key)]
        assert len(g.get_collection("local_init_op")) == 1
        with sv.managed_session() as sess:
            for _ in range(3):
                sess.run(train)
            np.testing.assert_allclose(sess.run(w), np.array([1.0, -2.0]) * 0.5 ** 3)
            assert _wait_for(lambda: v1.train.latest_checkpoint(logdir) is not None)
            assert _wait_for(lambda: any(e.summary.value and e.summary.value[0].tag == "loss"
                                         for e in _events(logdir)))
            sv.request_stop()
            assert sv.should_stop()
        assert not sv.should_stop() or sv.coord.should_stop()
    assert os.path.exists(os.path.join(logdir, "graph.pbtxt"))
    events = _events(logdir)
    logs = [e.session_log.status for e in events if e.HasField("session_log")]
    assert logs[0] == v1.SessionLog.START and logs[-1] == v1.SessionLog.STOP
    assert any(e.graph_def for e in events) and any(e.meta_graph_def for e in events)
    assert any(v.tag == "global_step/sec" for e in events for v in e.summary.value)
    reader = tf.train.load_checkpoint(v1.train.latest_checkpoint(logdir))
    saved_w, saved_step = reader.get_tensor("w"), reader.get_tensor("global_step")
    assert 1 <= saved_step <= 3
    np.testing.assert_allclose(saved_w, np.array([1.0, -2.0]) * 0.5 ** saved_step)
    with tf.Graph().as_default():  # a new program resumes from the checkpoint
        gs, w, train = _model()
        sv = v1.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            assert sess.run(gs) == saved_step
            np.testing.assert_allclose(sess.run(w), saved_w)


def test_basic_train_loop_and_retry_on_aborted(tmp_path):
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = v1.train.Supervisor(logdir=str(tmp_path), save_model_secs=0,
                                 save_summaries_secs=0)
        calls = []

        def step(sess, scale, extra=None):
            calls.append(extra)
            if len(calls) == 2:
                raise tf.errors.AbortedError(None, None, "a server restarted")
            sess.run(train)
            if sess.run(gs) >= 3 * scale:
                sv.request_stop()

        v1.train.basic_train_loop(sv, step, args=(1,), kwargs={"extra": "x"})
        # the second call aborts: a new session (initialized again) runs 3 more steps
        assert calls == ["x"] * 5


def test_errors_in_the_managed_block():
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = v1.train.Supervisor(save_model_secs=0, save_summaries_secs=0)
        with pytest.raises(ValueError, match="boom"):
            with sv.managed_session() as sess:
                sess.run(train)
                raise ValueError("boom")
        with sv.managed_session() as sess:  # the end of input ends training cleanly
            raise tf.errors.OutOfRangeError(None, None, "End of sequence")
        assert sv.should_stop()


def test_summary_computed_and_services_need_a_logdir(tmp_path):
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = v1.train.Supervisor(logdir=str(tmp_path), save_model_secs=0,
                                 save_summaries_secs=0)
        with sv.managed_session() as sess:
            sess.run(train)
            sv.summary_computed(sess, sess.run(sv.summary_op))
        (event,) = [e for e in _events(str(tmp_path)) if e.summary.value]
        assert event.step == 1 and event.summary.value[0].tag == "loss"
        np.testing.assert_allclose(event.summary.value[0].simple_value, 0.5 ** 2 * 5)
    with tf.Graph().as_default():
        _model()
        sv = v1.train.Supervisor(summary_writer=None)
        with sv.managed_session() as sess:
            assert sv.start_standard_services(sess) is None  # no logdir: warns, no threads
            with pytest.raises(RuntimeError, match="Writing a summary requires a summary "
                                                   "writer"):
                sv.summary_computed(sess, b"")


def test_non_chief_and_eager():
    with pytest.raises(RuntimeError, match="Supervisors are incompatible with eager "
                                           "execution"):
        v1.train.Supervisor()
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = v1.train.Supervisor(is_chief=False, ready_op=None, recovery_wait_secs=0.01,
                                 local_init_op=v1.global_variables_initializer())
        assert sv.summary_writer is None and sv.save_path is None
        with sv.managed_session() as sess:
            np.testing.assert_allclose(sess.run(w), [1.0, -2.0])
            with pytest.raises(RuntimeError, match="Only chief supervisor can start standard "
                                                   "services"):
                sv.start_standard_services(sess)


def test_defaults_come_from_the_graphs_collections():
    with tf.Graph().as_default() as g:
        gs, w, train = _model()
        init = tf.group(v1.global_variables_initializer(), name="my_init")
        g.add_to_collection(v1.GraphKeys.INIT_OP, init)
        sv = v1.train.Supervisor(saver=None, summary_op=None, global_step=None)
        assert sv.init_op is init and sv.saver is None and sv.summary_op is None
        assert sv.global_step is None
        assert v1.train.Supervisor.PrepareSession is v1.train.Supervisor.\
            prepare_or_wait_for_session
