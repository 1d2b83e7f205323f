"""SavedModels whose functions take and return SparseTensors: ndflow writes the
SparseTensorSpec as TensorFlow's TypeSpecProto (SPARSE_TENSOR_SPEC, three components) and
the reloaded function takes a SparseTensor and gives one back."""

from __future__ import annotations

import numpy as np
from tensorboard.compat.proto import struct_pb2

import ndflow as tf
from ndflow.core.protos.saved_model_pb import SavedModel
from tests.saved_model.test_ragged_signatures import _type_specs


class _Double(tf.Module):
    @tf.function(input_signature=[tf.SparseTensorSpec([None, 3], tf.int32)])
    def double(self, s):
        return tf.sparse.map_values(tf.multiply, s, 2)


def test_writes_sparse_signature_as_tensorflow_and_reloads(tmp_path):
    tf.saved_model.save(_Double(), str(tmp_path))
    sm = SavedModel.FromString((tmp_path / "saved_model.pb").read_bytes())
    fns = sm.meta_graphs[0].object_graph_def.concrete_functions.values()
    specs = [s for fn in fns for v in (fn.canonicalized_input_signature, fn.output_signature)
             for s in _type_specs(v)]
    assert {(s.type_spec_class, s.type_spec_class_name, s.num_flat_components)
            for s in specs} == {(struct_pb2.TypeSpecProto.SPARSE_TENSOR_SPEC,
                                 "SparseTensorSpec", 3)}
    loaded = tf.saved_model.load(str(tmp_path))
    out = loaded.double(tf.sparse.SparseTensor([[0, 0], [1, 2]], [1, 2], [2, 3]))
    assert isinstance(out, tf.sparse.SparseTensor)
    np.testing.assert_array_equal(out.values.numpy(), [2, 4])
    np.testing.assert_array_equal(out.indices.numpy(), [[0, 0], [1, 2]])
    np.testing.assert_array_equal(out.dense_shape.numpy(), [2, 3])


def test_reloaded_signature_keeps_the_sparse_dense_shape(tmp_path):
    # TF 2.21 reloads SparseTensorSpec(TensorShape([None, 3]), tf.int32): the spec as given,
    # not one rebuilt from its components' specs ([None, None])
    tf.saved_model.save(_Double(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    (spec,), _ = loaded.double.concrete_functions[0].structured_input_signature
    assert isinstance(spec, tf.SparseTensorSpec)
    assert spec.shape.as_list() == [None, 3] and spec.dtype == tf.int32
