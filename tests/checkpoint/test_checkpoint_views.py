"""`tf.train.CheckpointView` and `tf.train.TrackableView` against what TensorFlow 2.21
returns for the same checkpoint and objects (tests/fixtures/checkpoint_sharding/views.json,
view/ckpt-1; generate.py beside them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ndflow as tf

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_sharding"
EXPECTED = json.loads((FIXTURES / "views.json").read_text())
CKPT = str(FIXTURES / "view" / "ckpt-1")


class Simple(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_var = tf.Variable(5.0)
        self.b_var = tf.Variable(4.0)
        self.vars = [tf.Variable(1.0), tf.Variable(2.0)]


def _other_module():
    root2 = Simple(name="root")
    leaf2 = root2.leaf2 = Simple(name="leaf2")
    leaf2.leaf3 = tf.Variable(6.0)
    leaf2.leaf4 = tf.Variable(7.0)
    return root2


def _value(obj):
    return float(obj.numpy()) if isinstance(obj, tf.Variable) else None


def test_children_and_descendants():
    view = tf.train.CheckpointView(CKPT)
    assert view.descendants() == EXPECTED["descendants"]
    assert {str(i): view.children(i) for i in view.descendants()} == EXPECTED["children"]
    assert {str(k): v for k, v in view._descendants_with_paths().items()} == \
        EXPECTED["descendant_paths"]


def test_match_and_diff():
    view = tf.train.CheckpointView(CKPT)
    root2 = _other_module()
    match = view.match(root2)
    assert match[0] is root2
    assert {str(k): _value(v) for k, v in match.items()} == EXPECTED["match"]
    assert match[6] is root2.vars[0]
    overlap, only_ckpt, only_obj = view.diff(root2)
    assert sorted(overlap) == EXPECTED["diff_overlap"]
    assert only_ckpt == EXPECTED["diff_only_in_checkpoint"]
    assert [_value(t) for t in only_obj] == EXPECTED["diff_only_in_trackable"]


def test_view_of_ndflow_checkpoint(tmp_path):
    root = Simple(name="root")
    root.leaf = Simple(name="leaf")
    path = tf.train.Checkpoint(model=root).save(str(tmp_path / "ckpt"))
    view = tf.train.CheckpointView(path)
    assert set(view.children(0)) == {"model", "save_counter"}
    model = view.children(0)["model"]
    assert list(view.children(model)) == ["a_var", "b_var", "vars", "leaf"]
    matched = view.match(tf.train.Checkpoint(model=root))
    assert matched[view.children(model)["a_var"]] is root.a_var


def test_errors(tmp_path):
    v = tf.Variable(1.0, name="v")
    writer_prefix = str(tmp_path / "plain")
    tf.raw_ops.SaveV2(prefix=writer_prefix, tensor_names=["v"], shape_and_slices=[""],
                      tensors=[v.read_value()])
    with pytest.raises(ValueError, match="does not appear to be object-based"):
        tf.train.CheckpointView(writer_prefix)
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.CheckpointView(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="Expected a Trackable"):
        tf.train.CheckpointView(CKPT).match(3)


def test_trackable_view():
    root = Simple(name="root")
    leaf = root.leaf = Simple(name="leaf")
    leaf.leaf3 = tf.Variable(6.0, name="leaf3")
    leaf.leaf4 = tf.Variable(7.0, name="leaf4")
    view = tf.train.TrackableView(root)
    assert list(view.children(root)) == EXPECTED["trackable_children"]
    assert list(view.children(leaf)) == EXPECTED["trackable_children_leaf"]
    descendants = view.descendants()
    assert len(descendants) == EXPECTED["trackable_descendants"]
    assert descendants[0] is root and descendants[4] is leaf  # breadth first
    assert view.root is root
    assert tf.train.TrackableView.children(root.a_var) == {}
    with pytest.raises(ValueError, match="save_type"):
        view.children(root, save_type="bogus")
