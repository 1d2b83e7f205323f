"""TF1's SavedModel writers: `tf.compat.v1.saved_model.Builder` (`builder.SavedModelBuilder`)
and `simple_save`, a Session's graph and variables as a TF1 SavedModel (no object graph):
MetaGraphDefs of the GraphDef with a graph-level saver and the signatures given, under their
tags, and the variables as a TF1 Saver bundle (keys are the variables' names), their values
taken when `add_meta_graph_and_variables` runs. `save()` writes everything to a temporary
directory, then renames it into place, so no reader sees half a SavedModel."""

from __future__ import annotations

import os
import shutil
import uuid

from google.protobuf import text_format
from tensorboard.compat.proto import meta_graph_pb2

from ndflow.checkpoint.tensor_bundle import BundleWriter
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import graph_to_graph_def, shape_to_proto
from ndflow.core.protos.saved_model_pb import SavedModel
from ndflow.saved_model import constants
from ndflow.saved_model.saver_graph import add_saver
from ndflow.saved_model.v1_deprecation import warn_deprecated
from ndflow.saved_model.variables_io import host_value


@tf_export(v1=["saved_model.build_tensor_info", "saved_model.utils.build_tensor_info"])
def build_tensor_info(tensor) -> meta_graph_pb2.TensorInfo:
    """The TensorInfo (name, dtype, shape) of a graph tensor."""
    info = meta_graph_pb2.TensorInfo(name=tensor.name, dtype=tensor.dtype.enum)
    info.tensor_shape.CopyFrom(shape_to_proto(tensor.shape))
    return info


@tf_export(v1=["saved_model.predict_signature_def",
                "saved_model.signature_def_utils.predict_signature_def"])
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


def _check_export_dir(export_dir: str) -> None:
    if os.path.exists(export_dir) and os.listdir(export_dir):
        raise AssertionError(f"Export directory already exists, and isn't empty. Please "
                             f"choose a different export directory, or delete all the "
                             f"contents of the specified directory: {export_dir}")


@tf_export(v1=["saved_model.Builder", "saved_model.builder.SavedModelBuilder"])
class SavedModelBuilder:
    """Builds a TF1 SavedModel: `add_meta_graph_and_variables(sess, tags, ...)` once, any
    more `add_meta_graph(tags, ...)`, then `save()`."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        _check_export_dir(self._export_dir)
        self._saved_model = SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._variables = None   # [(key, value)] once add_meta_graph_and_variables ran
        self._graph_def = self._saver_def = None

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,  # noqa: ARG002
                                     clear_devices=False, main_op=None,  # noqa: ARG002
                                     strip_default_attrs=False, saver=None,  # noqa: ARG002
                                     init_op=None, train_op=None):  # noqa: ARG002
        """The session's graph as a MetaGraphDef tagged `tags`, and its variables' values."""
        if self._variables is not None:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        graph = sess.graph
        gd = graph_to_graph_def(graph)
        variables = graph.get_collection("variables")
        entries = [(v.name[:-2] if v.name.endswith(":0") else v.name, v.handle.op.name, v)
                   for v in variables]
        self._saver_def = add_saver(gd, entries)
        self._graph_def = gd
        values = sess.run([v.value() for v in variables]) if variables else []
        self._variables = [(key, host_value(var, value))
                           for (key, _, var), value in zip(entries, values)]
        self._add(tags, signature_def_map)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,  # noqa: ARG002
                       legacy_init_op=None, clear_devices=False, main_op=None,  # noqa: ARG002
                       strip_default_attrs=False, saver=None):  # noqa: ARG002
        """Another MetaGraphDef of the saved graph, tagged `tags`."""
        if self._variables is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        self._add(tags, signature_def_map)

    def _add(self, tags, signature_def_map) -> None:
        tags = [tags] if isinstance(tags, str) else list(tags)
        for mg in self._saved_model.meta_graphs:
            if set(mg.meta_info_def.tags) == set(tags):
                raise AssertionError(f"MetaGraphDef associated with tags {tags!r} already "
                                     "exists. Please use a different set of tags.")
        for key, sd in (signature_def_map or {}).items():
            if not isinstance(sd, meta_graph_pb2.SignatureDef):
                raise TypeError(f"signature_def_map[{key!r}] is a {type(sd).__name__}, not "
                                "a SignatureDef")
        mg = self._saved_model.meta_graphs.add()
        mg.meta_info_def.tags.extend(tags)
        mg.meta_info_def.tensorflow_version = "2.21.0"
        mg.meta_info_def.tensorflow_git_version = "ndflow"
        mg.graph_def.CopyFrom(self._graph_def)
        mg.saver_def.CopyFrom(self._saver_def)
        for key, sd in (signature_def_map or {}).items():
            mg.signature_def[key].CopyFrom(sd)

    def save(self, as_text: bool = False) -> bytes:
        """Writes the SavedModel (`saved_model.pbtxt` with `as_text`); returns its path."""
        if self._variables is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        export_dir = self._export_dir
        _check_export_dir(export_dir)
        parent = os.path.dirname(os.path.abspath(export_dir))
        os.makedirs(parent, exist_ok=True)
        tmp = os.path.join(parent, f".{os.path.basename(export_dir)}.tmp-{uuid.uuid4().hex}")
        name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else \
            constants.SAVED_MODEL_FILENAME_PB
        try:
            os.makedirs(os.path.join(tmp, constants.VARIABLES_DIRECTORY))
            writer = BundleWriter(os.path.join(tmp, constants.VARIABLES_DIRECTORY,
                                               constants.VARIABLES_FILENAME))
            for key, value in self._variables:
                writer.add(key, value)
            writer.finish()
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(text_format.MessageToString(self._saved_model).encode() if as_text
                        else self._saved_model.SerializeToString())
            if os.path.isdir(export_dir):
                os.rmdir(export_dir)  # empty (checked above)
            os.rename(tmp, export_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return os.path.join(export_dir, name).encode()


@tf_export(v1=["saved_model.simple_save"])
def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """Saves `session`'s graph and variables with a `serving_default` signature."""
    warn_deprecated("simple_save", "tensorflow.python.saved_model.simple_save",
                    "This API was designed for TensorFlow v1. See "
                    "https://www.tensorflow.org/guide/migrate for instructions on how to "
                    "migrate your code to TensorFlow v2.")
    builder = SavedModelBuilder(export_dir)
    signature = predict_signature_def(inputs, outputs)
    builder.add_meta_graph_and_variables(
        session, [constants.SERVING],
        signature_def_map={constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        legacy_init_op=legacy_init_op)
    builder.save()
