"""TF1 summary ops as TensorFlow's own ops (ScalarSummary, HistogramSummary, ImageSummary,
AudioSummaryV2, TensorSummaryV2, MergeSummary), against TensorFlow 2.21 running the same graph
(tests/fixtures/summary_v1_ops): the serialized Summary bytes, the GraphDef nodes, the errors,
and TF's GraphDef imported and run here."""

from __future__ import annotations

import base64
import hashlib
import json

import numpy as np
import pytest
from tensorboard.compat.proto import summary_pb2

import ndflow as tf
from tests import fixture_modules
from tests.fixture_modules import FIXTURES

v1 = tf.compat.v1
cases = fixture_modules.load("summary_v1_ops", "cases")
EXPECTED = json.loads((FIXTURES / "summary_v1_ops" / "expected.json").read_text())


def _check_bytes(values: dict):
    for key, got in values.items():
        if key == "img_noise":
            assert hashlib.sha256(got).hexdigest() == EXPECTED["img_noise_sha256"]
        else:
            assert got == base64.b64decode(EXPECTED["values"][key]), key


@pytest.fixture(scope="module")
def built():
    with tf.Graph().as_default() as g:
        outs = cases.build(tf)
        with v1.Session() as sess:
            values = sess.run(outs)
    return g, outs, values


def test_summary_bytes_equal_tensorflow(built):
    _, outs, values = built
    assert set(values) == set(EXPECTED["values"]) | {"img_noise"}
    _check_bytes(values)
    assert {k: t.name for k, t in outs.items()} == EXPECTED["tensor_names"]


def test_graph_def_nodes_as_tensorflow(built):
    """Same names, ops, inputs and attrs as TF's graph: a GraphDef / MetaGraph ndflow
    writes with summaries runs in TensorFlow."""
    g, _, _ = built
    nodes = [[n.name, n.op, list(n.input), sorted(n.attr)] for n in g.as_graph_def().node]
    assert nodes == EXPECTED["nodes"]
    img = g.get_operation_by_name("img_u8")
    assert img.get_attr("max_images") == 1
    assert list(img.get_attr("bad_color")) == [255, 0, 0, 255]


def test_tensorflow_graph_imports_and_runs():
    gdef = v1.GraphDef.FromString((FIXTURES / "summary_v1_ops" / "graph.pb").read_bytes())
    with tf.Graph().as_default():
        v1.import_graph_def(gdef, name="")
        with v1.Session() as sess:
            values = sess.run(EXPECTED["tensor_names"])
    _check_bytes(values)


@pytest.mark.parametrize("key", sorted(EXPECTED["errors"]))
def test_kernel_errors_as_tensorflow(key):
    kind, message = EXPECTED["errors"][key]
    with tf.Graph().as_default():
        t = cases.errors(tf)[key]
        with v1.Session() as sess, pytest.raises(getattr(tf.errors, kind)) as e:
            sess.run(t)
    assert message in e.value.message.split("\n")


def test_eager_ops_run_at_once():
    scalar = v1.summary.scalar("loss", tf.constant(0.3))
    assert scalar.numpy() == base64.b64decode(EXPECTED["values"]["loss"])
    hist = summary_pb2.Summary.FromString(v1.summary.histogram("h", [1.0, 2.0, 2.0]).numpy())
    assert hist.value[0].tag == "h" and hist.value[0].histo.num == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tags and values are not the same shape: \[\] != \[2\] \(tag 'y'\)"):
        v1.summary.scalar("y", [1.0, 2.0])
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        v1.summary.merge([scalar])


def test_build_errors_and_shapes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Expected tensor Const:0 to have dtype string, "
                                             r"got <dtype: 'float32'>"):
            v1.summary.text("t", tf.constant(1.0))
        image = v1.summary.image("img", v1.placeholder(tf.float32, [None, 4, 4, 3]))
        assert image.shape.as_list() == [] and image.dtype == tf.string
        assert v1.get_collection(v1.GraphKeys.SUMMARIES) == [image]
        bad = v1.summary.image("bad", tf.zeros([2, 2]))
        with v1.Session() as sess, pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"Tensor must be 4-D with last dim 1, 3, or 4, not \[2,2\]"):
            sess.run(bad)


def test_histogram_sums_in_order_as_tensorflow():
    """TF's Histogram adds values one by one in double: sums are sequential, not pairwise."""
    data = np.float32([1e8, 1.0, -1e8, 1e-3] * 50)
    h = summary_pb2.Summary.FromString(v1.summary.histogram("s", data).numpy()).value[0].histo
    expected = 0.0
    for x in data.astype(np.float64):
        expected += x
    assert h.sum == expected and h.min == -1e8 and h.max == 1e8


def test_meta_graph_keeps_the_summaries_collection(tmp_path):
    """Written as TF writes it (node_list of tensor names): merge_all of the imported graph
    (here or in TensorFlow) merges them."""
    path = str(tmp_path / "summaries.meta")
    with tf.Graph().as_default():
        v1.summary.scalar("loss", tf.constant(0.3))
        v1.summary.histogram("h", tf.constant([1.0, 2.0]))
        meta = v1.train.export_meta_graph(path)
    assert list(meta.collection_def["summaries"].node_list.value) == ["loss:0", "h:0"]
    with tf.Graph().as_default():
        v1.train.import_meta_graph(path)
        with v1.Session() as sess:
            merged = summary_pb2.Summary.FromString(sess.run(v1.summary.merge_all()))
    assert [v.tag for v in merged.value] == ["loss", "h"]
