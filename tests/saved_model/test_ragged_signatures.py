"""SavedModels whose functions take and return RaggedTensors: TensorFlow 2.21's (fixture in
tests/fixtures/ragged_saved_model, written by generate.py there) load and run here, and
ndflow writes the RaggedTensorSpec signature as TensorFlow's TypeSpecProto."""

from __future__ import annotations

from pathlib import Path

from tensorboard.compat.proto import struct_pb2

import ndflow as tf
from ndflow.core.protos.saved_model_pb import SavedModel

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ragged_saved_model" / "model"
ROWS = [[1.0, 2.0], [], [3.0]]


def test_loads_tensorflows_ragged_function():
    loaded = tf.saved_model.load(str(FIXTURE))
    sums, scaled = loaded.f(tf.ragged.constant(ROWS))
    assert sums.numpy().tolist() == [3.0, 0.0, 3.0]
    assert isinstance(scaled, tf.RaggedTensor) and scaled.to_list() == [[2.0, 4.0], [], [6.0]]


class _RowMeans(tf.Module):
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32, 1)])
    def f(self, x):
        return tf.reduce_mean(x, axis=1), x + 1.0


def test_writes_ragged_signature_as_tensorflow_and_reloads(tmp_path):
    tf.saved_model.save(_RowMeans(), str(tmp_path))
    sm = SavedModel.FromString((tmp_path / "saved_model.pb").read_bytes())
    specs = [v for fn in sm.meta_graphs[0].object_graph_def.concrete_functions.values()
             for v in _type_specs(fn.canonicalized_input_signature)]
    assert [(s.type_spec_class, s.type_spec_class_name, s.num_flat_components)
            for s in specs] == [(struct_pb2.TypeSpecProto.RAGGED_TENSOR_SPEC,
                                 "RaggedTensorSpec", 2)]
    means, plus = tf.saved_model.load(str(tmp_path)).f(tf.ragged.constant([[1.0, 3.0], [5.0]]))
    assert means.numpy().tolist() == [2.0, 5.0] and plus.to_list() == [[2.0, 4.0], [6.0]]


def _type_specs(value) -> list:
    """The TypeSpecProtos inside a StructuredValue."""
    kind = value.WhichOneof("kind")
    if kind == "type_spec_value":
        return [value.type_spec_value]
    if kind in ("tuple_value", "list_value"):
        return [t for v in getattr(value, kind).values for t in _type_specs(v)]
    if kind == "dict_value":
        return [t for v in value.dict_value.fields.values() for t in _type_specs(v)]
    return []
