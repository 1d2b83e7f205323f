"""`tf.compat.v1.metrics` against TensorFlow 2.21 (tests/fixtures/tf_metrics_v1, made by its
generate.py): after each of three batches, each metric's update_op and value, with and
without weights, and the local variables and op names each metric makes; plus the eager
refusal, the collections, and the local-variable reset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "tf_metrics_v1"
                      / "metrics.json").read_text())
v1 = tf.compat.v1
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "tf_metrics_v1"))
import metric_graphs  # noqa: E402 - the graphs TensorFlow ran for the fixture


@pytest.mark.parametrize("key", sorted(FIXTURE["results"]))
def test_values_and_names_match_tensorflow(key):
    want = FIXTURE["results"][key]
    weighted = key.endswith("_weighted")
    metric = key[: -len("_weighted")] if weighted else key
    with tf.Graph().as_default():
        (labels, predictions, weights), value, update = metric_graphs.build(
            tf, metric, weighted)
        assert sorted(v.op.name for v in v1.local_variables()) == want["variables"]
        assert value.op.name == want["value_name"]
        if want["update_name"].endswith("update_op"):   # (TF's assign_add is its own op)
            assert update.op.name == want["update_name"]
        assert not v1.trainable_variables()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            got = []
            for lab, pred, w in FIXTURE["batches"]:
                feed = {labels: lab, predictions: pred}
                if weighted:
                    feed[weights] = w
                got.append([float(sess.run(update, feed)), float(sess.run(value))])
            np.testing.assert_allclose(got, want["values"], rtol=1e-6)
            sess.run(v1.local_variables_initializer())   # the reset starts over
            assert float(sess.run(value)) == 0.0


def test_auc_refuses_bad_arguments_and_predictions():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Curve must be either ROC or PR\. Curve XY is "
                                             "unknown."):
            v1.metrics.auc([1], [0.5], curve="XY")
        # a constant out of [0, 1] fails while building, as TF's static check does
        with pytest.raises(tf.errors.InvalidArgumentError, match="predictions must be in"):
            v1.metrics.auc(v1.constant([True]), v1.constant([1.5]))


def test_collections_and_eager_refusal():
    with tf.Graph().as_default():
        value, update = v1.metrics.accuracy([1, 0], [1, 1], metrics_collections=["m"],
                                            updates_collections=["u"])
        assert v1.get_collection("m") == [value] and v1.get_collection("u") == [update]
        assert len(v1.get_collection(v1.GraphKeys.METRIC_VARIABLES)) == 2
    with pytest.raises(RuntimeError, match="tf.metrics.accuracy is not supported when "
                                           "eager execution is enabled"):
        v1.metrics.accuracy([1], [1])
