"""`tf.compat.v1.saved_model.simple_save`: a Session's graph and variables as a TF1
SavedModel (no object graph): the GraphDef with a graph-level saver, one
`serving_default` predict signature naming the given tensors, and the variables as a TF1
Saver bundle (keys are the variables' names). Written to a temporary directory, then
renamed into place."""

from __future__ import annotations

import os
import shutil
import uuid

from tensorboard.compat.proto import meta_graph_pb2

from ndflow.checkpoint.tensor_bundle import BundleWriter
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import graph_to_graph_def, shape_to_proto
from ndflow.core.protos.saved_model_pb import SavedModel
from ndflow.saved_model import constants
from ndflow.saved_model.saver_graph import add_saver
from ndflow.saved_model.variables_io import host_value


@tf_export(v1=["saved_model.build_tensor_info"])
def build_tensor_info(tensor) -> meta_graph_pb2.TensorInfo:
    """The TensorInfo (name, dtype, shape) of a graph tensor."""
    info = meta_graph_pb2.TensorInfo(name=tensor.name, dtype=tensor.dtype.enum)
    info.tensor_shape.CopyFrom(shape_to_proto(tensor.shape))
    return info


@tf_export(v1=["saved_model.predict_signature_def"])
def predict_signature_def(inputs: dict, outputs: dict) -> meta_graph_pb2.SignatureDef:
    """A predict SignatureDef of named input and output tensors."""
    if not inputs:
        raise ValueError(f"Prediction `inputs` cannot be None or empty. Received: {inputs}")
    if not outputs:
        raise ValueError(f"Prediction `outputs` cannot be None or empty. Received: {outputs}")
    sd = meta_graph_pb2.SignatureDef(method_name=constants.PREDICT_METHOD_NAME)
    for k, t in inputs.items():
        sd.inputs[k].CopyFrom(build_tensor_info(t))
    for k, t in outputs.items():
        sd.outputs[k].CopyFrom(build_tensor_info(t))
    return sd


@tf_export(v1=["saved_model.simple_save"])
def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """Saves `session`'s graph and variables with a `serving_default` signature."""
    export_dir = os.fspath(export_dir)
    if os.path.exists(export_dir) and os.listdir(export_dir):
        raise AssertionError(f"Export directory already exists, and isn't empty. Please "
                             f"choose a different export directory, or delete all the "
                             f"contents of the specified directory: {export_dir}")
    graph = session.graph
    signature = predict_signature_def(inputs, outputs)
    gd = graph_to_graph_def(graph)
    variables = graph.get_collection("variables")
    entries = [(v.name[:-2] if v.name.endswith(":0") else v.name, v.handle.op.name, v)
               for v in variables]
    saver_def = add_saver(gd, entries)
    values = session.run([v.value() for v in variables]) if variables else []
    mg = meta_graph_pb2.MetaGraphDef()
    mg.meta_info_def.tags.append(constants.SERVING)
    mg.meta_info_def.tensorflow_version = "2.21.0"
    mg.meta_info_def.tensorflow_git_version = "ndflow"
    mg.graph_def.CopyFrom(gd)
    mg.saver_def.CopyFrom(saver_def)
    mg.signature_def[constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY].CopyFrom(signature)
    sm = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
    sm.meta_graphs.append(mg)
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(export_dir)}.tmp-{uuid.uuid4().hex}")
    try:
        os.makedirs(os.path.join(tmp, constants.VARIABLES_DIRECTORY))
        writer = BundleWriter(os.path.join(tmp, constants.VARIABLES_DIRECTORY,
                                           constants.VARIABLES_FILENAME))
        for (key, _, var), value in zip(entries, values):
            writer.add(key, host_value(var, value))
        writer.finish()
        with open(os.path.join(tmp, constants.SAVED_MODEL_FILENAME_PB), "wb") as f:
            f.write(sm.SerializeToString())
        if os.path.isdir(export_dir):
            os.rmdir(export_dir)  # empty (checked above)
        os.rename(tmp, export_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
