"""TF1 queue-runner input pipelines end to end: readers fed by string_input_producer,
batch / shuffle_batch / maybe_batch, num_epochs ending in OutOfRangeError, Coordinator
semantics, MonitoredSession starting the queue runners, and a TF 2.21 GraphDef of a queue
program (tests/fixtures/tf_queues). Every thread is joined with a grace period."""

import gzip
import os
import threading

import numpy as np
import pytest

import ndflow as tf

tf1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_queues",
                       "queue_program.pb")


def _run_to_end(sess, fetches, limit=100):
    """Runs `fetches` under started queue runners until OutOfRangeError; the results."""
    coord = tf1.train.Coordinator()
    threads = tf1.train.start_queue_runners(sess, coord)
    out = []
    try:
        for _ in range(limit):
            out.append(sess.run(fetches))
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    assert not any(t.is_alive() for t in threads)
    return out


def _cifar_files(tmp_path):
    """Two CIFAR-10-style binary files: per record a label byte, then a 3x4x4 image."""
    files = []
    for k in range(2):
        recs = [bytes([k * 5 + i]) + np.full(48, k * 5 + i, np.uint8).tobytes()
                for i in range(5)]
        path = str(tmp_path / f"data_batch_{k}.bin")
        with open(path, "wb") as f:
            f.write(b"".join(recs))
        files.append(path)
    return files


def test_cifar10_binary_pipeline_two_epochs(tmp_path):
    files = _cifar_files(tmp_path)
    g = tf.Graph()
    with g.as_default():
        filename_queue = tf1.train.string_input_producer(files, num_epochs=2, shuffle=False)
        reader = tf1.FixedLengthRecordReader(record_bytes=1 + 48)
        _, value = reader.read(filename_queue)
        record = tf1.decode_raw(value, tf.uint8)
        label = tf.cast(tf.strided_slice(record, [0], [1]), tf.int32)
        label.set_shape([1])  # as cifar10_input.py
        image = tf.transpose(tf.reshape(tf.strided_slice(record, [1], [49]), [3, 4, 4]),
                             [1, 2, 0])
        images, labels = tf1.train.batch([tf.cast(image, tf.float32), label], batch_size=4,
                                         num_threads=2, capacity=8,
                                         allow_smaller_final_batch=True)
        assert labels.shape.as_list() == [None, 1]
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            batches = _run_to_end(sess, [images, labels])
    got = np.concatenate([b[1].ravel() for b in batches])
    assert sorted(got.tolist()) == sorted(list(range(10)) * 2)
    assert [len(b[1]) for b in batches] == [4, 4, 4, 4, 4]
    for imgs, labs in batches:  # each image's pixels equal its label
        assert imgs.shape[1:] == (4, 4, 3)
        np.testing.assert_array_equal(imgs[:, 0, 0, 0], labs.ravel())


def test_tfrecord_gzip_shuffle_batch(tmp_path):
    path = str(tmp_path / "data.tfrecord.gz")
    with tf.io.TFRecordWriter(path, options="GZIP") as w:
        for i in range(12):
            w.write(str(i).encode())
    g = tf.Graph()
    with g.as_default():
        fq = tf1.train.string_input_producer([path], num_epochs=1)
        key, value = tf1.TFRecordReader(options=tf.io.TFRecordOptions("GZIP")).read(fq)
        number = tf.strings.to_number(value, tf.int32)
        nums, keys = tf1.train.shuffle_batch([number, key], batch_size=5, capacity=12,
                                             min_after_dequeue=4, seed=7,
                                             allow_smaller_final_batch=True)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            batches = _run_to_end(sess, [nums, keys])
    got = np.concatenate([b[0] for b in batches]).tolist()
    assert sorted(got) == list(range(12)) and got != list(range(12))
    assert all(k.startswith(path.encode() + b":") for b in batches for k in b[1])


def test_text_whole_file_identity_readers_keys_as_tensorflow(tmp_path):
    text = tmp_path / "a.txt"
    text.write_bytes(b"header\nl1\r\nl2\n\nl4")
    g = tf.Graph()
    with g.as_default():
        fq = tf1.train.string_input_producer([str(text)], num_epochs=1, shuffle=False)
        line_reader = tf1.TextLineReader(skip_header_lines=1)
        keys, lines = line_reader.read_up_to(fq, 10)
        wq = tf1.train.string_input_producer([str(text)], num_epochs=1, shuffle=False)
        wkey, whole = tf1.WholeFileReader().read(wq)
        iq = tf1.FIFOQueue(3, [tf.string], shapes=[[]])
        put = iq.enqueue_many([["w1", "w2"]])
        ikey, ivalue = tf1.IdentityReader().read(iq)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            k, v = sess.run([keys, lines])
            assert v.tolist() == [b"l1", b"l2", b"", b"l4"]  # TF's values and keys
            assert k.tolist() == [f"{text}:{n}".encode() for n in (2, 3, 4, 5)]
            assert sess.run(line_reader.num_records_produced()) == 4
            assert sess.run([wkey, whole]) == [str(text).encode(), text.read_bytes()]
            sess.run(put)
            assert sess.run([ikey, ivalue]) == [b"w1", b"w1"]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(keys)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_corrupt_tfrecord_is_data_loss(tmp_path):
    path = tmp_path / "bad.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(b"payload")
    data = bytearray(path.read_bytes())
    data[14] ^= 0xFF
    path.write_bytes(bytes(data))
    g = tf.Graph()
    with g.as_default():
        q = tf1.FIFOQueue(2, [tf.string], shapes=[[]])
        put = q.enqueue([str(path)])
        _, value = tf1.TFRecordReader().read(q)
        with tf1.Session() as sess:
            sess.run(put)
            with pytest.raises(tf.errors.DataLossError):
                sess.run(value)


def test_fixed_length_header_footer_hop_and_gzip(tmp_path):
    path = tmp_path / "f.bin.gz"
    path.write_bytes(gzip.compress(bytes(range(23))))
    g = tf.Graph()
    with g.as_default():
        fq = tf1.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        reader = tf1.FixedLengthRecordReader(record_bytes=4, header_bytes=2, footer_bytes=3,
                                             hop_bytes=5, encoding="GZIP")
        keys, values = reader.read_up_to(fq, 10)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            [(k, v)] = _run_to_end(sess, [keys, values], limit=1)
    assert v.tolist() == [bytes([2, 3, 4, 5]), bytes([7, 8, 9, 10]), bytes([12, 13, 14, 15])]
    assert k.tolist()[2] == f"{path}:2".encode()


def test_slice_producer_dynamic_pad_and_maybe_batch():
    g = tf.Graph()
    with g.as_default():
        ids, = tf1.train.slice_input_producer([tf.constant([1, 2, 3, 4, 5])], num_epochs=1,
                                              shuffle=False)
        seq = tf.range(ids)  # variable length: padded by dynamic_pad
        [padded] = tf1.train.batch([seq], batch_size=2, dynamic_pad=True,
                                 allow_smaller_final_batch=True)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            batches = _run_to_end(sess, padded)
    assert [b.tolist() for b in batches] == [[[0, 0], [0, 1]], [[0, 1, 2, 0], [0, 1, 2, 3]],
                                             [[0, 1, 2, 3, 4]]]


def test_maybe_batch_keeps_selected_examples():
    g = tf.Graph()
    with g.as_default():
        q = tf1.train.range_input_producer(7, num_epochs=1, shuffle=False)
        i = q.dequeue()
        [evens] = tf1.train.maybe_batch([i], keep_input=tf.equal(i % 2, 0), batch_size=2,
                                        allow_smaller_final_batch=True)
        [many] = tf1.train.maybe_batch([tf.constant([1, 2, 3])],
                                       keep_input=tf.constant([True, False, True]),
                                       batch_size=2, enqueue_many=True)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            assert sess.run(many).tolist() == [1, 3]
            assert [sess.run(evens).tolist() for _ in range(2)] == [[0, 2], [4, 6]]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(evens)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_limit_epochs_and_range_producer():
    g = tf.Graph()
    with g.as_default():
        x = tf1.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
        q = tf1.train.range_input_producer(3, num_epochs=1, shuffle=False)
        items = q.dequeue_up_to(10)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            sess.run(x)
            sess.run(x)
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                sess.run(x)
            assert _run_to_end(sess, items)[0].tolist() == [0, 1, 2]


def test_coordinator_semantics():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "end")  # a clean stop
    assert coord.should_stop()
    coord.join([])
    coord.clear_stop()
    release = threading.Event()
    worker = threading.Thread(target=release.wait, args=(5,), daemon=True)
    worker.start()
    try:
        raise ValueError("boom")
    except ValueError as e:
        coord.request_stop(e)
    with pytest.raises(ValueError, match="boom"):
        coord.join([worker], stop_grace_period_secs=0.01)
    coord.clear_stop()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running"):
        coord.join([worker], stop_grace_period_secs=0.01)
    release.set()
    worker.join(5)
    calls = []
    coord2 = tf.train.Coordinator()
    looper = tf1.train.LooperThread.loop(coord2, 0.001, calls.append, args=(1,))
    while len(calls) < 3:
        looper.join(0.01)
    coord2.request_stop()
    coord2.join([looper], stop_grace_period_secs=5)
    assert not looper.is_alive()


def test_monitored_session_runs_queue_runners():
    g = tf.Graph()
    with g.as_default():
        q = tf1.train.range_input_producer(6, num_epochs=1, shuffle=False)
        batch = tf1.train.batch([q.dequeue()], batch_size=2)
        seen = []
        with tf1.train.MonitoredSession() as sess:
            while not sess.should_stop():
                seen.extend(sess.run(batch)[0].tolist())
        assert seen == list(range(6))


def test_tensorflow_queue_graph_def_imports_and_runs():
    with open(FIXTURE, "rb") as f:
        graph_def = tf1.GraphDef.FromString(f.read())
    g = tf.Graph()
    with g.as_default():
        tf1.import_graph_def(graph_def, name="")
    with tf1.Session(graph=g) as sess:
        sess.run("fill")
        ints, strs = sess.run(["take2:0", "take2:1"])
        np.testing.assert_array_equal(ints, [[1, 2], [3, 4]])
        assert strs.tolist() == [b"a", b"b"]
        sess.run("close")
        ints, strs, size = sess.run(["take_rest:0", "take_rest:1", "size:0"])
        assert ints.tolist() == [[5, 6]] and strs.tolist() == [b"c"] and size == 0
        sess.run("pad_put_a")
        sess.run("pad_put_b")
        np.testing.assert_array_equal(sess.run("pad_take:0"), [[1.0, 2.0], [3.0, 0.0]])


def test_pipeline_ops_are_named_as_tensorflow_names_them():
    g = tf.Graph()
    with g.as_default():
        q = tf1.train.string_input_producer(["a", "b"], num_epochs=1)
        _, v = tf1.TextLineReader().read(q)
        tf1.train.batch([v], batch_size=2)
        tf1.train.shuffle_batch([v], batch_size=2, capacity=10, min_after_dequeue=2)
    names = {(op.name, op.type) for op in g.get_operations()}
    # as TF 2.21 names this program's ops (its summaries and Assert aside)
    assert {("input_producer", "FIFOQueueV2"), ("input_producer/RandomShuffle", "RandomShuffle"),
            ("input_producer/limit_epochs", "Identity"),
            ("input_producer/limit_epochs/ResourceCountUpTo", "ResourceCountUpTo"),
            ("input_producer/input_producer_EnqueueMany", "QueueEnqueueManyV2"),
            ("input_producer/input_producer_Close_1", "QueueCloseV2"),
            ("ReaderReadV2", "ReaderReadV2"), ("batch/fifo_queue", "FIFOQueueV2"),
            ("batch/fifo_queue_enqueue", "QueueEnqueueV2"), ("batch", "QueueDequeueManyV2"),
            ("shuffle_batch/random_shuffle_queue", "RandomShuffleQueueV2"),
            ("shuffle_batch", "QueueDequeueManyV2")} <= names


def test_meta_graph_keeps_queue_runners(tmp_path):
    g = tf.Graph()
    with g.as_default():
        q = tf1.train.range_input_producer(6, num_epochs=1, shuffle=False)
        tf1.train.batch([q.dequeue()], batch_size=2)
        saver = tf1.train.Saver(var_list=[tf1.Variable(1.0)])
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))  # writes model.meta
    g2 = tf.Graph()
    with g2.as_default():
        restorer = tf1.train.import_meta_graph(path + ".meta")
        runners = tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS)
        assert [r.queue.name for r in runners] == ["input_producer", "batch/fifo_queue"]
        assert runners[0].enqueue_ops[0].name == "input_producer/input_producer_EnqueueMany"
        with tf1.Session() as sess:
            restorer.restore(sess, path)
            sess.run(tf1.local_variables_initializer())
            batches = _run_to_end(sess, "batch:0")
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]


def test_tensorflow_pipeline_meta_graph_runs_its_queue_runners():
    g = tf.Graph()
    with g.as_default():
        tf1.train.import_meta_graph(os.path.join(os.path.dirname(FIXTURE), "pipeline.meta"))
        assert len(tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS)) == 2
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            assert sess.run("batch:0").tolist() == [0, 1]
            summary = tf1.Summary.FromString(sess.run("batch/fraction_of_32_full:0"))
            assert summary.value[0].tag == "batch/fraction_of_32_full"  # TF's ScalarSummary
            assert [sess.run("batch:0").tolist() for _ in range(2)] == [[2, 3], [4, 5]]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run("batch:0")
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_queue_fill_summaries_as_tensorflow():
    g = tf.Graph()
    with g.as_default():
        q = tf1.train.range_input_producer(6, num_epochs=1, shuffle=False)
        tf1.train.batch([q.dequeue()], batch_size=2)
        tf1.train.shuffle_batch([q.dequeue()], batch_size=2, capacity=10, min_after_dequeue=2)
        merged = tf1.summary.merge_all()
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            tags = [v.tag for v in tf1.Summary.FromString(sess.run(merged)).value]
    # TF 2.21's tags for the same program
    assert tags == ["input_producer/fraction_of_32_full", "batch/fraction_of_32_full",
                    "shuffle_batch/fraction_over_2_of_8_full"]
