"""fingerprint.pb as TensorFlow 2.21 computes it (FarmHash Fingerprint64 over C++'s
deterministic serialization, regularized graph, sorted signatures and functions): ndflow
computes exactly the values TensorFlow recorded for its own SavedModels
(tests/fixtures/saved_model), and writes them for the SavedModels it saves."""

import os

import pytest
from tensorboard.compat.proto import function_pb2, meta_graph_pb2

import ndflow as tf
from ndflow.core.protos.saved_model_pb import FingerprintDef, SavedModel
from ndflow.saved_model import cpp_serialization, fingerprinting

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "saved_model")
FIELDS = ("saved_model_checksum", "graph_def_program_hash", "signature_def_hash",
          "saved_object_graph_hash", "checkpoint_hash")
TF2_FIXTURES = sorted(d for d in os.listdir(FIXTURES)
                      if os.path.isfile(os.path.join(FIXTURES, d, "fingerprint.pb")))


def computed(export_dir):
    sm = SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    index = os.path.join(export_dir, "variables", "variables.index")
    data = open(index, "rb").read() if os.path.exists(index) else None
    return fingerprinting.create_fingerprint_def(sm, data)


@pytest.mark.parametrize("name", TF2_FIXTURES)
def test_ndflow_computes_tensorflows_fingerprint(name):
    d = os.path.join(FIXTURES, name)
    with open(os.path.join(d, "fingerprint.pb"), "rb") as f:
        recorded = FingerprintDef.FromString(f.read())
    ours = computed(d)
    assert [getattr(ours, k) for k in FIELDS] == [getattr(recorded, k) for k in FIELDS]
    assert ours.version.producer == recorded.version.producer == 4


def test_fingerprint64_and_cat64_are_tensorflows():
    # TF's Fingerprint64("") (FarmHash) and an empty regularized GraphDef's hash
    assert fingerprinting.fingerprint64(b"") == 11160318154034397263
    assert fingerprinting.graph_def_program_hash(meta_graph_pb2.MetaGraphDef().graph_def) \
        == 1826355931633539578
    assert fingerprinting.fingerprint_cat64(0, 0) == 6351753276682545529


def test_map_entries_in_cpp_order():
    sd = meta_graph_pb2.SignatureDef()
    for k in ("inputs_1", "inputs"):
        sd.inputs[k].name = k
    data = cpp_serialization.serialize(sd)
    assert data.index(b"inputs\x12") < data.index(b"inputs_1\x12")
    fd = function_pb2.FunctionDef()
    fd.resource_arg_unique_id[1] = 0
    fd.resource_arg_unique_id[0] = 0
    assert cpp_serialization.serialize(fd) == bytes.fromhex("420408001000420408011000")


def test_saved_models_written_by_ndflow_carry_their_fingerprint(tmp_path):
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(2.0)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return {"y": x * self.v, "y_1": x + self.v}

    tf.saved_model.save(Scale(), str(tmp_path / "m"))
    fp = tf.saved_model.experimental.read_fingerprint(str(tmp_path / "m"))
    ours = computed(str(tmp_path / "m"))
    assert fp == ours and fp.version.producer == 4
    assert fp.singleprint() == "/".join(str(getattr(ours, k)) for k in FIELDS[1:])
    assert repr(fp).startswith(f"Fingerprint({ours.saved_model_checksum}, ")


def test_read_fingerprint_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="Could not find fingerprint in directory"):
        tf.saved_model.experimental.read_fingerprint(str(tmp_path))
    (tmp_path / "fingerprint.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(RuntimeError, match="Could not read fingerprint from fingerprint.pb"):
        tf.saved_model.experimental.read_fingerprint(str(tmp_path))
