"""`tf.saved_model.load`: a SavedModel (written by TensorFlow or ndflow) back as objects.

The SavedObjectGraph is rebuilt node by node: user objects become `Loaded` modules with the
saved attributes, list/dict/tuple wrappers plain containers, variables `tf.Variable`s holding
the values of `variables/variables` (matched through the checkpoint's own object graph),
functions callables over the graphs rebuilt from the FunctionDef library (function-call
nodes inlined first), and the root's `signatures` a dict of signature functions.
Resources (tf.lookup tables) are made first by calling their saved `_create_resource` and
`_initialize` functions (their checkpointed state restored through their restore function),
since the other functions capture their handles; `captured_tensor` nodes (tensors a saved
custom gradient takes from its forward function) are bound when that gradient runs
(custom_gradients.py). An op ndflow lacks is TensorFlow's NotFoundError ("Op type not
registered 'X'") naming the function (and the resource node, for a resource's creator); an
unreadable or corrupted saved_model.pb an error naming the file.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import function_pb2

from ndflow.core import errors
from ndflow.core.graph_def import dtype_from_enum, shape_from_proto, tensor_proto_to_ndarray
from ndflow.core.protos.saved_model_pb import SavedModel
from ndflow.core.tensor import Tensor
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.function_library import FunctionLibrary
from ndflow.ops.module import Module
from ndflow.ops.variables import Variable
from ndflow.saved_model import constants
from ndflow.saved_model.asset import Asset
from ndflow.saved_model.call_inlining import Inliner
from ndflow.saved_model.custom_gradients import CustomGradients
from ndflow.saved_model.nested_structure_coder import decode
from ndflow.saved_model.restored_functions import (
    RestoredConcreteFunction,
    RestoredFunction,
    SignatureFunction,
)
from ndflow.saved_model.restored_resources import CapturedTensor, RestoredResource
from ndflow.saved_model.signature_map import LoadedSignatureMap
from ndflow.saved_model.variables_io import VariablesReader


class Loaded(Module):
    """A user object of a loaded SavedModel (TensorFlow's `_UserObject`)."""

    def __init__(self):
        super().__init__(name="loaded")

    # Saved attributes named like tf.Module's properties (a Keras export's `variables`
    # list) are what TensorFlow's loaded object returns.
    @property
    def variables(self):
        return self.__dict__["variables"] if "variables" in self.__dict__ else \
            Module.variables.fget(self)

    @property
    def trainable_variables(self):
        return self.__dict__["trainable_variables"] if "trainable_variables" in \
            self.__dict__ else Module.trainable_variables.fget(self)

    @property
    def non_trainable_variables(self):
        return self.__dict__["non_trainable_variables"] if "non_trainable_variables" in \
            self.__dict__ else Module.non_trainable_variables.fget(self)

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError(f"'{type(self).__name__}' object is not callable")
        return fn(*args, **kwargs)


def _path(export_dir: str, name: str) -> str:
    return os.path.join(export_dir, name)


def read_saved_model(export_dir: str) -> SavedModel:
    """The SavedModel proto of `export_dir/saved_model.pb` (or `.pbtxt`)."""
    pb = _path(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    pbtxt = _path(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    sm = SavedModel()
    if os.path.isfile(pb):
        try:
            with open(pb, "rb") as f:
                data = f.read()
        except OSError as e:
            raise errors.PermissionDeniedError(None, None, f"{pb}; {e.strerror}") from None
        try:
            sm.ParseFromString(data)
        except (DecodeError, ValueError, RuntimeError):
            raise errors.DataLossError(None, None, f"Could not parse SavedModel file {pb}: it "
                                       "is truncated or corrupted") from None
        return sm
    if os.path.isfile(pbtxt):
        from_text(pbtxt, sm)
        return sm
    raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}"
                  f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                  f"{constants.SAVED_MODEL_FILENAME_PB}}}")


def from_text(path: str, sm) -> None:
    try:
        with open(path, encoding="utf-8") as f:
            text_format.Parse(f.read(), sm)
    except (text_format.ParseError, UnicodeDecodeError):
        raise errors.DataLossError(None, None, f"Could not parse SavedModel file {path}") \
            from None


def _meta_graph(sm, tags, export_dir: str):
    if not sm.meta_graphs:
        raise errors.DataLossError(None, None, f"SavedModel at {export_dir} has no MetaGraphs")
    if tags is None:
        return sm.meta_graphs[0]
    wanted = {tags} if isinstance(tags, str) else set(tags)
    for mg in sm.meta_graphs:
        if set(mg.meta_info_def.tags) == wanted:
            return mg
    available = [list(mg.meta_info_def.tags) for mg in sm.meta_graphs]
    raise ValueError(f"Got an incompatible argument to `tags`: {sorted(wanted)}. The SavedModel "
                     f"at {export_dir} has one MetaGraph with tags {available}. You may omit "
                     "the argument, pass 'None', or pass matching tags.")


class _Loader:
    def __init__(self, mg, export_dir: str, options):
        self.proto = mg.object_graph_def
        self.export_dir = export_dir
        self.options = options
        defs = {fd.signature.name: fd for fd in mg.graph_def.library.function}
        _suffix_shared_names(defs.values(), f"_load_{next(_LOADS)}")
        self.custom_gradients = CustomGradients(self, mg.graph_def.library, defs)
        self.inliner = Inliner(defs)
        self._function_names = list(defs)
        self.nodes: list = [None] * len(self.proto.nodes)
        self._graph_nodes = {n.name: n for n in mg.graph_def.node}
        self.asset_files = list(mg.asset_file_def)
        self._concrete: dict = {}
        self._library = None
        self._check_references()
        self._paths = _node_paths(self.proto)
        self._saved_attributes = None   # (reader, {node id: {attribute: key}}) once read

    def _check_references(self) -> None:
        """Every node id the object graph mentions exists (a damaged file is an error
        naming it, not an IndexError later)."""
        n = len(self.proto.nodes)
        bad = [ref.node_id for p in self.proto.nodes for ref in p.children
               if not 0 <= ref.node_id < n]
        bad += [i for cf in self.proto.concrete_functions.values() for i in cf.bound_inputs
                if not 0 <= i < n]
        if bad:
            raise ValueError(f"The object graph of the SavedModel at {self.export_dir} refers "
                             f"to node {bad[0]}, but it has {n} nodes (saved_model.pb is "
                             "damaged)")

    # -- functions -----------------------------------------------------------------------------
    def _function_graph(self, name: str):
        """The function graph of FunctionDef `name`, its calls inlined."""
        try:
            fd = self.inliner.get(name)
            if fd is None:
                raise ValueError(f"Function '{name}' is not in the SavedModel's function "
                                 "library")
            if self._library is None:  # every function, its calls inlined
                lib = function_pb2.FunctionDefLibrary()
                lib.function.extend(self._inlined_or_original(n)
                                    for n in self._function_names)
                self._library = FunctionLibrary(lib)
            graph = self._library.get(name, "f", name)
            self.custom_gradients.bind(fd, graph)
            return graph
        except errors.NotFoundError as e:
            raise errors.NotFoundError(None, None, f"{e.message} (in function '{name}' of the "
                                       f"SavedModel at {self.export_dir})") from None
        except ValueError as e:
            raise ValueError(f"Cannot load function '{name}' of the SavedModel at "
                             f"{self.export_dir}: {e}") from None

    def _inlined_or_original(self, name: str):
        """A function with its calls inlined; as written when that fails (an error then
        surfaces only if something runs it)."""
        try:
            return self.inliner.get(name)
        except ValueError:
            return self.inliner._defs[name]

    def concrete(self, name: str) -> RestoredConcreteFunction:
        cf = self._concrete.get(name)
        if cf is None:
            info = self.proto.concrete_functions[name] \
                if name in self.proto.concrete_functions else None
            captures = []
            in_sig, out_sig = ((), {}), None
            if info is not None:
                for node_id in info.bound_inputs:
                    obj = self.nodes[node_id]
                    if isinstance(obj, Asset):
                        obj = obj.asset_path
                    elif isinstance(obj, RestoredResource):
                        obj = obj.resource_handle
                    elif isinstance(obj, CapturedTensor):
                        raise obj.unavailable(name)
                    if not isinstance(obj, (Variable, Tensor)):
                        raise ValueError(f"Function '{name}' captures node {node_id}, which "
                                         "is not a variable or a constant (unsupported by "
                                         "ndflow)")
                    captures.append(obj)
                in_sig = decode(info.canonicalized_input_signature)
                out_sig = decode(info.output_signature)
            cf = RestoredConcreteFunction(name, self._function_graph(name), captures,
                                          in_sig, out_sig)
            self._concrete[name] = cf
        return cf

    # -- objects -------------------------------------------------------------------------------
    def load(self):
        values = self._restore_values()
        for i, p in enumerate(self.proto.nodes):
            kind = p.WhichOneof("kind")
            if kind == "variable":
                self.nodes[i] = self._variable(i, p.variable, values)
            elif kind == "constant":
                self.nodes[i] = self._constant(p.constant.operation)
            elif kind == "asset":
                self.nodes[i] = self._asset(p.asset.asset_file_def_index)
            elif kind == "resource":
                self.nodes[i] = RestoredResource(self._paths[i], i, p.resource.device,
                                                 list(p.saveable_objects))
            elif kind == "captured_tensor":
                c = p.captured_tensor
                self.nodes[i] = CapturedTensor(c.name, c.concrete_function, i)
            elif kind == "user_object" or kind is None:
                ident = p.user_object.identifier
                self.nodes[i] = ([] if ident == "trackable_list_wrapper" else
                                 {} if ident == "trackable_dict_wrapper" else
                                 [] if ident == "trackable_tuple_wrapper" else
                                 LoadedSignatureMap() if ident == "signature_map" else
                                 Loaded())
        # resources first: the functions using a resource capture the handle its saved
        # creator makes (TF's order too: a resource's creator captures nothing)
        for i, p in enumerate(self.proto.nodes):
            if p.WhichOneof("kind") == "resource":
                self._create_resource(i, p)
        for i, p in enumerate(self.proto.nodes):
            kind = p.WhichOneof("kind")
            if kind == "function" and self.nodes[i] is None:
                self.nodes[i] = self._function(i, p.function)
            elif kind == "bare_concrete_function":
                self.nodes[i] = self._bare_concrete(i, p.bare_concrete_function)
        # children first (breadth-first ids: mostly higher), so tuples are complete when
        # their parents take them
        for i in reversed(range(len(self.proto.nodes))):
            self._attach(i, self.proto.nodes[i])
        return self.nodes[0]

    def _bare_concrete(self, i: int, b):
        try:
            cf = self.concrete(b.concrete_function_name)
        except ValueError as e:
            if not any(isinstance(n, CapturedTensor) for n in self.nodes):
                raise
            return _Unavailable(b.concrete_function_name, str(e))
        return SignatureFunction(cf, list(b.argument_keywords), b.allowed_positional_arguments)

    def _create_resource(self, i: int, p) -> None:
        """Builds the resource's saved functions and runs its creator and initializer."""
        fns = {}
        for ref in p.children:
            child = self.proto.nodes[ref.node_id]
            if ref.local_name in ("_create_resource", "_initialize") and \
                    child.WhichOneof("kind") == "function":
                if ref.local_name == "_create_resource":
                    try:
                        self.nodes[ref.node_id] = self._function(ref.node_id, child.function)
                    except errors.NotFoundError as e:
                        raise errors.NotFoundError(
                            None, None, f"Cannot load SavedModel node {i} ('{self._paths[i]}')"
                            f", a resource (e.g. a tf.lookup table): {e.message}") from None
                fns[ref.local_name] = ref.node_id
        creator = self.nodes[fns["_create_resource"]] if "_create_resource" in fns else None
        self.nodes[i].create(creator, None)
        init_id = fns.get("_initialize")
        if init_id is not None:  # captures the handle just made
            init = self._function(init_id, self.proto.nodes[init_id].function)
            self.nodes[init_id] = init
            init()
        self._restore_saveables(i, p)

    def _asset(self, index: int) -> Asset:
        if not 0 <= index < len(self.asset_files):
            raise ValueError(f"SavedModel asset {index} is not in the asset_file_def of "
                             f"{self.export_dir}")
        return Asset(os.path.join(self.export_dir, constants.ASSETS_DIRECTORY,
                                  self.asset_files[index].filename))

    def _constant(self, operation: str):
        node = self._graph_nodes.get(operation)
        if node is None or node.op != "Const":
            raise ValueError(f"SavedModel constant '{operation}' is not a Const node of the "
                             f"graph in {self.export_dir}")
        value, dtype = tensor_proto_to_ndarray(node.attr["value"].tensor)
        return convert_to_tensor(value, dtype)

    def _restore_values(self) -> dict:
        has_state = any(p.WhichOneof("kind") == "variable" or p.saveable_objects
                        for p in self.proto.nodes)
        if not has_state or getattr(self.options, "experimental_skip_checkpoint", False):
            return {}
        prefix = os.path.join(self.export_dir, constants.VARIABLES_DIRECTORY,
                              constants.VARIABLES_FILENAME)
        reader = VariablesReader(prefix)
        self._saved_attributes = (reader, reader.attribute_keys(self.proto.nodes))
        keys = reader.variable_keys(self.proto.nodes)
        return {i: (reader, k) for i, k in keys.items()}

    def _restore_saveables(self, i: int, p) -> None:
        """A resource's checkpointed state (a mutable table's keys and values): its saved
        restore function called on the tensors of its checkpoint attributes."""
        if self._saved_attributes is None:
            return
        reader, attributes = self._saved_attributes
        attrs = attributes.get(i, {})
        for name, saveable in p.saveable_objects.items():
            keys = reader.saveable_keys(attrs[name]) if name in attrs else []
            if not keys:
                continue
            fn = self.proto.nodes[saveable.restore_function]
            cf = self.concrete(fn.bare_concrete_function.concrete_function_name)
            tensors = [convert_to_tensor(reader.read(k), spec.dtype)
                       for k, spec in zip(keys, cf._flat_specs)]
            cf.call_flat(tensors)

    def _variable(self, i: int, v, values: dict) -> Variable:
        dtype = dtype_from_enum(v.dtype)
        entry = values.get(i)
        if entry is None:
            if getattr(self.options, "allow_partial_checkpoint", False) or not values:
                shape = shape_from_proto(v.shape)
                value = _zeros(dtype, shape)
            else:
                raise errors.NotFoundError(None, None, f"Variable '{v.name}' (SavedModel node "
                                           f"{i}) has no value in the checkpoint of "
                                           f"{self.export_dir}")
        else:
            reader, key = entry
            value = reader.read(key)
        return Variable(value, trainable=v.trainable, name=v.name or None, dtype=dtype)

    def _function(self, i: int, f) -> RestoredFunction:
        spec = decode(f.function_spec.fullargspec) if f.function_spec.HasField(
            "fullargspec") else None
        args = list(getattr(spec, "args", None) or [])
        signature = decode(f.function_spec.input_signature) \
            if f.function_spec.HasField("input_signature") else None
        concrete = [self.concrete(n) for n in f.concrete_functions]
        defaults = tuple(getattr(spec, "defaults", None) or ())
        return RestoredFunction(_local_name(self.proto, i), concrete, args, signature, defaults)

    def _attach(self, i: int, p) -> None:
        obj = self.nodes[i]
        for ref in p.children:
            child = self.nodes[ref.node_id]
            if self.proto.nodes[ref.node_id].user_object.identifier == \
                    "trackable_tuple_wrapper":
                child = tuple(child)
            if isinstance(obj, list):
                obj.append(child)
            elif isinstance(obj, dict):
                obj[ref.local_name] = child
            elif isinstance(obj, Loaded):
                obj.__dict__[ref.local_name] = child
            elif isinstance(obj, RestoredResource):
                obj.functions[ref.local_name] = child


_LOADS = itertools.count()
# Ops whose `shared_name` names a resource in the runtime: made unique per load (as
# TensorFlow's loader does), so two loaded models never share a table
_SHARED_RESOURCE_OPS = frozenset({"HashTableV2", "MutableHashTableV2",
                                  "MutableHashTableOfTensorsV2", "MutableDenseHashTableV2"})


def _suffix_shared_names(function_defs, suffix: str) -> None:
    for fd in function_defs:
        for node in fd.node_def:
            if node.op in _SHARED_RESOURCE_OPS and node.attr["shared_name"].s:
                node.attr["shared_name"].s += suffix.encode()


class _Unavailable:
    """A saved concrete function ndflow cannot call (it captures a custom gradient's
    tensor): calling it raises the reason."""

    def __init__(self, name: str, reason: str):
        self.name = name
        self._reason = reason

    def __call__(self, *args, **kwargs):
        raise ValueError(self._reason)


def _node_paths(proto) -> list:
    """'root.a.b' for each node (breadth-first from the root), for error messages."""
    paths = [""] * len(proto.nodes)
    if not proto.nodes:
        return paths
    paths[0] = "root"
    queue = [0]
    while queue:
        i = queue.pop(0)
        for ref in proto.nodes[i].children:
            j = ref.node_id
            if 0 <= j < len(paths) and not paths[j]:
                paths[j] = f"{paths[i]}.{ref.local_name}"
                queue.append(j)
    return [p or f"node {i}" for i, p in enumerate(paths)]


def _local_name(proto, node_id: int) -> str:
    for p in proto.nodes:
        for ref in p.children:
            if ref.node_id == node_id:
                return ref.local_name
    return f"function_{node_id}"


def _zeros(dtype, shape):
    dims = [d or 0 for d in (shape.as_list() if shape.rank is not None else [])]
    return np.zeros(dims, dtype=dtype.np_dtype or np.float32)
