"""`fingerprint.pb`: the SavedModel fingerprint TensorFlow 2.21 writes, with its hashes
(FarmHash Fingerprint64, from the `pyfarmhash` package, combined with TF's FingerprintCat64),
and `tf.saved_model.experimental.read_fingerprint` / `Fingerprint`.

The five fields, as TensorFlow computes them from the files (messages serialized
deterministically as C++ does, cpp_serialization.py):
  saved_model_checksum     the SavedModel proto
  graph_def_program_hash   the GraphDef regularized (function-call names without their UID,
                           no config_proto, no string constant values, library and versions
                           present but empty)
  signature_def_hash       each signature (sorted by key): its key, then its bytes
  saved_object_graph_hash  each concrete function (sorted by the UID ending its name): its
                           name without the UID, then its bytes
  checkpoint_hash          the bytes of variables/variables.index (0 without one)
"""

from __future__ import annotations

import copy
import os
import uuid

from google.protobuf.message import DecodeError

from ndflow.core.api_export import tf_export
from ndflow.core.protos.saved_model_pb import FingerprintDef
from ndflow.saved_model import constants
from ndflow.saved_model.cpp_serialization import serialize

_MASK = (1 << 64) - 1
_K_MUL = 0xC6A4A7935BD1E995
FINGERPRINT_PRODUCER = 4   # what TensorFlow 2.21 records in `version.producer`
_STRING = 7                # DT_STRING


try:
    import farmhash
except ImportError:  # a dependency; without it `import ndflow` still works, saving does not
    farmhash = None


def fingerprint64(data: bytes) -> int:
    """TensorFlow's Fingerprint64 (FarmHash's Fingerprint64)."""
    if farmhash is None:
        raise ImportError("SavedModel fingerprints need the `pyfarmhash` package (an ndflow "
                          "dependency): pip install pyfarmhash")
    return farmhash.fingerprint64(data)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's FingerprintCat64: an order-dependent combination of two fingerprints."""
    result = fp1 ^ _K_MUL
    result ^= (_shift_mix((fp2 * _K_MUL) & _MASK) * _K_MUL) & _MASK
    result = (result * _K_MUL) & _MASK
    result = (_shift_mix(result) * _K_MUL) & _MASK
    return _shift_mix(result)


def _suffix_uid(name: str) -> int | None:
    last = name.rsplit("_", 1)[-1]
    return int(last) if last.isdigit() else None


def graph_def_program_hash(graph_def) -> int:
    g = copy.deepcopy(graph_def)
    for node in g.node:
        if node.op in ("PartitionedCall", "StatefulPartitionedCall"):
            f = node.attr["f"].func
            uid = _suffix_uid(f.name)
            if uid is not None:
                f.name = f.name[:-len(str(uid))]
            if "config_proto" in node.attr:
                node.attr["config_proto"].s = b""
        if node.op == "Const" and node.attr["dtype"].type == _STRING:
            node.attr["value"].ClearField("tensor")
    g.ClearField("library")
    g.ClearField("versions")
    g.library.SetInParent()    # C++ clears them through mutable_*(): present, empty
    g.versions.SetInParent()
    return fingerprint64(serialize(g))


def signature_def_hash(signature_defs) -> int:
    h = 0
    for key in sorted(signature_defs):
        h = fingerprint_cat64(h, fingerprint64(key.encode()))
        h = fingerprint_cat64(h, fingerprint64(serialize(signature_defs[key])))
    return h


def saved_object_graph_hash(object_graph) -> int:
    by_uid: dict = {}
    for name in object_graph.concrete_functions:
        uid = _suffix_uid(name)
        if uid is not None:
            by_uid.setdefault(uid, name)
    h = 0
    for uid in sorted(by_uid):
        name = by_uid[uid]
        h = fingerprint_cat64(h, fingerprint64(name[:-len(str(uid))].encode()))
        h = fingerprint_cat64(h, fingerprint64(serialize(object_graph.concrete_functions[name])))
    return h


def create_fingerprint_def(sm, checkpoint_index: bytes | None) -> FingerprintDef:
    """The FingerprintDef TensorFlow writes for SavedModel `sm` whose variables/variables.index
    holds `checkpoint_index` (None: no variables)."""
    mg = sm.meta_graphs[0]
    fp = FingerprintDef(
        saved_model_checksum=fingerprint64(serialize(sm)),
        graph_def_program_hash=graph_def_program_hash(mg.graph_def),
        signature_def_hash=signature_def_hash(mg.signature_def),
        saved_object_graph_hash=saved_object_graph_hash(mg.object_graph_def),
        checkpoint_hash=fingerprint64(checkpoint_index) if checkpoint_index is not None else 0,
        uuid=str(uuid.uuid4().int))
    fp.version.producer = FINGERPRINT_PRODUCER
    return fp


@tf_export("saved_model.experimental.Fingerprint", v1=[])
class Fingerprint:
    """The fingerprint of a SavedModel (the fields of its `fingerprint.pb`)."""

    def __init__(self, saved_model_checksum=None, graph_def_program_hash=None,
                 signature_def_hash=None, saved_object_graph_hash=None, checkpoint_hash=None,
                 version=None):
        self.saved_model_checksum = saved_model_checksum
        self.graph_def_program_hash = graph_def_program_hash
        self.signature_def_hash = signature_def_hash
        self.saved_object_graph_hash = saved_object_graph_hash
        self.checkpoint_hash = checkpoint_hash
        self.version = version

    @classmethod
    def from_proto(cls, proto) -> Fingerprint:
        if isinstance(proto, bytes):
            proto = FingerprintDef.FromString(proto)
        try:
            return cls(proto.saved_model_checksum, proto.graph_def_program_hash,
                       proto.signature_def_hash, proto.saved_object_graph_hash,
                       proto.checkpoint_hash, proto.version)
        except AttributeError as e:
            raise ValueError(f"Given proto could not be deserialized as fingerprint.{e}") \
                from None

    def __eq__(self, other) -> bool:
        fields = ("saved_model_checksum", "graph_def_program_hash", "signature_def_hash",
                  "saved_object_graph_hash", "checkpoint_hash")
        if isinstance(other, (Fingerprint, FingerprintDef)):
            return all(getattr(self, f) == getattr(other, f, None) for f in fields)
        return False

    __hash__ = None

    def __str__(self) -> str:
        return "\n".join([
            "SavedModel Fingerprint",
            f"  saved_model_checksum: {self.saved_model_checksum}",
            f"  graph_def_program_hash: {self.graph_def_program_hash}",
            f"  signature_def_hash: {self.signature_def_hash}",
            f"  saved_object_graph_hash: {self.saved_object_graph_hash}",
            f"  checkpoint_hash: {self.checkpoint_hash}"])

    def __repr__(self) -> str:
        return (f"Fingerprint({self.saved_model_checksum}, {self.graph_def_program_hash}, "
                f"{self.signature_def_hash}, {self.saved_object_graph_hash}, "
                f"{self.checkpoint_hash})")

    def singleprint(self) -> str:
        """The regularized hashes joined by '/' (TF's Singleprint: identifies the model
        regardless of immaterial serialization changes)."""
        values = (self.graph_def_program_hash, self.signature_def_hash,
                  self.saved_object_graph_hash, self.checkpoint_hash)
        if not all(isinstance(v, int) and v >= 0 for v in values):
            raise ValueError("Encounted invalid fingerprint values when constructing "
                             f"singleprint.graph_def_program_hash: {values[0]}"
                             f"signature_def_hash: {values[1]}saved_object_graph_hash: "
                             f"{values[2]}checkpoint_hash: {values[3]}")
        return "/".join(str(v) for v in values)


@tf_export("saved_model.experimental.read_fingerprint", v1=[])
def read_fingerprint(export_dir) -> Fingerprint:
    """The fingerprint recorded in `export_dir/fingerprint.pb`."""
    export_dir = os.fspath(export_dir)
    path = os.path.join(export_dir, constants.FINGERPRINT_FILENAME)
    if not os.path.isfile(path):
        raise FileNotFoundError("SavedModel Fingerprint Error: Could not find fingerprint in "
                                f"directory: {export_dir}\nNOT_FOUND: {path} not found")
    try:
        with open(path, "rb") as f:
            proto = FingerprintDef.FromString(f.read())
    except (OSError, DecodeError):
        raise RuntimeError("SavedModel Fingerprint Error: Could not read fingerprint from "
                           f"fingerprint.pb file in directory: {export_dir}") from None
    return Fingerprint.from_proto(proto)
