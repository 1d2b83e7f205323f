"""tf.compat.v1.train.SessionManager (prepare/recover/wait_for_session with ready ops, local
init, init_fn and checkpoints), WorkerSessionCreator and SingularMonitoredSession, run on real
graphs and checkpoints in a tmp dir; messages are TensorFlow 2.21's."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1


def _model():
    w = v1.get_variable("w", initializer=tf.constant([1.0, 2.0]))
    b = v1.get_variable("b", initializer=tf.constant(3.0))
    ready = v1.report_uninitialized_variables()
    return w, b, ready


def test_prepare_session_initializes_then_restores(tmp_path):
    with tf.Graph().as_default() as g:
        w, b, ready = _model()
        saver = v1.train.Saver()
        sm = v1.train.SessionManager(ready_op=ready, recovery_wait_secs=0.01)
        calls = []
        sess = sm.prepare_session("", init_op=v1.global_variables_initializer(), saver=saver,
                                  checkpoint_dir=str(tmp_path), init_fn=calls.append)
        assert calls == [sess]  # no checkpoint yet: init_op, then init_fn(sess)
        sess.run(w.assign([5.0, 6.0]))
        saver.save(sess, os.path.join(tmp_path, "model.ckpt"), global_step=7)
        sess.close()
        calls.clear()
        sess = sm.prepare_session("", init_op=v1.global_variables_initializer(), saver=saver,
                                  checkpoint_dir=str(tmp_path), init_fn=calls.append)
        assert calls == []  # restored: neither init_op nor init_fn runs
        np.testing.assert_array_equal(sess.run(w), [5.0, 6.0])
        assert saver.last_checkpoints == [os.path.join(str(tmp_path), "model.ckpt-7")]
        sess.close()
        path = os.path.join(tmp_path, "model.ckpt-7")
        sess = sm.prepare_session("", saver=saver, checkpoint_filename_with_path=path)
        np.testing.assert_array_equal(sess.run(w), [5.0, 6.0])
        assert sess.graph is g


def test_prepare_session_errors():
    with tf.Graph().as_default():
        w, b, ready = _model()
        sm = v1.train.SessionManager(ready_op=ready)
        with pytest.raises(RuntimeError, match="Model is not initialized and no init_op or "
                                               "init_fn or local_init_op was given"):
            sm.prepare_session("")
        with pytest.raises(RuntimeError, match="Init operations did not make model ready.*"
                                               "Variables not initialized: b"):
            sm.prepare_session("", init_op=v1.variables_initializer([w]))
        with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and "
                                             "checkpoint_filename_with_path"):
            sm.prepare_session("", saver=v1.train.Saver(), checkpoint_dir="a",
                               checkpoint_filename_with_path="b")
        with pytest.raises(ValueError, match="If you pass a ready_for_local_init_op you must "
                                             "also pass a local_init_op"):
            v1.train.SessionManager(ready_for_local_init_op=ready)


def test_local_init_runs_once_globals_are_ready():
    with tf.Graph().as_default():
        w = v1.get_variable("w", initializer=tf.constant(2.0))
        local = v1.get_variable("local", initializer=w.read_value() * 10.0,
                                collections=[v1.GraphKeys.LOCAL_VARIABLES])
        sm = v1.train.SessionManager(
            local_init_op=v1.local_variables_initializer(),
            ready_for_local_init_op=v1.report_uninitialized_variables(v1.global_variables()),
            ready_op=v1.report_uninitialized_variables())
        sess = sm.prepare_session("", init_op=v1.global_variables_initializer())
        assert sess.run(local) == 20.0
        with pytest.raises(RuntimeError, match="Init operations did not make model ready for "
                                               "local_init.*Variables not initialized: w"):
            sm.prepare_session("", init_fn=lambda s: None)


def test_recover_session(tmp_path):
    with tf.Graph().as_default():
        w, b, ready = _model()
        saver = v1.train.Saver()
        sm = v1.train.SessionManager(ready_op=ready)
        sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
        assert not restored
        sess.run(v1.global_variables_initializer())
        saver.save(sess, os.path.join(tmp_path, "m"))
        sess, restored = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
        assert restored and sess.run(b) == 3.0
        partial = v1.train.Saver([w])  # restores w only: the model is not ready
        sess, restored = sm.recover_session("", saver=partial, checkpoint_dir=str(tmp_path))
        assert not restored


def test_prepare_session_waits_for_a_checkpoint(tmp_path):
    with tf.Graph().as_default():
        w, b, ready = _model()
        saver = v1.train.Saver()
        with v1.Session() as writer:
            writer.run(v1.global_variables_initializer())
            writer.run(b.assign(9.0))
            timer = threading.Timer(0.1, lambda: saver.save(writer, str(tmp_path / "m")))
            timer.start()
            sm = v1.train.SessionManager(ready_op=ready, recovery_wait_secs=0.05)
            sess = sm.prepare_session("", saver=saver, checkpoint_dir=str(tmp_path),
                                      wait_for_checkpoint=True, max_wait_secs=30)
            timer.join()
        assert sess.run(b) == 9.0


def test_wait_for_session():
    with tf.Graph().as_default():
        w, b, ready = _model()
        sm = v1.train.SessionManager(ready_op=ready, recovery_wait_secs=0.01)
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match="Session was not ready after waiting 0 secs"):
            sm.wait_for_session("", max_wait_secs=0.05)  # nothing initializes this session
        sm = v1.train.SessionManager(ready_op=ready,
                                     local_init_op=v1.global_variables_initializer())
        sess = sm.wait_for_session("", max_wait_secs=0)
        assert sess.run(b) == 3.0


def test_worker_session_creator():
    with tf.Graph().as_default():
        w, b, ready = _model()
        scaffold = v1.train.Scaffold(ready_op=ready,
                                     local_init_op=v1.global_variables_initializer())
        sess = v1.train.WorkerSessionCreator(scaffold=scaffold, max_wait_secs=0) \
            .create_session()
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])
    with tf.Graph().as_default():
        w, b, ready = _model()
        creator = v1.train.WorkerSessionCreator(
            scaffold=v1.train.Scaffold(ready_op=ready, local_init_op=tf.no_op()),
            max_wait_secs=0)
        with pytest.raises(tf.errors.DeadlineExceededError):
            creator.create_session()


def test_singular_monitored_session(tmp_path):
    for expected_start in (0, 4):
        with tf.Graph().as_default():
            gs = v1.train.get_or_create_global_step()
            w = v1.get_variable("w", initializer=tf.constant(1.0))
            train = v1.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=gs)
            hooks = [v1.train.StopAtStepHook(num_steps=4),
                     v1.train.CheckpointSaverHook(str(tmp_path), save_steps=100)]
            with v1.train.SingularMonitoredSession(hooks=hooks,
                                                   checkpoint_dir=str(tmp_path)) as sess:
                raw = sess.raw_session()
                assert isinstance(raw, v1.Session)
                assert raw.run(gs) == expected_start
                steps = 0
                while not sess.should_stop():
                    sess.run(train)
                    steps += 1
                assert steps == 4 and raw.run(gs) == expected_start + 4
                np.testing.assert_allclose(raw.run(w), 0.8 ** (expected_start + 4), rtol=1e-6)
