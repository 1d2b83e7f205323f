"""tf.io.decode_proto / tf.io.encode_proto against TF 2.21 (tests/fixtures/decode_proto: a
FileDescriptorSet of every field type, TF's decoded sizes and values, its encodings, graph
shapes and errors), descriptor sources from a file, bytes:// and local://."""

import base64
import json
import os

import numpy as np
import pytest
from google.protobuf.descriptor import FieldDescriptor as FD

import ndflow as tf
from ndflow.core import errors
from ndflow.kernels import proto_wire

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "decode_proto")
DESC = os.path.join(HERE, "test_messages.desc")
with open(DESC, "rb") as _f:
    BYTES_SOURCE = b"bytes://" + _f.read()
with open(os.path.join(HERE, "cases.json")) as _f:
    CASES = json.load(_f)
DECODE = {c["case"]: c for c in CASES["decode"]}
ERRORS = {c["case"]: c for c in CASES["errors"]}
MESSAGES = [base64.b64decode(m) for m in CASES["messages"]]


def _source(kind):
    return {"file": DESC, "bytes": BYTES_SOURCE, "local": "local://"}[kind]


def _batch(case):
    if case["case"] == "text_format":
        return [t.encode() for t in case["batch"]]
    if isinstance(case["batch"][0], list):
        return [[base64.b64decode(m) for m in row] for row in case["batch"]]
    return [base64.b64decode(m) for m in case["batch"]]


def _tensor(rec):
    """A fixture value as (dtype name, shape, flat Python values)."""
    if "b64" in rec:
        return [base64.b64decode(x) for x in rec["b64"]]
    if "hex" in rec:
        return [float.fromhex(x) for x in rec["hex"]]
    return rec["ints"]


def _as_fixture_values(t):
    a = t.numpy()
    flat = list(a.reshape(-1))
    if a.dtype.kind == "f":
        return [float(x) for x in flat]
    if a.dtype != object:
        return [int(x) for x in flat]
    return flat


def _assert_matches(t, rec):
    assert t.dtype.name == rec["dtype"]
    assert list(t.shape) == rec["shape"]
    got, want = _as_fixture_values(t), _tensor(rec)
    if rec["dtype"].startswith("float"):  # bit for bit, signed zeros and subnormals included
        assert [float(x).hex() for x in got] == [float(x).hex() for x in want]
    else:
        assert got == want


@pytest.mark.parametrize("name", sorted(DECODE))
def test_decode_matches_tf(name):
    case = DECODE[name]
    sizes, values = tf.io.decode_proto(
        _batch(case), case["message_type"], case["fields"],
        [tf.as_dtype(t) for t in case["types"]], descriptor_source=_source(case["source"]),
        **case["kwargs"])
    _assert_matches(sizes, case["sizes"])
    assert len(values) == len(case["values"])
    for v, rec in zip(values, case["values"]):
        _assert_matches(v, rec)


def test_decode_in_a_function_and_graph_shapes():
    case = DECODE["batch_2x3"]

    @tf.function
    def f(b):
        return tf.io.decode_proto(b, "ndflow_test.TestValue", case["fields"],
                                  [tf.as_dtype(t) for t in case["types"]],
                                  descriptor_source=BYTES_SOURCE)

    sizes, values = f(tf.constant(_batch(case)))
    _assert_matches(sizes, case["sizes"])
    for v, rec in zip(values, case["values"]):
        _assert_matches(v, rec)
    with tf.Graph().as_default():
        b = tf.compat.v1.placeholder(tf.string, [2, None])
        sizes, values = tf.io.decode_proto(b, "ndflow_test.TestValue",
                                           ["int32_value", "opt_string"],
                                           [tf.int32, tf.string], descriptor_source=DESC)
        s = tf.compat.v1.placeholder(tf.int32, [4, 2])
        e = tf.io.encode_proto(s, [tf.compat.v1.placeholder(tf.int32, [4, 3]),
                                   tf.compat.v1.placeholder(tf.string, [4, 1])],
                               ["int32_value", "opt_string"], "ndflow_test.TestValue",
                               descriptor_source=DESC)
        got = {"sizes": sizes.shape.as_list(), "values": [v.shape.as_list() for v in values],
               "encode": e.shape.as_list()}
    assert got == CASES["graph"]


def _fixture_tensor(rec):
    values = _tensor(rec)
    dtype = tf.as_dtype(rec["dtype"])
    if dtype == tf.string:
        arr = np.empty(len(values), object)
        arr[:] = values
    else:
        arr = np.array(values, dtype=dtype.as_numpy_dtype)
    return tf.constant(arr.reshape(rec["shape"]), dtype=dtype)


@pytest.mark.parametrize("case", CASES["encode"], ids=lambda c: c["case"])
def test_encode_matches_tf_bytes(case):
    sizes = _fixture_tensor(case["sizes"])
    values = [_fixture_tensor(v) for v in case["values"]]
    source = DESC if case["case"] == "roundtrip_all" else BYTES_SOURCE
    out = tf.io.encode_proto(sizes, values, case["fields"], "ndflow_test.TestValue",
                             descriptor_source=source)
    assert [base64.b64encode(b).decode() for b in out.numpy().reshape(-1)] == case["bytes"]


def test_encode_decode_roundtrip_of_tf_messages():
    # TF re-encodes the all-fields batch to bytes that decode to the same tensors.
    case = DECODE["all_fields"]
    types = [tf.as_dtype(t) for t in case["types"]]
    sizes, values = tf.io.decode_proto(MESSAGES, case["message_type"], case["fields"], types,
                                       descriptor_source=DESC)
    encoded = tf.io.encode_proto(sizes, values, case["fields"], case["message_type"],
                                 descriptor_source=DESC)
    sizes2, values2 = tf.io.decode_proto(encoded, case["message_type"], case["fields"],
                                         types, descriptor_source=DESC)
    np.testing.assert_array_equal(sizes2.numpy(), sizes.numpy())
    for a, b in zip(values, values2):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _core(message: str) -> str:
    """TF's eager message without its function-node prefix and op suffix."""
    if "}} " in message:
        message = message.split("}} ", 1)[1]
    return message.split(" [Op:")[0]


def _raises_like_tf(case_name, call):
    case = ERRORS[case_name]
    cls = getattr(errors, case["error"])
    with pytest.raises(cls) as e:
        call()
    return _core(case["message"]), str(e.value)


DECODE_ERRORS = [c for c in CASES["errors"] if "fields" in c]


@pytest.mark.parametrize("case", DECODE_ERRORS, ids=lambda c: c["case"])
def test_decode_errors_match_tf(case):
    def call():
        tf.io.decode_proto(_batch(case), case["message_type"], case["fields"],
                           [tf.as_dtype(t) for t in case["types"]],
                           descriptor_source=_source(case["source"]), **case["kwargs"])
    want, got = _raises_like_tf(case["case"], call)
    assert want in got


def test_descriptor_source_errors_match_tf():
    missing = os.path.join(HERE, "no_such.desc")
    for case, source in [("missing_file", missing), ("bad_bytes", "bytes://not a descriptor set")]:
        def call(source=source):
            tf.io.decode_proto([MESSAGES[0]], "ndflow_test.TestValue", ["int32_value"],
                               [tf.int32], descriptor_source=source)
        want, got = _raises_like_tf(case, call)
        # TF's message names the source (a path that differs between machines).
        assert want.split('REGISTER_DESCRIPTOR_POOL("')[0] in got
        assert f'REGISTER_DESCRIPTOR_POOL("{source}", ...);' in got

    def empty():
        tf.io.decode_proto(tf.constant([], tf.string), "ndflow_test.TestValue",
                           ["int32_value"], [tf.int32], descriptor_source=DESC)
    want, got = _raises_like_tf("empty_batch", empty)
    assert want in got


ENCODE_ERRORS = {
    "size_too_large": ([[3]], [np.array([[1, 2]], np.int32)], ["int32_value"]),
    "sizes_shape": ([[1, 1]], [np.array([[1]], np.int32)], ["int32_value"]),
    "incompatible": ([[1]], [np.array([[1.0]], np.float32)], ["int32_value"]),
    "not_matrix": ([1], [np.array([1], np.int32)], ["int32_value"]),
    "prefix_mismatch": ([[1, 1]], [np.array([[1]], np.int32), np.array([[1], [2]], np.int32)],
                        ["int32_value", "sint32_value"]),
    "unknown_field": ([[1]], [np.array([[1]], np.int32)], ["nope"]),
}


@pytest.mark.parametrize("name", sorted(ENCODE_ERRORS))
def test_encode_errors_match_tf(name):
    sizes, values, fields = ENCODE_ERRORS[name]

    def call():
        tf.io.encode_proto(tf.constant(sizes, tf.int32), values, fields,
                           "ndflow_test.TestValue", descriptor_source=DESC)
    want, got = _raises_like_tf("encode_" + name, call)
    assert want in got


def test_encode_list_length_mismatch_matches_tf():
    want = _core(ERRORS["encode_list_mismatch"]["message"])
    with tf.Graph().as_default():
        # The op's inputs must be as many as field_names; graph building checks nothing else.
        sizes = tf.constant([[1]], tf.int32)
        out = tf.io.encode_proto(sizes, [tf.constant([[1]], tf.int32)],
                                 ["int32_value", "sint32_value"], "ndflow_test.TestValue",
                                 descriptor_source=DESC)
        with tf.compat.v1.Session() as sess, pytest.raises(errors.InvalidArgumentError) as e:
            sess.run(out)
    assert want in str(e.value)


def test_packed_varints_vectorized_as_scalar():
    # Long packed runs take a NumPy path; it must agree with the per-value reader (which the
    # fixtures check against TF) for every varint kind, 64-bit edge values included.
    rng = np.random.default_rng(0)
    vals = [int(x) >> int(s) for x, s in zip(rng.integers(0, 2**63, 300, dtype=np.uint64),
                                             rng.integers(0, 63, 300))]
    vals += [0, 1, 2**64 - 1, 2**63, 2**32 - 1, 2**31, 127, 128]
    run = bytearray()
    for v in vals:
        proto_wire.write_varint(run, v)
    for ftype in (FD.TYPE_INT32, FD.TYPE_ENUM, FD.TYPE_UINT32, FD.TYPE_INT64, FD.TYPE_UINT64,
                  FD.TYPE_SINT32, FD.TYPE_SINT64, FD.TYPE_BOOL):
        assert proto_wire.read_packed(bytes(run), 0, len(run), ftype) == \
            [proto_wire.convert_varint(ftype, v) for v in vals]
    with pytest.raises(errors.DataLossError, match="Corrupt packed varint"):
        proto_wire.read_packed(b"\x80" * 11 + b"\x01" * 8, 0, 19, FD.TYPE_INT64)


def test_not_differentiable_as_in_tf():
    from ndflow.ops.proto_ops import DecodeProtoV2, EncodeProto
    assert DecodeProtoV2.not_differentiable and EncodeProto.not_differentiable
