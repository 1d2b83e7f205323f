"""The proto3 schema compiler behind ndflow's extra TensorFlow protos."""

import pytest
from tensorboard.compat.proto import types_pb2

from ndflow.core.protos.example_pb import Example, Feature, Features, Int64List
from ndflow.core.protos.schema import compile_schema
from ndflow.core.protos.tensor_bundle_pb import BundleEntryProto, BundleHeaderProto


def test_field_numbers_and_wire_format_are_tensorflows():
    # An Example with one int64 feature, as TensorFlow 2.21 serializes it
    # (tf.train.Example(...).SerializeToString().hex()).
    e = Example(features=Features(feature={"a": Feature(int64_list=Int64List(value=[1, 2]))}))
    assert e.SerializeToString().hex() == "0a0d0a0b0a016112061a040a020102"
    assert Example.FromString(e.SerializeToString()).features.feature["a"].WhichOneof(
        "kind") == "int64_list"


def test_dependencies_enums_and_fixed32_fields():
    entry = BundleEntryProto(dtype=types_pb2.DT_HALF, offset=8, size=4, crc32c=0xFFFFFFFF)
    entry.shape.dim.add(size=2)
    back = BundleEntryProto.FromString(entry.SerializeToString())
    assert (back.dtype, back.crc32c, back.shape.dim[0].size) == (types_pb2.DT_HALF,
                                                                 0xFFFFFFFF, 2)
    assert BundleHeaderProto.Endianness.Name(BundleHeaderProto.BIG) == "BIG"


def test_compiling_twice_returns_the_same_classes():
    text = "syntax = \"proto3\"; package ndflow_test; message M { map<string, int64> m = 1; }"
    first = compile_schema("ndflow_test/m.proto", text)["M"]
    assert compile_schema("ndflow_test/m.proto", text)["M"] is first
    assert dict(first(m={"x": 3}).m) == {"x": 3}


def test_malformed_schema_is_a_syntax_error():
    with pytest.raises(SyntaxError, match="expected '='"):
        compile_schema("ndflow_test/bad.proto", "message M { int64 a 1; }")
