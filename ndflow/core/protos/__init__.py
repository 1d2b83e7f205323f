"""TensorFlow's protos that the `tensorboard` package does not ship, built at import time.

The `tensorboard` package carries most of TensorFlow's protos (GraphDef, MetaGraphDef, Event,
SavedObjectGraph, TrackableObjectGraph ...) under the package name `tensorboard`. A few that
ndflow's file formats need are missing there: `tf.train.Example` (example.proto,
feature.proto), the checkpoint's TensorBundle header/entries (tensor_bundle.proto) and the
SavedModel wrapper (saved_model.proto). Rather than check in generated code tied to one protoc
version, each module here holds the schema as proto3 text (same field numbers and types as
TensorFlow's, so the wire format is TensorFlow's) and `compile_schema` turns it into message
classes through protobuf's descriptor pool. Message types from tensorboard's protos are
referenced by their full name (`.tensorboard.TensorShapeProto`).
"""

from ndflow.core.protos.schema import compile_schema

__all__ = ["compile_schema"]
