"""TF's exported proto classes (tf.train.ServerDef serializes to TF 2.21's bytes; NodeDef,
AttrValue, ... are TF's messages), tf.compat.v1.errors' code <-> class tables and
raise_exception_on_not_ok_status, tf.compat.v1.summary.get_summary_description."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import text_format

import ndflow as tf

v1 = tf.compat.v1
WANT = json.loads((Path(__file__).parents[1] / "fixtures" / "train_v1_misc" /
                   "expected.json").read_text())


def test_server_def_bytes_are_tensorflows():
    sd = tf.train.ServerDef(job_name="worker", task_index=1, protocol="grpc", port=2222,
                            replica=3)
    sd.cluster.CopyFrom(tf.train.ClusterSpec({"worker": ["a:1", "b:2"]}).as_cluster_def())
    sd.default_session_config.allow_soft_placement = True
    sd.cluster_device_filters.jobs.add(name="worker").tasks[1].device_filters.append("/job:ps")
    assert sd.SerializeToString().hex() == WANT["server_def"]["hex"]
    assert text_format.MessageToString(sd) == WANT["server_def"]["text"]
    parsed = v1.train.ServerDef.FromString(bytes.fromhex(WANT["server_def"]["hex"]))
    assert parsed == sd and v1.train.ServerDef is tf.train.ServerDef
    with pytest.raises(ValueError, match='has no "nope" field'):
        tf.train.ServerDef(nope=1)


def test_exported_protos_are_tensorflows_messages():
    node = v1.NodeDef(name="c", op="Const")
    node.attr["dtype"].CopyFrom(v1.AttrValue(type=tf.float32.as_datatype_enum))
    node.attr["f"].CopyFrom(v1.AttrValue(func=v1.NameAttrList(name="fn")))
    assert v1.NodeDef.FromString(node.SerializeToString()) == node
    graph_node = v1.GraphDef(node=[node]).node[0]
    assert type(graph_node) is v1.NodeDef
    meta = v1.MetaGraphDef()
    meta.signature_def["s"].inputs["x"].CopyFrom(v1.TensorInfo(name="x:0", dtype=1))
    assert type(meta.signature_def["s"].inputs["x"]) is v1.TensorInfo
    assert type(meta.saver_def) is v1.train.SaverDef
    msg = v1.LogMessage(level=v1.LogMessage.WARN, message="m")
    assert type(v1.Event(log_message=msg).log_message) is v1.LogMessage


def test_error_codes_are_tensorflows():
    for name, code in WANT["error_codes"].items():
        cls = getattr(tf.errors, name)
        assert v1.errors.error_code_from_exception_type(cls) == code
        assert v1.errors.exception_type_from_error_code(code) is cls
    with pytest.warns(UserWarning, match="Unknown class exception"):
        got = v1.errors.error_code_from_exception_type(ValueError)
    assert isinstance(got, tf.errors.UnknownError)  # TF returns an error, not a code
    with pytest.raises(KeyError):
        v1.errors.exception_type_from_error_code(99)


def test_raise_exception_on_not_ok_status():
    with v1.errors.raise_exception_on_not_ok_status() as status:
        assert status.code == tf.errors.OK
    with pytest.raises(tf.errors.NotFoundError, match="no such thing"):
        with v1.errors.raise_exception_on_not_ok_status() as status:
            status.set(tf.errors.NOT_FOUND, "no such thing")
    with pytest.warns(UserWarning, match="Unknown error code: 42"):
        with pytest.raises(tf.errors.UnknownError, match="odd"):
            with v1.errors.raise_exception_on_not_ok_status() as status:
                status.set(42, "odd")
    with pytest.raises(ZeroDivisionError):  # the body's own errors pass through
        with v1.errors.raise_exception_on_not_ok_status():
            1 / 0  # noqa: B018


def test_get_summary_description():
    node = v1.NodeDef(name="s", op="TensorSummary")
    node.attr["description"].s = b'{"type_hint": "image"}'
    desc = v1.summary.get_summary_description(node)
    assert type(desc) is v1.summary.SummaryDescription and desc.type_hint == "image"
    with pytest.raises(ValueError, match="Can't get_summary_description on Const"):
        v1.summary.get_summary_description(v1.NodeDef(name="c", op="Const"))
