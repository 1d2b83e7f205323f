"""`tf.saved_model.load` and `contains_saved_model`: TF2 SavedModels (with an object graph)
are rebuilt as objects (loading.py); TF1 SavedModels load into a private Session graph
(loader_v1.py) and come back, as in TensorFlow, as an object whose `signatures` run it."""

from __future__ import annotations

import os

from ndflow.core.api_export import tf_export
from ndflow.core.graph import Graph
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.module import Module
from ndflow.runtime.session import Session
from ndflow.saved_model import constants
from ndflow.saved_model.loader_v1 import load_into_session
from ndflow.saved_model.loading import Loaded, _Loader, _meta_graph, read_saved_model
from ndflow.saved_model.signature_map import LoadedSignatureMap


class _SessionSignature:
    """A TF1 signature run in the loaded graph's Session: keyword inputs, dict outputs."""

    def __init__(self, session, signature_def, key: str):
        self._session = session
        self._inputs = {k: v.name for k, v in signature_def.inputs.items()}
        self._outputs = {k: v.name for k, v in signature_def.outputs.items()}
        self.name = key

    def __call__(self, *args, **kwargs):
        keys = sorted(self._inputs)
        if len(args) > len(keys):
            raise TypeError(f"Signature {self.name} takes {len(keys)} arguments, got "
                            f"{len(args)}")
        kwargs.update(zip(keys, args))
        missing = sorted(set(keys) - set(kwargs))
        extra = sorted(set(kwargs) - set(keys))
        if missing or extra:
            raise TypeError(f"Signature {self.name} takes arguments {keys}; missing "
                            f"{missing}, unexpected {extra}")
        feed = {self._inputs[k]: (v.numpy() if isinstance(v, Tensor) else v)
                for k, v in kwargs.items()}
        values = self._session.run(self._outputs, feed)
        return {k: convert_to_tensor(v) for k, v in values.items()}


class _V1Loaded(Module):
    """A TF1 SavedModel loaded by `tf.saved_model.load`: `signatures`, `graph`."""

    def __init__(self, session, meta_graph):
        super().__init__(name="loaded_v1")
        self.graph = session.graph
        self._session = session
        self.signatures = {k: _SessionSignature(session, sd, k)
                           for k, sd in meta_graph.signature_def.items()
                           if not k.startswith("__")}


def _load_tf1(export_dir: str, tags):
    session = Session(graph=Graph())
    mg = load_into_session(session, tags, export_dir)
    return _V1Loaded(session, mg)


@tf_export("saved_model.load", v1=["saved_model.load_v2"])
def load(export_dir, tags=None, options=None):
    """Loads the SavedModel at `export_dir`: an object with its saved attributes, variables,
    functions and `signatures`."""
    export_dir = os.fspath(export_dir)
    sm = read_saved_model(export_dir)
    mg = _meta_graph(sm, tags, export_dir)
    if not len(mg.object_graph_def.nodes):
        return _load_tf1(export_dir, list(mg.meta_info_def.tags))
    root = _Loader(mg, export_dir, options).load()
    if isinstance(root, Loaded):
        if "signatures" not in root.__dict__:
            root.__dict__["signatures"] = LoadedSignatureMap()
        root.__dict__["tensorflow_version"] = mg.meta_info_def.tensorflow_version
        root.__dict__["tensorflow_git_version"] = mg.meta_info_def.tensorflow_git_version
    return root


@tf_export("saved_model.contains_saved_model", v1=["saved_model.contains_saved_model",
                                                   "saved_model.maybe_saved_model_directory"])
def contains_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    export_dir = os.fspath(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PB,
                            constants.SAVED_MODEL_FILENAME_PBTXT))
