"""TF's "Migrate the SavedModel workflow" guide: a TF1 `simple_save` SavedModel written by
TensorFlow 2.21 (tests/fixtures/migrate_guides) loads with tf.compat.v1.saved_model.load
into a Session and with tf.saved_model.load; the TF1 functions log TF's deprecation warning
once, naming the caller."""

from __future__ import annotations

import os
import sys

import ndflow as tf
from ndflow.saved_model import v1_deprecation

tf1 = tf.compat.v1
FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures", "migrate_guides")
SIMPLE_SAVE = os.path.join(FIXTURE, "simple-save")


def _run_tf1(path, value):
    with tf.Graph().as_default():
        with tf1.Session() as sess:
            meta_graph = tf1.saved_model.load(sess, ["serve"], path)
            sig = meta_graph.signature_def["serving_default"]
            return sess.run(sig.outputs["output"].name,
                            feed_dict={sig.inputs["input"].name: value})


def test_tensorflows_simple_save_loads_in_a_session_and_in_tf2():
    assert _run_tf1(SIMPLE_SAVE, 5.0) == 7.0
    loaded = tf.saved_model.load(SIMPLE_SAVE)
    out = loaded.signatures["serving_default"](tf.constant(5.0))["output"]
    assert out.numpy() == 7.0


def test_v1_functions_warn_once_naming_the_caller(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(v1_deprecation, "_warned", set())
    with tf.Graph().as_default():
        with tf1.Session() as sess:
            x = tf1.placeholder(tf.float32, shape=[])
            io = {"inputs": {"input": x}, "outputs": {"output": x + 2}}
            line = sys._getframe().f_lineno + 1
            tf1.saved_model.simple_save(sess, str(tmp_path / "m"), **io)
    err = capsys.readouterr().err
    assert (f"WARNING:tensorflow:From {__file__}:{line}: simple_save (from "
            "tensorflow.python.saved_model.simple_save) is deprecated and will be removed in "
            "a future version.\nInstructions for updating:\nThis API was designed for "
            "TensorFlow v1. See https://www.tensorflow.org/guide/migrate for instructions on "
            "how to migrate your code to TensorFlow v2.\n") in err
    assert _run_tf1(str(tmp_path / "m"), 1.0) == 3.0
    assert _run_tf1(str(tmp_path / "m"), 2.0) == 4.0
    err = capsys.readouterr().err
    assert err.count("load (from tensorflow.python.saved_model.loader_impl) is deprecated and "
                     "will be removed in a future version.\nInstructions for updating:\nUse "
                     "`tf.saved_model.load` instead.\n") == 1
    tf.saved_model.load(str(tmp_path / "m"))   # TF2's load of a TF1 model does not warn
    assert "deprecated" not in capsys.readouterr().err
