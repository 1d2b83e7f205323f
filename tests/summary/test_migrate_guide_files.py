"""Event files of TF's "Migrate TensorBoard" step (tf.compat.v1.summary with a FileWriter,
tf.summary with a default writer) written by TensorFlow 2.21 (tests/fixtures/migrate_guides)
read back with ndflow's summary_iterator: the same events, tags, steps and values."""

from __future__ import annotations

import glob
import os

import numpy as np
from tensorboard.compat.proto import meta_graph_pb2

import ndflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "migrate_guides")


def _events(run):
    [path] = glob.glob(os.path.join(FIXTURE, "events", run, "events.out.tfevents.*"))
    return list(tf.compat.v1.train.summary_iterator(path))


def test_tf1_file_writer_events():
    events = _events("tf1")
    assert events[0].file_version == "brain.Event:2"
    graph = tf.compat.v1.GraphDef.FromString(events[1].graph_def)
    assert {"Placeholder", "loss", "weights"} <= {n.name for n in graph.node}
    assert events[2].HasField("meta_graph_def")
    values = [(e.step, v.tag, v.WhichOneof("value")) for e in events[3:] for v in e.summary.value]
    assert values == [(0, "loss", "simple_value"), (0, "weights", "histo"),
                      (1, "loss", "simple_value"), (1, "weights", "histo")]
    assert [v.simple_value for e in events[3:] for v in e.summary.value
            if v.tag == "loss"] == [1.0, 0.5]
    histo = events[3].summary.value[1].histo
    assert (histo.min, histo.max, histo.num, histo.sum, histo.sum_squares) == \
        (1.0, 3.0, 4.0, 8.0, 18.0)


def test_file_writer_with_a_graph_writes_its_meta_graph_as_tensorflow(tmp_path):
    with tf.Graph().as_default():
        loss = tf.compat.v1.placeholder(tf.float32, shape=[], name="p")
        tf.compat.v1.summary.scalar("loss", loss)
        with tf.compat.v1.Session() as sess:
            writer = tf.compat.v1.summary.FileWriter(str(tmp_path), sess.graph)
            writer.close()
    [path] = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    events = list(tf.compat.v1.train.summary_iterator(path))
    theirs = _events("tf1")
    assert [e.WhichOneof("what") for e in events] == \
        [e.WhichOneof("what") for e in theirs[:3]] == \
        ["file_version", "graph_def", "meta_graph_def"]
    meta = meta_graph_pb2.MetaGraphDef.FromString(events[2].meta_graph_def)
    tf_meta = meta_graph_pb2.MetaGraphDef.FromString(theirs[2].meta_graph_def)
    assert meta.meta_info_def.tensorflow_version == tf_meta.meta_info_def.tensorflow_version
    assert list(meta.collection_def) == list(tf_meta.collection_def) == ["summaries"]
    assert meta.graph_def == tf.compat.v1.GraphDef.FromString(events[1].graph_def)


def test_file_writer_meta_graph_skips_collections_not_keyed_by_strings(tmp_path):
    # variable scopes keep their store under a tuple key, as TF's: a writer given such a
    # graph (cifar10_train's MonitoredTrainingSession) wrote nothing and raised TypeError
    with tf.Graph().as_default() as g:
        with tf.compat.v1.variable_scope("layer"):
            tf.compat.v1.get_variable("w", [2])
        g.add_to_collection("mine", tf.constant(1.0, name="c"))
        assert any(not isinstance(k, str) for k in g.get_all_collection_keys())
        tf.compat.v1.summary.FileWriter(str(tmp_path), g).close()
    [path] = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    meta = meta_graph_pb2.MetaGraphDef.FromString(
        list(tf.compat.v1.train.summary_iterator(path))[2].meta_graph_def)
    assert "mine" in meta.collection_def
    assert list(meta.collection_def["mine"].node_list.value) == ["c:0"]


def test_tf2_writer_events():
    events = _events("tf2")
    assert events[0].file_version == "brain.Event:2"
    by_tag = {}
    for e in events[1:]:
        for v in e.summary.value:
            by_tag.setdefault(v.tag, []).append((e.step, v))
    assert sorted(by_tag) == ["loss", "note", "weights"]
    assert [v.metadata.plugin_data.plugin_name for _, v in
            (by_tag["loss"][0], by_tag["weights"][0], by_tag["note"][0])] == \
        ["scalars", "histograms", "text"]
    assert [(s, float(tf.make_ndarray(v.tensor))) for s, v in by_tag["loss"]] == \
        [(0, 1.0), (1, 0.5)]
    assert tf.make_ndarray(by_tag["note"][1][1].tensor).item() == b"hello"
    buckets = tf.make_ndarray(by_tag["weights"][0][1].tensor)
    assert buckets.shape == (30, 3)
    np.testing.assert_allclose(buckets[:, 2].sum(), 4.0)


def test_written_histogram_equals_tensorflows(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        tf.summary.histogram("weights", [1.0, 2.0, 2.0, 3.0], step=0)
    writer.close()
    [path] = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    [mine] = [v for e in tf.compat.v1.train.summary_iterator(path) for v in e.summary.value]
    theirs = [v for e in _events("tf2") for v in e.summary.value if v.tag == "weights"][0]
    np.testing.assert_array_equal(tf.make_ndarray(mine.tensor), tf.make_ndarray(theirs.tensor))
    assert mine.metadata == theirs.metadata
