"""decode_proto / encode_proto's numba batch path (kernels/proto_wire_numba.py) against the
reference reader and writer (kernels/proto_wire.py, itself checked against TF by
test_proto_ops.py): the same values, sizes, bytes and errors for random messages of every
numeric field kind - singular and repeated, packed and not, packed runs for unpacked fields,
mismatched wire types, unknown fields, groups and corrupted bytes."""

import os

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import ndflow as tf
from ndflow.core import errors
from ndflow.kernels import proto_wire_numba

pytest.importorskip("numba")

DESC = os.path.join(os.path.dirname(__file__), "..", "fixtures", "decode_proto",
                    "test_messages.desc")
with open(DESC, "rb") as _f:
    SOURCE = b"bytes://" + _f.read()
_pool = descriptor_pool.DescriptorPool()
with open(DESC, "rb") as _f:
    for _file in descriptor_pb2.FileDescriptorSet.FromString(_f.read()).file:
        _pool.Add(_file)
MSG = _pool.FindMessageTypeByName("ndflow_test.TestValue")
CLS = message_factory.GetMessageClass(MSG)
FD = descriptor_pb2.FieldDescriptorProto
NUMERIC = [f for f in MSG.fields if f.type not in (FD.TYPE_STRING, FD.TYPE_BYTES,
                                                    FD.TYPE_MESSAGE, FD.TYPE_GROUP)]
NATURAL = {FD.TYPE_DOUBLE: tf.float64, FD.TYPE_FLOAT: tf.float32, FD.TYPE_INT64: tf.int64,
           FD.TYPE_UINT64: tf.uint64, FD.TYPE_INT32: tf.int32, FD.TYPE_FIXED64: tf.uint64,
           FD.TYPE_FIXED32: tf.uint32, FD.TYPE_BOOL: tf.bool, FD.TYPE_UINT32: tf.uint32,
           FD.TYPE_SFIXED32: tf.int32, FD.TYPE_SFIXED64: tf.int64, FD.TYPE_SINT32: tf.int32,
           FD.TYPE_SINT64: tf.int64, FD.TYPE_ENUM: tf.int32}
# wider outputs the schema allows (proto_utils::IsCompatibleType)
WIDER = {FD.TYPE_FLOAT: tf.float64, FD.TYPE_INT32: tf.int64, FD.TYPE_UINT32: tf.uint64,
         FD.TYPE_FIXED32: tf.uint64, FD.TYPE_SFIXED32: tf.int64, FD.TYPE_SINT32: tf.int64}


def _value(rng, f):
    t = f.type
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return float(rng.choice([0.5, -1e30, 3.25, 1e-40, float("inf"), -0.0]))
    if t == FD.TYPE_BOOL:
        return bool(rng.integers(2))
    if t == FD.TYPE_ENUM:
        return int(rng.integers(3))
    bits = 32 if t in (FD.TYPE_INT32, FD.TYPE_UINT32, FD.TYPE_FIXED32, FD.TYPE_SFIXED32,
                       FD.TYPE_SINT32) else 64
    signed = t not in (FD.TYPE_UINT32, FD.TYPE_FIXED32, FD.TYPE_UINT64, FD.TYPE_FIXED64)
    v = int(rng.integers(0, 1 << 62)) >> int(rng.integers(0, 62))
    v %= 1 << (bits - 1 if signed else bits)
    return -v if signed and rng.integers(2) else v


def _message(rng) -> bytes:
    m = CLS()
    for f in NUMERIC:
        if rng.random() < 0.4:
            continue
        if f.is_repeated:
            getattr(m, f.name).extend(_value(rng, f) for _ in range(rng.integers(0, 6)))
        else:
            setattr(m, f.name, _value(rng, f))
    data = m.SerializeToString()
    extra = [b"\x2a\x02\x01\x7f",          # a packed run for unpacked int32_value (5)
             b"\xf2\x01\x02\x05\x06",      # packed run for singular opt_int32 (30)
             b"\x28\x80\x01",              # int32_value as a plain varint
             b"\x2d\x01\x02\x03\x04",      # int32_value with the wrong wire type (I32)
             b"\x98\x06\x07",              # unknown field 99
             b"\xa3\x06\x08\x01\xa4\x06",  # a group (field 100)
             b"\x3a\x04\x01\x00\x00\x00"]  # fixed32_value packed
    pieces = [data] + [extra[i] for i in rng.integers(0, len(extra), rng.integers(0, 3))]
    order = rng.permutation(len(pieces))
    return b"".join(pieces[i] for i in order)


def _corrupt(rng, data: bytes) -> bytes:
    if not data:
        return b"\x00"
    b = bytearray(data)
    if rng.random() < 0.5:
        b[rng.integers(len(b))] = int(rng.integers(256))
        return bytes(b)
    return bytes(b[:rng.integers(len(b))])


def _decode(batch, names, types, quick: bool, monkeypatch):
    with monkeypatch.context() as m:
        if not quick:
            m.setattr(proto_wire_numba, "kernels", lambda: None)
        try:
            sizes, values = tf.io.decode_proto(tf.constant(batch), "ndflow_test.TestValue",
                                               names, types, descriptor_source=SOURCE)
        except errors.OpError as e:
            return type(e), e.message
    return sizes.numpy(), [v.numpy() for v in values]


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a[0], type):
        assert a == b
        return
    np.testing.assert_array_equal(a[0], b[0])
    for x, y in zip(a[1], b[1]):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()   # bit for bit: NaN payloads, -0.0


@pytest.mark.parametrize("seed", range(6))
def test_decode_matches_reference(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    batch = [_message(rng) for _ in range(40)]
    names = [f.name for f in NUMERIC]
    types = [(WIDER if seed % 2 else NATURAL).get(f.type, NATURAL[f.type]) for f in NUMERIC]
    _same(_decode(batch, names, types, True, monkeypatch),
          _decode(batch, names, types, False, monkeypatch))
    sub = [names[i] for i in rng.permutation(len(names))[:4]]
    sub_types = [NATURAL[MSG.fields_by_name[n].type] for n in sub]
    _same(_decode(batch, sub + sub[:1], sub_types + sub_types[:1], True, monkeypatch),
          _decode(batch, sub + sub[:1], sub_types + sub_types[:1], False, monkeypatch))


@pytest.mark.parametrize("seed", range(6))
def test_decode_of_corrupted_bytes_matches_reference(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    names = [f.name for f in NUMERIC]
    types = [NATURAL[f.type] for f in NUMERIC]
    for _ in range(15):
        batch = [_message(rng) for _ in range(3)]
        batch[rng.integers(3)] = _corrupt(rng, batch[0])
        _same(_decode(batch, names, types, True, monkeypatch),
              _decode(batch, names, types, False, monkeypatch))


@pytest.mark.parametrize("seed", range(4))
def test_encode_matches_reference(seed, monkeypatch):
    rng = np.random.default_rng(200 + seed)
    batch = [_message(rng) for _ in range(30)]
    names = [f.name for f in NUMERIC]
    types = [(WIDER if seed % 2 else NATURAL).get(f.type, NATURAL[f.type]) for f in NUMERIC]
    sizes, values = _decode(batch, names, types, True, monkeypatch)
    sizes = sizes.copy()
    sizes[rng.random(sizes.shape) < 0.1] = -1       # TF: a packed field's tag, no values
    outs = []
    for quick in (True, False):
        with monkeypatch.context() as m:
            if not quick:
                m.setattr(proto_wire_numba, "kernels", lambda: None)
            outs.append(tf.io.encode_proto(tf.constant(sizes), [tf.constant(v) for v in values],
                                           names, "ndflow_test.TestValue",
                                           descriptor_source=SOURCE).numpy())
    assert outs[0].tolist() == outs[1].tolist()


def test_batch_path_runs():
    """The equivalence tests above compare something: numba's kernels build here."""
    assert proto_wire_numba.kernels() is not None
