"""`tf.train.Example`, `Features`, `Feature`, `BytesList`, `FloatList`, `Int64List`,
`SequenceExample` (TensorFlow's example.proto and feature.proto, same field numbers)."""

from ndflow.core.protos.schema import compile_schema

_SCHEMA = """
syntax = "proto3";
package tensorflow;

message BytesList { repeated bytes value = 1; }
message FloatList { repeated float value = 1 [packed = true]; }
message Int64List { repeated int64 value = 1 [packed = true]; }

message Feature {
  oneof kind {
    BytesList bytes_list = 1;
    FloatList float_list = 2;
    Int64List int64_list = 3;
  }
}

message Features { map<string, Feature> feature = 1; }
message FeatureList { repeated Feature feature = 1; }
message FeatureLists { map<string, FeatureList> feature_list = 1; }

message Example { Features features = 1; }
message SequenceExample {
  Features context = 1;
  FeatureLists feature_lists = 2;
}
"""

_classes = compile_schema("tensorflow/core/example/example.proto", _SCHEMA)
BytesList = _classes["BytesList"]
FloatList = _classes["FloatList"]
Int64List = _classes["Int64List"]
Feature = _classes["Feature"]
Features = _classes["Features"]
FeatureList = _classes["FeatureList"]
FeatureLists = _classes["FeatureLists"]
Example = _classes["Example"]
SequenceExample = _classes["SequenceExample"]
