"""tf.compat.v1.summary for Session programs, against the file TensorFlow 2.21 wrote for the
same program (tests/fixtures/tensorboard/tf1)."""

from __future__ import annotations

import os
import re
import socket

import numpy as np
import pytest
from tensorboard.compat.proto import summary_pb2

import ndflow as tf
from ndflow.summary.v1_summary_ops import histogram_proto
from tests.summary.events import FIXTURES, accumulate, event_files, raw_events

v1 = tf.compat.v1


def _program(logdir):
    """The fixture's tf1() program."""
    with tf.Graph().as_default() as g:
        x = v1.placeholder(tf.float32, [None], name="x")
        v1.summary.scalar("mean", tf.reduce_mean(x))
        v1.summary.histogram("values", x)
        v1.summary.image("picture", tf.reshape(x[:12], [1, 2, 2, 3]))
        v1.summary.text("label", tf.constant("digits"))
        merged = v1.summary.merge_all()
        writer = v1.summary.FileWriter(logdir, g)
        with v1.Session() as sess:
            for step in range(3):
                data = np.arange(20, dtype=np.float32) - 5.0 + step
                writer.add_summary(sess.run(merged, {x: data}), step)
        writer.close()


def _summaries(path):
    return [(e.step, v) for e in raw_events(path) for v in e.summary.value]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("tf1"))
    _program(logdir)
    return event_files(logdir)[0]


def test_tf1_file_name(written):
    assert re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}",
                        os.path.basename(written))


def test_same_values_as_tensorflow(written):
    ours = _summaries(written)
    theirs = _summaries(event_files(os.path.join(FIXTURES, "tf1"))[0])
    assert [(s, v.tag, v.WhichOneof("value")) for s, v in ours] == \
           [(s, v.tag, v.WhichOneof("value")) for s, v in theirs]
    # TF's summary ops' bytes (PNGs and histogram buckets included) and FileWriter's
    # plugin metadata, kept for a tag's first value only
    assert [v.SerializeToString() for _, v in ours] == \
           [v.SerializeToString() for _, v in theirs]


def test_graph_event_and_tensorboard_migration(written):
    acc = accumulate(os.path.dirname(written))
    tags = acc.Tags()
    assert acc.Graph().node and tags["graph"]
    assert tags["scalars"] == ["mean_1"] and tags["histograms"] == ["values"]
    assert tags["images"] == ["picture/image/0"] and tags["tensors"] == ["label"]
    assert [e.value for e in acc.Scalars("mean_1")] == [4.5, 5.5, 6.5]
    assert [e.histogram_value.num for e in acc.Histograms("values")] == [20, 20, 20]
    assert acc.Images("picture/image/0")[0].width == 2


def test_histogram_proto_against_numpy():
    data = np.random.RandomState(1).randn(500) * 10
    h = histogram_proto(data)
    assert (h.min, h.max, h.num) == (data.min(), data.max(), 500)
    assert h.sum == pytest.approx(data.sum()) and h.sum_squares == pytest.approx((data**2).sum())
    assert sum(h.bucket) == 500
    assert list(h.bucket_limit) == sorted(h.bucket_limit)


def test_file_writer_api(tmp_path):
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        v1.summary.FileWriter(str(tmp_path))
    with tf.Graph().as_default():
        with v1.summary.FileWriter(str(tmp_path)) as w:
            assert w.get_logdir() == str(tmp_path)
            w.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag="direct", simple_value=2.5)]), global_step=4)
            w.add_session_log(v1.summary.SessionLog(status=v1.summary.SessionLog.START), 4)
            with pytest.raises(TypeError):
                w.add_summary(42)
        w.add_summary(summary_pb2.Summary(), 5)  # after close: dropped, as TF
    events = raw_events(event_files(str(tmp_path))[0])
    assert [(e.step, e.WhichOneof("what")) for e in events[1:]] == [(4, "summary"),
                                                                     (4, "session_log")]


def test_merge_duplicate_tags_and_eager_merge_all():
    with tf.Graph().as_default():
        a = v1.summary.scalar("same", 1.0, collections=[])
        b = v1.summary.scalar("other", 2.0, collections=[])
        assert v1.summary.merge_all() is None  # collections=[]: not collected
        m = v1.summary.merge([a, b])
        with v1.Session() as sess:
            s = summary_pb2.Summary.FromString(sess.run(m))
    assert [(v.tag, v.simple_value) for v in s.value] == [("same", 1.0), ("other", 2.0)]
    with pytest.raises(RuntimeError, match="not compatible with eager"):
        v1.summary.merge_all()
    eager = summary_pb2.Summary.FromString(v1.summary.scalar("e", 3.0).numpy())
    assert eager.value[0].simple_value == 3.0


def test_tf2_summaries_in_a_tf1_session(tmp_path):
    """TF2 summary ops built in a TF1 graph run where the Session runs all_v2_summary_ops."""
    with tf.Graph().as_default():
        step = v1.placeholder(tf.int64, [])
        x = v1.placeholder(tf.float32, [])
        writer = tf.summary.create_file_writer(str(tmp_path))
        with writer.as_default(step=step):
            tf.summary.scalar("x", x)
        ops = v1.summary.all_v2_summary_ops()
        assert len(ops) == 1
        tensor = v1.summary.tensor_summary("t", tf.constant([1, 2]), display_name="shown")
        with v1.Session() as sess:
            for i in range(3):
                sess.run(ops, {step: i * 10, x: i / 2})
            t = summary_pb2.Summary.FromString(sess.run(tensor))
        writer.close()
    assert v1.summary.all_v2_summary_ops() is None  # eager
    values = [(e.step, v.tag, v.tensor.tensor_content)
              for e in raw_events(event_files(str(tmp_path))[0]) for v in e.summary.value]
    assert [(s, tag) for s, tag, _ in values] == [(0, "x"), (10, "x"), (20, "x")]
    assert t.value[0].metadata.display_name == "shown"
    assert list(np.frombuffer(t.value[0].tensor.tensor_content, np.int32)) == [1, 2]


def test_initialize_writes_the_graph(tmp_path):
    v1.summary.initialize()  # eager: nothing to do
    with tf.Graph().as_default() as g:
        with pytest.raises(RuntimeError, match="No default"):
            v1.summary.initialize()
        tf.constant(1.0, name="c")
        writer = tf.summary.create_file_writer(str(tmp_path))
        with writer.as_default():
            v1.summary.initialize(graph=g)
        writer.close()
    [graph] = [e for e in raw_events(event_files(str(tmp_path))[0]) if e.graph_def]
    assert graph.step == 0 and accumulate(str(tmp_path)).Graph().node[0].name == "c"


def test_family_tags_as_tensorflow():
    """TF 2.21 tags `family` summaries `fam/<scope>/fam/name` (checked with the oracle)."""
    with tf.Graph().as_default():
        with tf.name_scope("sc"):
            a = v1.summary.scalar("x", 2.0, family="fam")
            b = v1.summary.scalar("z", 2.0)
        c = v1.summary.image("i", np.zeros((1, 2, 2, 3)), family="f2")
        with v1.Session() as sess:
            tags = [[v.tag for v in v1.Summary.FromString(t).value] for t in sess.run([a, b, c])]
    assert tags == [["fam/sc/fam/x"], ["sc/z"], ["f2/f2/i/image/0"]]


def test_tf1_ops_write_through_a_default_tf2_writer_when_eager(tmp_path):
    """TF's TF2 compatibility: eager TF1 summary ops with a default writer and a step write
    TF2 summaries and return b''."""
    with pytest.warns(UserWarning, match="default summary writer not found"):
        legacy = v1.summary.scalar("no_writer", 1.0)
    assert v1.Summary.FromString(legacy.numpy()).value[0].simple_value == 1.0
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=5):
        with tf.name_scope("sc"):
            assert v1.summary.scalar("x", 2.0, family="fam").numpy() == b""
        v1.summary.histogram("h", np.arange(5.0))
        v1.summary.image("i", np.zeros((1, 2, 2, 3)))
        v1.summary.text("t", "hello")
        v1.summary.audio("a", np.zeros((1, 10, 1), np.float32), 100)
        with pytest.raises(RuntimeError, match="not compatible with eager"):  # as TF
            v1.summary.merge([v1.summary.scalar("y", 1.0)])
    writer.close()
    written = [(e.step, v.tag, v.metadata.plugin_data.plugin_name)
               for e in raw_events(event_files(str(tmp_path))[0]) for v in e.summary.value]
    assert written == [(5, "fam/sc/fam/x", "scalars"), (5, "h", "histograms"),
                       (5, "i", "images"), (5, "t", "text"), (5, "a", "audio"),
                       (5, "y", "scalars")]
