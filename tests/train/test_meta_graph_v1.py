"""tf.compat.v1.train.update_checkpoint_state (the state file TF 2.21 writes for the same
calls: tests/fixtures/train_v1_misc) and tf.compat.v1.train.export_meta_graph (a MetaGraphDef
that import_meta_graph rebuilds, with TF's options)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import ndflow as tf

v1 = tf.compat.v1
WANT = json.loads((Path(__file__).parents[1] / "fixtures" / "train_v1_misc" /
                   "expected.json").read_text())["checkpoint_state"]


def test_update_checkpoint_state_writes_tensorflows_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("rel")
    v1.train.update_checkpoint_state("rel", "rel/model-3", ["rel/model-1", "rel/model-2"])
    assert Path("rel/checkpoint").read_text() == WANT["relative_dir"]
    assert v1.train.get_checkpoint_state("rel").model_checkpoint_path == \
        os.path.join("rel", "model-3")
    v1.train.update_checkpoint_state("rel", "/abs/model-9", latest_filename="state",
                                     all_model_checkpoint_timestamps=[1.5],
                                     last_preserved_timestamp=0.5)
    assert Path("rel/state").read_text() == WANT["absolute_path_timestamps"]
    absdir = str(tmp_path / "abs")
    os.makedirs(absdir)
    v1.train.update_checkpoint_state(absdir, os.path.join(absdir, "m-1"), ["x/m-0"])
    assert Path(absdir, "checkpoint").read_text().replace(str(tmp_path), "ROOT") == \
        WANT["absolute_dir"]
    with pytest.raises(ValueError) as e:
        v1.train.update_checkpoint_state("rel", "a", ["b"], all_model_checkpoint_timestamps=[1.0])
    assert str(e.value) == WANT["timestamps_error"]
    with pytest.raises(RuntimeError, match="conflicts with path used for checkpoint state"):
        v1.train.update_checkpoint_state(absdir, os.path.join(absdir, "checkpoint"))


def _graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            w = v1.get_variable("w", initializer=tf.constant([1.0, 2.0]))
        with tf.name_scope("model"):
            x = v1.placeholder(tf.float32, [2], name="x")
            y = tf.multiply(x, w, name="y")
    return g, w, y


def test_export_meta_graph_round_trips(tmp_path):
    g, w, y = _graph()
    path = str(tmp_path / "m.meta")
    with g.as_default():
        meta = v1.train.export_meta_graph(filename=path)
    assert {n.name for n in meta.graph_def.node} >= {"w", "model/x", "model/y"}
    assert "variables" in meta.collection_def and "trainable_variables" in meta.collection_def
    with tf.Graph().as_default():
        saver = v1.train.import_meta_graph(path)
        assert saver is not None and [v.name for v in v1.global_variables()] == ["w:0"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_allclose(sess.run("model/y:0", {"model/x:0": [3.0, 4.0]}),
                                       [3.0, 8.0])


def test_export_meta_graph_options(tmp_path):
    g, w, y = _graph()
    meta = v1.train.export_meta_graph(graph=g, collection_list=["trainable_variables"],
                                      clear_devices=True, as_text=True,
                                      filename=str(tmp_path / "m.pbtxt"))
    assert list(meta.collection_def) == ["trainable_variables"]
    assert all(n.device == "" for n in meta.graph_def.node)
    assert (tmp_path / "m.pbtxt").read_text().startswith("meta_info_def")
    with tf.Graph().as_default() as g2:
        v1.train.import_meta_graph(str(tmp_path / "m.pbtxt"))  # text, trainables only
        assert [v.name for v in v1.trainable_variables()] == ["w:0"]
        assert v1.global_variables() == [] and g2.get_operation_by_name("w").device == ""
    scoped = v1.train.export_meta_graph(graph=g, export_scope="model")
    names = sorted(n.name for n in scoped.graph_def.node)
    assert "x" in names and "y" in names and all("/" not in n or n.startswith("y")
                                                 for n in names)
    (mul,) = [n for n in scoped.graph_def.node if n.name == "y"]
    assert mul.input[0] == "x"
    saver_def = v1.train.SaverDef(filename_tensor_name="save/Const:0", version=2)
    info = v1.MetaGraphDef.MetaInfoDef(tags=["serve"])
    meta = v1.train.export_meta_graph(graph=g, saver_def=saver_def, meta_info_def=info)
    assert meta.saver_def == saver_def and list(meta.meta_info_def.tags) == ["serve"]


def test_export_meta_graph_needs_a_graph():
    with pytest.raises(RuntimeError, match="Exporting/importing meta graphs is not supported "
                                           "when eager execution is enabled"):
        v1.train.export_meta_graph()
