"""TF1 queues (tf.queue.*): FIFO order, blocking and closing, dequeue_up_to's partial batch,
padding, priorities, random shuffling, TF's errors; eagerly and in a Session with threads.
Every blocking call has a timeout, and every thread is joined."""

import threading

import numpy as np
import pytest

import ndflow as tf
from ndflow.ops import data_flow_queues as ops
from ndflow.ops.apply import apply_op

tf1 = tf.compat.v1


def test_fifo_order_size_and_close_eager():
    q = tf.queue.FIFOQueue(3, [tf.int32], shapes=[[]])
    q.enqueue_many([[1, 2]])
    q.enqueue(3)
    assert int(q.size()) == 3 and not bool(q.is_closed())
    assert int(q.dequeue()) == 1
    q.close()
    assert bool(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match=r"FIFOQueue '.*' is closed\."):
        q.enqueue(4)
    np.testing.assert_array_equal(q.dequeue_up_to(5).numpy(), [2, 3])  # partial batch
    with pytest.raises(tf.errors.OutOfRangeError,
                       match=r"is closed and has insufficient elements \(requested 2, "
                             r"current size 0\)"):
        q.dequeue_many(2)


def test_named_components_and_dict_enqueue():
    q = tf.queue.FIFOQueue(3, [tf.int32, tf.string], shapes=[[], []], names=["n", "s"])
    q.enqueue({"n": 7, "s": b"x"})
    out = q.dequeue()
    assert int(out["n"]) == 7 and out["s"].numpy() == b"x"
    with pytest.raises(ValueError, match="Keys in dictionary to enqueue do not match"):
        q.enqueue({"n": 1})


def test_dequeue_many_needs_shapes():
    q = tf.queue.FIFOQueue(3, [tf.int32])
    q.enqueue(1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="DequeueMany and DequeueUpTo require the components to have "
                             "specified shapes"):
        q.dequeue_many(1)


def test_padding_fifo_queue_pads_to_longest():
    q = tf.queue.PaddingFIFOQueue(4, [tf.int32, tf.string], shapes=[[None], [None]])
    q.enqueue([[1, 2, 3], [b"a"]])
    q.enqueue([[4], [b"b", b"c"]])
    ints, strs = q.dequeue_many(2)
    np.testing.assert_array_equal(ints.numpy(), [[1, 2, 3], [4, 0, 0]])
    assert strs.numpy().tolist() == [[b"a", b""], [b"b", b"c"]]


def test_priority_queue_orders_by_first_component():
    q = tf.queue.PriorityQueue(5, [tf.string], shapes=[[]])
    q.enqueue_many(([3, 1, 2], [b"c", b"a", b"b"]))
    prio, vals = q.dequeue_many(3)
    np.testing.assert_array_equal(prio.numpy(), [1, 2, 3])
    assert vals.numpy().tolist() == [b"a", b"b", b"c"]


def test_random_shuffle_queue_keeps_min_after_dequeue_and_permutes():
    q = tf.queue.RandomShuffleQueue(20, 5, [tf.int32], shapes=[[]], seed=3)
    q.enqueue_many([np.arange(10, dtype=np.int32)])
    got = q.dequeue_many(5).numpy().tolist()
    assert int(q.size()) == 5  # min_after_dequeue elements stay until the queue closes
    q.close()
    got += q.dequeue_up_to(10).numpy().tolist()
    assert sorted(got) == list(range(10)) and got != list(range(10))


def test_enqueue_shape_mismatch_is_typed():
    q = tf.queue.FIFOQueue(3, [tf.float32], shapes=[[2]])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue([[1.0, 2.0, 3.0]])


def test_blocking_dequeue_and_full_queue_in_session():
    g = tf.Graph()
    with g.as_default():
        q = tf1.FIFOQueue(2, [tf.int32], shapes=[[]])
        x = tf1.placeholder(tf.int32, [])
        enq = q.enqueue(x)
        deq = q.dequeue()
        close = q.close(cancel_pending_enqueues=True)
        size = q.size()
    with tf1.Session(graph=g) as sess:
        got = []
        consumer = threading.Thread(target=lambda: got.append(sess.run(deq)), daemon=True)
        consumer.start()
        consumer.join(0.05)
        assert consumer.is_alive()  # waits for an element
        sess.run(enq, {x: 5})
        consumer.join(5)
        assert not consumer.is_alive() and got == [5]
        sess.run(enq, {x: 1})
        sess.run(enq, {x: 2})
        errs = []

        def blocked_enqueue():
            try:
                sess.run(enq, {x: 3})
            except tf.errors.CancelledError as e:
                errs.append(e)
        producer = threading.Thread(target=blocked_enqueue, daemon=True)
        producer.start()
        producer.join(0.05)
        assert producer.is_alive() and sess.run(size) == 2  # the queue is full
        sess.run(close)  # cancel_pending_enqueues wakes it with CancelledError
        producer.join(5)
        assert not producer.is_alive() and len(errs) == 1


def test_enqueue_timeout_ms_raises_deadline_exceeded():
    q = tf.queue.FIFOQueue(1, [tf.int32], shapes=[[]])
    apply_op(ops.QueueEnqueueV2, [q.queue_ref, [tf.constant(1)]], {"timeout_ms": 20})
    with pytest.raises(tf.errors.DeadlineExceededError):
        apply_op(ops.QueueEnqueueV2, [q.queue_ref, [tf.constant(2)]], {"timeout_ms": 20})


def test_graph_uses_tensorflow_op_names():
    g = tf.Graph()
    with g.as_default():
        q = tf1.RandomShuffleQueue(10, 2, [tf.float32], shapes=[[3]], seed=1)
        q.enqueue_many([tf.zeros([4, 3])], name="fill")
        q.enqueue([tf.zeros([3])])
        batch = q.dequeue_many(2)
        q.dequeue_up_to(2)
        q.close()
    types = {op.type for op in g.get_operations()}
    assert {"RandomShuffleQueueV2", "QueueEnqueueManyV2", "QueueDequeueManyV2",
            "QueueDequeueUpToV2", "QueueCloseV2"} <= types
    assert batch.shape.as_list() == [2, 3]
    # TF's names: the enqueue op is its scope (its component conversions inside it)
    assert g.get_operation_by_name("fill").type == "QueueEnqueueManyV2"
    assert g.get_operation_by_name("random_shuffle_queue_enqueue").type == "QueueEnqueueV2"


def test_run_options_timeout_and_session_close_unblock_waiting_ops():
    g = tf.Graph()
    with g.as_default():
        q = tf1.FIFOQueue(2, [tf.int32], shapes=[[]])
        deq = q.dequeue()
    sess = tf1.Session(graph=g)
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(deq, options=tf1.RunOptions(timeout_in_ms=20))
    errs = []

    def wait():
        try:
            sess.run(deq)
        except tf.errors.CancelledError as e:
            errs.append(e)
    t = threading.Thread(target=wait, daemon=True)
    t.start()
    t.join(0.05)
    assert t.is_alive()
    sess.close()  # as TF: the pending dequeue is cancelled
    t.join(5)
    assert not t.is_alive() and "Session has been closed" in errs[0].message
