"""The rest of `tf.compat.v1.metrics` (thresholds, per class, top k; auc's careful
interpolation) against TensorFlow 2.21 (tests/fixtures/tf_metrics_v1_more, made by its
generate.py): after each of three batches, each metric's update_op and value, with and
without weights, the local variables (names and dtypes) and the value and update op names;
plus TF's errors for bad arguments."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_metrics_v1_more"
FIXTURE = json.loads((HERE / "metrics.json").read_text())
v1 = tf.compat.v1
sys.path.insert(0, str(HERE))
import metric_graphs_more as metric_graphs  # noqa: E402 - the graphs TF ran for the fixture

# TF's update op of the plain counts is the variable's AssignAddVariableOp, ndflow's its new
# value (read after the assignment): no name to compare
_ASSIGN = "AssignAddVariableOp"


@pytest.mark.parametrize("key", sorted(FIXTURE["results"]))
def test_values_and_names_match_tensorflow(key):
    want = FIXTURE["results"][key]
    weighted = key.endswith("_weighted")
    metric = key[: -len("_weighted")] if weighted else key
    batches = metric_graphs.GROUPS[metric_graphs.METRICS[metric][1]][-1]
    with tf.Graph().as_default():
        placeholders, value, update = metric_graphs.build(tf, metric, weighted)
        assert sorted([v.op.name, v.dtype.base_dtype.name]
                      for v in v1.local_variables()) == want["variables"]
        assert sorted(v1.get_collection(v1.GraphKeys.METRIC_VARIABLES), key=id) == sorted(
            v1.local_variables(), key=id)
        assert [value.op.name, value.op.type] == [want["value_name"], want["value_type"]]
        if want["update_type"] != _ASSIGN:
            assert [update.op.name, update.op.type] == [want["update_name"],
                                                        want["update_type"]]
        assert not v1.trainable_variables()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            got = []
            for batch in batches:
                feed = metric_graphs.feed(tf, metric, placeholders, batch, weighted)
                got.append([np.asarray(sess.run(update, feed), np.float64).tolist(),
                            np.asarray(sess.run(value), np.float64).tolist()])
            for (gu, gv), (wu, wv) in zip(got, want["values"]):
                np.testing.assert_allclose(gu, wu, rtol=1e-5, atol=1e-7)
                np.testing.assert_allclose(gv, wv, rtol=1e-5, atol=1e-7)


# (TF 2.21's errors for these, each checked by running the same call under TensorFlow)
_C = v1.constant
_BAD = {
    "mean_iou shapes": (lambda: v1.metrics.mean_iou(_C([0, 1, 1, 0]), _C([0, 1, 1]), 2),
                        ValueError, r"Shapes \(3,\) and \(4,\) are incompatible"),
    "mean_iou labels out of range": (lambda: v1.metrics.mean_iou(_C([0, 3]), _C([0, 1]), 2),
                                     tf.errors.InvalidArgumentError, "`labels` out of bound"),
    "mean_iou predictions out of range": (
        lambda: v1.metrics.mean_iou(_C([0, 1]), _C([0, 2]), 2),
        tf.errors.InvalidArgumentError, "`predictions` out of bound"),
    "mean_per_class_accuracy shapes": (
        lambda: v1.metrics.mean_per_class_accuracy(_C([0, 1]), _C([0, 1, 1]), 2),
        ValueError, r"Shapes \(3,\) and \(2,\) are incompatible"),
    "thresholds not a list": (
        lambda: v1.metrics.precision_at_thresholds(_C([True]), _C([0.5]), 0.5),
        TypeError, "object of type 'float' has no len()"),
    "predictions above 1": (
        lambda: v1.metrics.recall_at_thresholds(_C([True]), _C([1.5]), [0.5]),
        tf.errors.InvalidArgumentError, r"predictions must be in \[0, 1\]"),
    "k = 0": (lambda: v1.metrics.average_precision_at_k(_C([[1]], tf.int64),
                                                        _C([[0.1, 0.9]]), 0),
              ValueError, "Invalid k=0. `k` should be >= 1."),
    "k < 0": (lambda: v1.metrics.precision_at_k(_C([1], tf.int64), _C([[0.1, 0.9]]), -1),
              ValueError, "must be non-negative but is -1 for '{{node precision_at_-1/TopKV2}}"),
    "labels rank": (lambda: v1.metrics.recall_at_k(_C([[[1]]], tf.int64), _C([[0.1, 0.9]]), 1),
                    ValueError, r"Unexpected labels shape \(1, 1, 1\) for predictions shape "
                                r"\(1, 1\). Predictions rank should be the same rank as labels "
                                r"rank or labels rank plus one ."),
    "specificity": (
        lambda: v1.metrics.sensitivity_at_specificity(_C([True]), _C([0.5]), 1.5),
        ValueError, r"`specificity` must be in the range \[0, 1\]. Currently, `specificity` "
                    "got 1.5."),
    "sensitivity": (
        lambda: v1.metrics.specificity_at_sensitivity(_C([True]), _C([0.5]), -0.1),
        ValueError, r"`sensitivity` must be in the range \[0, 1\]. Currently, `sensitivity` "
                    "is -0.1."),
    "auc summation_method": (
        lambda: v1.metrics.auc(_C([True]), _C([0.5]), summation_method="x"),
        ValueError, "Invalid summation_method: x summation_method should be 'trapezoidal', "
                    "'careful_interpolation', 'minoring', or 'majoring'."),
}


@pytest.mark.parametrize("case", sorted(_BAD))
def test_bad_arguments_raise_as_tensorflow(case):
    build, error, message = _BAD[case]
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()


def test_average_precision_weights_must_broadcast():
    # (TF's Assert fails at run time; ndflow knows the shapes and refuses while building)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="weights can not be "
                                                                  "broadcast to values"):
        v1.metrics.average_precision_at_k(_C([[1], [0]], tf.int64), _C([[0.1, 0.9]] * 2), 1,
                                          weights=[[1.0], [2.0]])


@pytest.mark.parametrize("fn, args, name", [
    ("mean_iou", ([0], [0], 2), "mean_iou"), ("mean_tensor", ([1.0],), "mean_tensor"),
    ("precision_at_thresholds", ([True], [0.5], [0.5]), "precision_at_thresholds"),
    # (TF's message names precision_at_k by its deprecated name)
    ("precision_at_k", ([1], [[0.1, 0.9]], 1), "sparse_precision_at_k"),
])
def test_eager_refusal(fn, args, name):
    with pytest.raises(RuntimeError, match=f"tf.metrics.{name} is not supported when eager "
                                           "execution is enabled"):
        getattr(v1.metrics, fn)(*args)


def test_collections_and_reset():
    with tf.Graph().as_default():
        values = v1.placeholder(tf.float32, [3])
        value, update = v1.metrics.mean_tensor(values, metrics_collections=["m"],
                                               updates_collections=["u"])
        iou, iou_update = v1.metrics.mean_iou([0, 1], [0, 0], 2, metrics_collections=["m"],
                                              updates_collections=["u"])
        assert v1.get_collection("m") == [value, iou]
        assert v1.get_collection("u") == [update, iou_update]
        assert len(v1.get_collection(v1.GraphKeys.METRIC_VARIABLES)) == 3
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            sess.run([update, iou_update], {values: [1.0, 2.0, 3.0]})
            sess.run(update, {values: [3.0, 0.0, 1.0]})
            np.testing.assert_allclose(sess.run(value), [2.0, 1.0, 2.0])
            np.testing.assert_allclose(sess.run(iou), (0.5 + 0.0) / 2)
            sess.run(v1.local_variables_initializer())
            np.testing.assert_allclose(sess.run(value), [0.0, 0.0, 0.0])
            assert float(sess.run(iou)) == 0.0
