"""TF1's SignatureDef helpers (`tf.compat.v1.saved_model.*` and their
`signature_def_utils.*` / `utils.*` aliases): `build_signature_def`, the TensorFlow Serving
`classification_signature_def` / `regression_signature_def` with Serving's dtype rules,
`is_valid_signature`, `get_tensor_from_tensor_info`, `main_op_with_restore`, and
`MethodNameUpdater` (rewrites signatures' method names in a SavedModel on disk)."""

from __future__ import annotations

import os
import re

from google.protobuf import struct_pb2, text_format
from tensorboard.compat.proto import meta_graph_pb2, types_pb2

from ndflow.core import context, nest
from ndflow.core import tf_logging as logging
from ndflow.core.api_export import tf_export
from ndflow.core.atomic_file import atomic_write
from ndflow.core.graph_def import ndarray_to_tensor_proto
from ndflow.core.tensor import EagerTensor, Tensor
from ndflow.ops.array_core import group
from ndflow.ops.lookup_tables import tables_initializer
from ndflow.ops.sparse_tensor import SparseTensor
from ndflow.ops.variables import global_variables_initializer, local_variables_initializer
from ndflow.saved_model import constants
from ndflow.saved_model.builder_v1 import build_tensor_info
from ndflow.saved_model.load_api import contains_saved_model
from ndflow.saved_model.loading import read_saved_model
from ndflow.saved_model.nested_structure_coder import decode

tf_export(v1=["saved_model.loader.maybe_saved_model_directory"])(contains_saved_model)
_K = constants._VALUES  # the signature keys and method names


@tf_export(v1=["saved_model.build_signature_def",
               "saved_model.signature_def_utils.build_signature_def"])
def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef of TensorInfo maps, a method name and default values (eager tensors or
    graph Consts)."""
    sd = meta_graph_pb2.SignatureDef()
    for key in inputs or {}:
        sd.inputs[key].CopyFrom(inputs[key])
    for key in outputs or {}:
        sd.outputs[key].CopyFrom(outputs[key])
    if method_name is not None:
        sd.method_name = method_name
    for arg_name, default in (defaults or {}).items():
        if isinstance(default, EagerTensor):
            sd.defaults[arg_name].CopyFrom(ndarray_to_tensor_proto(default.numpy(),
                                                                   default.dtype))
        elif getattr(getattr(default, "op", None), "type", None) == "Const":
            sd.defaults[arg_name].CopyFrom(default.op.node_def.attr["value"].tensor)
        else:
            raise ValueError(f"Unable to convert object {default} of type {type(default)} "
                             "to TensorProto.")
    return sd


def _serving_input(kind: str, examples):
    if examples is None:
        raise ValueError(f"{kind} `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        what = "be of type Tensor" if kind == "Regression" else "be a string Tensor"
        prefix = "Expected regression `examples` to " if kind == "Regression" else \
            "Classification `examples` must "
        raise ValueError(f"{prefix}{what}. Found `examples` of type {type(examples)}.")


@tf_export(v1=["saved_model.regression_signature_def",
               "saved_model.signature_def_utils.regression_signature_def"])
def regression_signature_def(examples, predictions):
    """TensorFlow Serving's Regress signature: string `examples` -> float `predictions`."""
    _serving_input("Regression", examples)
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    inp = build_tensor_info(examples)
    if inp.dtype != types_pb2.DT_STRING:
        raise ValueError("Regression input tensors must be of type string. Found tensors "
                         f"with type {inp.dtype}.")
    out = build_tensor_info(predictions)
    if out.dtype != types_pb2.DT_FLOAT:
        raise ValueError("Regression output tensors must be of type float. Found tensors "
                         f"with type {out.dtype}.")
    return build_signature_def({_K["REGRESS_INPUTS"]: inp},
                               {_K["REGRESS_OUTPUTS"]: out}, _K["REGRESS_METHOD_NAME"])


@tf_export(v1=["saved_model.classification_signature_def",
               "saved_model.signature_def_utils.classification_signature_def"])
def classification_signature_def(examples, classes, scores):
    """TensorFlow Serving's Classify signature: string `examples` -> string `classes` and/or
    float `scores`."""
    _serving_input("Classification", examples)
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    inp = build_tensor_info(examples)
    if inp.dtype != types_pb2.DT_STRING:
        raise ValueError("Classification input tensors must be of type string. Found tensors "
                         f"of type {inp.dtype}")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != types_pb2.DT_STRING:
            raise ValueError("Classification classes must be of type string Tensor. Found "
                             f"tensors of type {info.dtype}.`")
        outputs[_K["CLASSIFY_OUTPUT_CLASSES"]] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != types_pb2.DT_FLOAT:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[_K["CLASSIFY_OUTPUT_SCORES"]] = info
    return build_signature_def({_K["CLASSIFY_INPUTS"]: inp}, outputs,
                               _K["CLASSIFY_METHOD_NAME"])


def _valid_predict(sd) -> bool:
    return bool(sd.method_name == _K["PREDICT_METHOD_NAME"] and sd.inputs and sd.outputs)


def _valid_regression(sd) -> bool:
    return (sd.method_name == _K["REGRESS_METHOD_NAME"]
            and set(sd.inputs) == {_K["REGRESS_INPUTS"]}
            and sd.inputs[_K["REGRESS_INPUTS"]].dtype == types_pb2.DT_STRING
            and set(sd.outputs) == {_K["REGRESS_OUTPUTS"]}
            and sd.outputs[_K["REGRESS_OUTPUTS"]].dtype == types_pb2.DT_FLOAT)


def _valid_classification(sd) -> bool:
    outs = set(sd.outputs)
    classes, scores = _K["CLASSIFY_OUTPUT_CLASSES"], _K["CLASSIFY_OUTPUT_SCORES"]
    return (sd.method_name == _K["CLASSIFY_METHOD_NAME"]
            and set(sd.inputs) == {_K["CLASSIFY_INPUTS"]}
            and sd.inputs[_K["CLASSIFY_INPUTS"]].dtype == types_pb2.DT_STRING
            and bool(outs) and not outs - {classes, scores}
            and (classes not in outs or sd.outputs[classes].dtype == types_pb2.DT_STRING)
            and (scores not in outs or sd.outputs[scores].dtype == types_pb2.DT_FLOAT))


@tf_export(v1=["saved_model.is_valid_signature",
               "saved_model.signature_def_utils.is_valid_signature"])
def is_valid_signature(signature_def) -> bool:
    """Whether TensorFlow Serving can serve the SignatureDef (classify, regress or predict)."""
    if signature_def is None:
        return False
    return (_valid_classification(signature_def) or _valid_regression(signature_def)
            or _valid_predict(signature_def))


def _prepend_name_scope(name: str, import_scope) -> str:
    if not import_scope:
        return name
    scope = import_scope[:-1] if import_scope.endswith("/") else import_scope
    return re.sub(r"([\^]|loc:@|^)(.*)", r"\1" + scope + r"/\2", name)


@tf_export(v1=["saved_model.get_tensor_from_tensor_info",
               "saved_model.utils.get_tensor_from_tensor_info"])
def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The tensor (SparseTensor, composite) of `graph` (default graph) a TensorInfo names."""
    graph = graph or context.get_default_graph()

    def tensor(name):
        return graph.get_tensor_by_name(_prepend_name_scope(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor(tensor_info.name)
    if encoding == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(tensor(coo.indices_tensor_name), tensor(coo.values_tensor_name),
                            tensor(coo.dense_shape_tensor_name))
    if encoding == "composite_tensor":
        spec = decode(struct_pb2.StructuredValue(
            type_spec_value=tensor_info.composite_tensor.type_spec))
        components = [tensor(c.name) for c in tensor_info.composite_tensor.components]
        return nest.pack_sequence_as(spec, components, expand_composites=True)
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}. Expected `coo_sparse`, "
                     "`composite_tensor`, or `name` for a dense tensor.")


@tf_export(v1=["saved_model.main_op_with_restore"])
def main_op_with_restore(restore_op_name):
    """A NoOp running the restore op after initializing the global and local variables and
    the tables (TF's main_op)."""
    main_op = group(global_variables_initializer(), local_variables_initializer(),
                    tables_initializer())
    graph = context.get_default_graph()
    with graph.control_dependencies([main_op]):
        return group(restore_op_name)


@tf_export(v1=["saved_model.signature_def_utils.MethodNameUpdater"])
class MethodNameUpdater:
    """Replaces signatures' method names in the SavedModel at `export_dir`, then `save()`s
    it (in its own format, text or binary) there or to a new directory."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        self._saved_model = read_saved_model(self._export_dir)

    def replace_method_name(self, signature_key, method_name, tags=None):
        """Sets `method_name` on signature `signature_key` of every MetaGraph (`tags` None)
        or of the one tagged `tags`."""
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, list):
            tags = [tags]
        found = False
        for mg in self._saved_model.meta_graphs:
            if tags is None or set(tags) == set(mg.meta_info_def.tags):
                if signature_key not in mg.signature_def:
                    raise ValueError(
                        f"MetaGraphDef associated with tags {tags} does not have a "
                        f"signature_def with key: '{signature_key}'. This means either you "
                        "specified the wrong signature key or forgot to put the signature_def"
                        " with the corresponding key in your SavedModel.")
                mg.signature_def[signature_key].method_name = method_name
                found = True
        if not found:
            raise ValueError(
                f"MetaGraphDef associated with tags {tags} could not be found in SavedModel. "
                "This means either you specified invalid tags or your SavedModel does not "
                "have a MetaGraphDef with the specified tags.")

    def save(self, new_export_dir=None):
        """Writes the updated saved_model.pb (or .pbtxt when the input was text)."""
        is_text = os.path.isfile(os.path.join(self._export_dir,
                                              constants.SAVED_MODEL_FILENAME_PBTXT))
        target = os.fspath(new_export_dir) if new_export_dir else self._export_dir
        if is_text:
            path = os.path.join(target, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(target, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        atomic_write(path, data)
        logging.info(f"SavedModel written to: {path}")
