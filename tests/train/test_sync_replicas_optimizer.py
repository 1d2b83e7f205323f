"""tf.compat.v1.train.SyncReplicasOptimizer in-process: the replicas' train ops feed
ConditionalAccumulators and wait for tokens, the chief's op applies the mean of
`replicas_to_aggregate` gradients (values checked against NumPy), stale gradients are
dropped, sparse gradients aggregate per row, and the session hook drives it in a
MonitoredTrainingSession; TF's argument errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

v1 = tf.compat.v1
configs = fixture_modules.load("sync_replicas")
WANT = json.loads((Path(__file__).parents[1] / "fixtures" / "sync_replicas" /
                   "expected.json").read_text())
W0 = np.array([1.0, -2.0], np.float32)
LR = 0.25


def _build(replicas, total=None):
    gs = v1.train.get_or_create_global_step()
    w = tf.Variable(W0, name="w")
    x = v1.placeholder(tf.float32, [2], name="x")
    loss = tf.reduce_sum(w * w * x)  # d/dw = 2 w x
    opt = v1.train.SyncReplicasOptimizer(v1.train.GradientDescentOptimizer(LR),
                                         replicas_to_aggregate=replicas,
                                         total_num_replicas=total)
    train = opt.minimize(loss, global_step=gs)
    return gs, w, x, opt, train


def _chief_session(opt, num_tokens=-1):
    sess = v1.Session()
    sess.run(v1.global_variables_initializer())
    sess.run(v1.local_variables_initializer())
    sess.run(opt.chief_init_op)
    sess.run(opt.get_init_tokens_op(num_tokens))
    return sess


def test_one_replica_steps_match_tensorflow():
    """The first step updates like SGD; the second, computed at local step 0 after the global
    step moved to 1, is dropped as stale (TF 2.21's run of the same steps)."""
    got = configs.run(tf)
    assert [r["accumulated"] for r in got] == [r["accumulated"] for r in WANT] == [1, 0]
    for g, w in zip(got, WANT):
        np.testing.assert_allclose(g["w"], w["w"], rtol=1e-6)
        assert (g["global_step"], g["local_step"]) == (w["global_step"], w["local_step"])
    np.testing.assert_allclose(got[0]["w"], W0 - LR * 2 * W0 * np.array([1.0, 0.5]))


def test_two_replicas_apply_the_mean_gradient():
    with tf.Graph().as_default():
        gs, w, x, opt, train = _build(2)
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        sess = _chief_session(opt)
        feeds = [np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)]
        workers = [threading.Thread(target=sess.run, args=(train, {x: f})) for f in feeds]
        for t in workers:
            t.start()
        sess.run(sync_op)  # waits for both replicas' gradients
        for t in workers:
            t.join()
        mean_grad = (2 * W0 * feeds[0] + 2 * W0 * feeds[1]) / 2
        np.testing.assert_allclose(sess.run(w), W0 - LR * mean_grad, rtol=1e-6)
        assert sess.run(gs) == 1
        sess.close()


def test_stale_gradients_are_dropped():
    with tf.Graph().as_default():
        gs, w, x, opt, train = _build(1)
        accum, _ = opt._accumulator_list[0]
        sess = _chief_session(opt)
        sess.run(gs.assign(5))
        sess.run(opt.chief_init_op)  # the accumulator's step is now 5 ...
        sess.run(opt._local_step.assign(2))  # ... and this replica's local step is older
        sess.run(train, {x: [1.0, 1.0]})
        assert sess.run(accum.num_accumulated()) == 0
        sess.close()


def test_sparse_gradients_aggregate_rows():   # TF 2.21 gives these values
    with tf.Graph().as_default():
        gs = v1.train.get_or_create_global_step()
        emb = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
        loss = tf.reduce_sum(tf.gather(emb, [2, 0]))
        opt = v1.train.SyncReplicasOptimizer(v1.train.GradientDescentOptimizer(0.5), 1)
        train = opt.minimize(loss, global_step=gs)
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        sess = _chief_session(opt)
        sess.run(train)
        sess.run(sync_op)
        np.testing.assert_allclose(sess.run(emb), [[-0.5, 0.5], [2.0, 3.0], [3.5, 4.5]])
        sess.close()


# the chief's runner, cancelled by the session's close after its coordinator was joined,
# re-raises CancelledError in its thread: TF's Coordinator does the same
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_monitored_training_session_with_the_hook(tmp_path):
    with tf.Graph().as_default():
        gs, w, x, opt, train = _build(1)
        hooks = [opt.make_session_run_hook(is_chief=True),
                 v1.train.StopAtStepHook(last_step=3)]
        runs = 0
        # stop_grace_period_secs: at the end the chief's runner waits for gradients that no
        # replica will send; TF (and ndflow) then close the session, which cancels that wait
        with v1.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                               save_summaries_steps=None,
                                               stop_grace_period_secs=0.2) as sess:
            while not sess.should_stop():
                sess.run(train, {x: [1.0, 1.0]})
                runs += 1
        assert runs >= 3
        reader = tf.train.load_checkpoint(str(tmp_path))
        assert reader.get_tensor("global_step") >= 3


def test_argument_errors_are_tensorflows():
    with tf.Graph().as_default():
        gs, w, x, opt, train = _build(2, total=1)
        with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 0 "
                                             r"\(given\) vs 1 \(needed\)"):
            opt.get_init_tokens_op(0)
        fresh = v1.train.SyncReplicasOptimizer(v1.train.GradientDescentOptimizer(0.1), 1)
        with pytest.raises(ValueError, match="Should be called after apply_gradients"):
            fresh.get_chief_queue_runner()
        with pytest.raises(ValueError, match="Global step is required to check staleness"):
            fresh.apply_gradients([(tf.constant([1.0, 1.0]), w)])
        with pytest.raises(ValueError, match="Must supply at least one variable"):
            fresh.apply_gradients([], global_step=gs)
        with pytest.raises(ValueError, match="apply_gradient should be called before using "
                                             "the hook"):
            fresh.make_session_run_hook(True).begin()
        assert opt.get_slot_names() == []
