"""`tf.saved_model.save`: a `tf.Module` (or Keras model) in TensorFlow's SavedModel layout.

    export_dir/saved_model.pb      SavedModel: one MetaGraphDef tagged "serve" (graph_def with
                                   the traced functions as its FunctionDef library, signature
                                   defs, the SavedObjectGraph, a graph-level saver)
    export_dir/variables/variables.{index,data-00000-of-00001}
                                   the variables as an object-graph TensorBundle checkpoint
    export_dir/assets/             the files of `tf.saved_model.Asset`s
    export_dir/fingerprint.pb      TensorFlow's fingerprint of the files (fingerprinting.py)

Everything is written into a temporary directory beside `export_dir`, which then replaces
it (directory_swap.py), so a failed or killed save leaves any previous SavedModel whole.
"""

from __future__ import annotations

import errno
import inspect
import os
import shutil
import uuid

from tensorboard.compat.proto import (
    graph_pb2,
    meta_graph_pb2,
    saved_object_graph_pb2,
    trackable_object_graph_pb2,
)

from ndflow.checkpoint import object_graph as ckpt_graph
from ndflow.checkpoint.saveables import serialize as serialize_saveables
from ndflow.core import context, dtypes, errors
from ndflow.core.api_export import tf_export
from ndflow.core.graph_def import GRAPH_DEF_VERSION, attr_to_proto, shape_to_proto
from ndflow.core.nest import flatten, pack_sequence_as
from ndflow.core.protos.saved_model_pb import SavedModel
from ndflow.core.save_context import save_context
from ndflow.core.tensor_spec import TensorSpec
from ndflow.ops.variables import Variable
from ndflow.runtime.concrete_function import ConcreteFunction
from ndflow.runtime.function import Function
from ndflow.saved_model import constants
from ndflow.saved_model import signatures as sigs
from ndflow.saved_model.asset import Asset, asset_file_names
from ndflow.saved_model.directory_swap import replace_tree
from ndflow.saved_model.fingerprinting import create_fingerprint_def
from ndflow.saved_model.function_serialization import (
    concrete_function_def,
    signature_wrapper_def,
    unique_name,
)
from ndflow.saved_model.gradient_saving import save_gradient_functions, strip_unsaved_gradient_types
from ndflow.saved_model.nested_structure_coder import encode
from ndflow.saved_model.object_graph import Container, ObjectGraph, children
from ndflow.saved_model.options import VariablePolicy
from ndflow.saved_model.restored_functions import RestoredFunction
from ndflow.saved_model.saver_graph import add_saver
from ndflow.saved_model.table_resources import saveable_functions, saves_as_resource
from ndflow.saved_model.variables_io import write_variables


class _SignatureMap:
    """The root's `signatures` child: one bare concrete function per signature key."""

    def __init__(self, wrappers: dict):
        self.wrappers = wrappers

    def _saved_model_children(self) -> list:
        return list(self.wrappers.items())


class _SignatureWrapper:
    def __init__(self, key, cf, name):
        self.key, self.cf, self.name = key, cf, name


def _fullargspec(fn: Function):
    python_function = fn.python_function
    spec = inspect.getfullargspec(python_function)
    args = list(spec.args)
    if inspect.ismethod(python_function) and args:
        args = args[1:]  # TF records a method's arguments without `self`
    defaults = spec.defaults
    try:
        encode(defaults)
    except ValueError:
        defaults = None
    return inspect.FullArgSpec(args, spec.varargs, spec.varkw, defaults, list(spec.kwonlyargs),
                               None, {})


def _function_spec(proto, fn: Function | None, kwargs_only: list | None = None) -> None:
    if fn is not None:
        argspec = _fullargspec(fn)
        signature = None if fn.input_signature is None else tuple(fn.input_signature)
    else:
        argspec = inspect.FullArgSpec([], None, None, None, list(kwargs_only or []), None, {})
        signature = None
    proto.fullargspec.CopyFrom(encode(argspec))
    proto.input_signature.CopyFrom(encode(signature))


def _input_signature(cf: ConcreteFunction, fn: Function | None):
    if fn is not None and fn.input_signature is not None:
        specs = flatten(fn.input_signature)
        named = [TensorSpec(s.shape, s.dtype, s.name or ph.op.name)
                 for s, ph in zip(specs, cf.graph.arg_inputs)]
        packed = pack_sequence_as(tuple(fn.input_signature), named)
        return _with_composite_specs(tuple(fn.input_signature), packed), {}
    return cf.structured_input_signature


def _with_composite_specs(given, packed):
    """`packed` with the signature's own composite specs: one rebuilt from its components'
    specs would lose its dense shape (SparseTensorSpec([None, 4]) -> [None, None])."""
    if isinstance(given, TensorSpec):
        return packed
    if isinstance(given, dict):
        return {k: _with_composite_specs(given[k], packed[k]) for k in given}
    if isinstance(given, (list, tuple)):
        items = [_with_composite_specs(g, p) for g, p in zip(given, packed)]
        return type(given)(*items) if hasattr(given, "_fields") else type(given)(items)
    return given


def _output_signature(cf: ConcreteFunction):
    def spec(slot):
        if slot.index is None:
            return slot.value if slot.value is None or isinstance(
                slot.value, (bool, int, float, str)) else None
        t = cf.graph.outputs[slot.index]
        return TensorSpec(t.shape, t.dtype, "output")
    return pack_sequence_as(cf._structure, [spec(s) for s in flatten(cf._structure)])


class _Builder:
    def __init__(self, obj, signatures):
        if not ckpt_graph.is_trackable(obj) or isinstance(obj, Variable):
            raise ValueError(f"Expected an object of type `Trackable`, such as `tf.Module` or "
                             f"a subclass of the `Trackable` class, for export. Got {obj!r} "
                             f"with type {type(obj)}.")
        self.counter = 0
        sig_fns = sigs.canonical_signatures(signatures, obj, children(obj))
        wrappers = {k: _SignatureWrapper(k, cf, self._name("signature_wrapper"))
                    for k, cf in sig_fns.items()}
        self.signature_map = _SignatureMap(wrappers)
        self.graph = ObjectGraph(obj, [("signatures", self.signature_map)])
        # a mutable table's node id -> (save_fn node, restore_fn node): its contents
        self.saveables: dict = {}
        for i, node in enumerate(list(self.graph.nodes)):
            fns = saveable_functions(node)
            if fns is not None:
                self.saveables[i] = tuple(self.graph.add_detached(
                    fn, self.graph.paths[i] + (f"_{fn.name}",)) for fn in fns)
        self.library: dict = {}          # FunctionDef name -> FunctionDef
        self.concrete: dict = {}         # FunctionDef name -> ConcreteFunction
        self.registered_gradients: list = []   # RegisteredGradient entries
        self.function_names: dict = {}   # id(ConcreteFunction) -> FunctionDef name
        self.bound: dict = {}            # FunctionDef name -> [node ids]
        self.proto = saved_object_graph_pb2.SavedObjectGraph()
        self.assets = [n for n in self.graph.nodes if isinstance(n, Asset)]

    def _name(self, base: str) -> str:
        self.counter += 1
        return f"__inference_{base}_{self.counter}"

    def _variable_for(self, handle):
        for i, node in enumerate(self.graph.nodes):
            if isinstance(node, Variable) and node.handle is handle:
                return i, node
        raise AssertionError(
            "Tried to export a function which references an 'untracked' resource. TensorFlow "
            "objects (e.g. tf.Variable) captured by functions must be 'tracked' by assigning "
            "them to an attribute of a tracked object or assigned to an attribute of the main "
            "object directly.")

    def add_concrete(self, cf: ConcreteFunction, fn: Function | None,
                     input_signature=None, captured=None, name=None) -> str:
        """Adds `cf` to the library (named `name`, or a new name); `captured(tensor)` (a saved
        gradient's) may bind a captured tensor first: (node id, object) or None."""
        if id(cf) in self.function_names:
            return self.function_names[id(cf)]
        name = name or self._name(cf.name)
        ids = {}

        def owner_of(tensor):
            found = captured(tensor) if captured is not None else None
            if found is not None:
                ids[id(found[1])] = found[0]
                return found[1]
            if tensor.dtype is dtypes.resource:
                for i, node in enumerate(self.graph.nodes):   # a loaded table's handle
                    if saves_as_resource(node) and node.resource_handle is tensor:
                        ids[id(node)] = i
                        return node
                i, var = self._variable_for(tensor)
                ids[id(var)] = i
                return var
            for i, node in enumerate(self.graph.nodes):
                if isinstance(node, Asset) and node.asset_path is tensor:
                    ids[id(node)] = i
                    return node
            return None

        fd, bound, nested = concrete_function_def(cf, name, owner_of)
        self.library[name] = fd
        self.concrete[name] = cf
        for nfd in nested:
            self.library.setdefault(nfd.signature.name, nfd)
        self.function_names[id(cf)] = name
        self.bound[name] = [ids[id(v)] for v in bound]
        entry = self.proto.concrete_functions[name]
        entry.bound_inputs.extend(self.bound[name])
        entry.canonicalized_input_signature.CopyFrom(encode(
            input_signature if input_signature is not None else _input_signature(cf, fn)))
        entry.output_signature.CopyFrom(encode(_output_signature(cf)))
        return name

    def add_wrapper(self, w: _SignatureWrapper) -> list:
        callee_name = self.add_concrete(w.cf, None)
        callee = self.library[callee_name]
        keys = sigs.input_keys(w.cf)
        arg_order = sorted(range(len(keys)), key=lambda i: keys[i])
        outs = sigs.output_map(w.cf)
        out_keys = sorted(outs)
        self.library[w.name] = signature_wrapper_def(w.name, callee, arg_order,
                                                     [outs[k] for k in out_keys])
        entry = self.proto.concrete_functions[w.name]
        entry.bound_inputs.extend(self.bound[callee_name])
        in_specs = {keys[i]: TensorSpec(w.cf.graph.arg_inputs[i].shape,
                                        w.cf.graph.arg_inputs[i].dtype, keys[i])
                    for i in range(len(keys))}
        entry.canonicalized_input_signature.CopyFrom(encode(((), in_specs)))
        entry.output_signature.CopyFrom(encode(
            {k: sigs.output_spec(w.cf, outs[k], k) for k in out_keys}))
        return sorted(keys)

    def build_nodes(self) -> None:
        for i, node in enumerate(self.graph.nodes):
            p = self.proto.nodes.add()
            for name, j in self.graph.edges[i]:
                p.children.add(node_id=j, local_name=name)
            if isinstance(node, Variable):
                v = p.variable
                v.dtype = node.dtype.enum
                v.shape.CopyFrom(shape_to_proto(node.shape))
                v.trainable = node.trainable
                v.name = node.name[:-2] if node.name.endswith(":0") else node.name
                if getattr(self, "save_variable_devices", False):  # VariablePolicy
                    v.device = node.device
            elif isinstance(node, Function):
                p.function.SetInParent()
                p.function.concrete_functions.extend(
                    self.add_concrete(cf, node, signature)
                    for cf, signature in _concrete_functions_of(node))
                _function_spec(p.function.function_spec, node)
            elif isinstance(node, Asset):
                p.asset.asset_file_def_index = self.assets.index(node)
            elif saves_as_resource(node):   # its functions are its children
                p.resource.device = getattr(node, "device", "")
                if i in self.saveables:  # TF's name for a table's checkpointed contents
                    saveable = p.saveable_objects[ckpt_graph.saveable_name(node)]
                    saveable.save_function, saveable.restore_function = self.saveables[i]
            elif isinstance(node, RestoredFunction):  # a loaded object saved again
                p.function.SetInParent()
                p.function.concrete_functions.extend(
                    self.add_concrete(rcf.traced(), None, rcf.structured_input_signature)
                    for rcf in node.concrete_functions)
                spec = p.function.function_spec
                spec.fullargspec.CopyFrom(encode(inspect.FullArgSpec(
                    list(node._arg_names), None, None, None, [], None, {})))
                spec.input_signature.CopyFrom(encode(node.input_signature))
            elif isinstance(node, ConcreteFunction):
                b = p.bare_concrete_function
                b.concrete_function_name = self.add_concrete(node, None)
                b.argument_keywords.extend(ph.op.name for ph in node.graph.arg_inputs)
                b.allowed_positional_arguments = len(node.graph.arg_inputs)
                if any(i in fns for fns in self.saveables.values()):  # as TF writes them
                    b.function_spec.fullargspec.CopyFrom(encode(inspect.FullArgSpec(
                        list(b.argument_keywords), None, None, None, [], None, {})))
                    b.function_spec.input_signature.CopyFrom(encode(None))
            elif isinstance(node, _SignatureWrapper):
                b = p.bare_concrete_function
                b.concrete_function_name = node.name
                keys = self.add_wrapper(node)
                b.argument_keywords.extend(keys)
                b.allowed_positional_arguments = len(keys)
                _function_spec(b.function_spec, None, keys)
            else:
                identifier = ("signature_map" if isinstance(node, _SignatureMap) else
                              node.identifier if isinstance(node, Container) else
                              "_generic_user_object")
                p.user_object.identifier = identifier
                p.user_object.version.producer = 1
                p.user_object.version.min_consumer = 1


def _concrete_functions_of(fn: Function) -> list:
    """(ConcreteFunction, canonical input signature or None) per traced signature; a trace
    of Python arguments records their values, as TF's canonicalized signatures do."""
    if fn.input_signature is not None:
        return [(fn.get_concrete_function(), None)]
    out, seen = [], set()
    for key, bucket in fn._buckets.items():
        for cf in bucket:
            if id(cf) not in seen:
                seen.add(id(cf))
                out.append((cf, _signature_from_key(key, cf)))
    return out


def _signature_from_key(key, cf):
    specs = iter(TensorSpec(ph.shape, ph.dtype, ph.op.name) for ph in cf.graph.arg_inputs)

    def value(enc):
        if enc == "<tensor>":
            return next(specs)
        if isinstance(enc, tuple) and enc and enc[0] == "value":
            return enc[2]
        if isinstance(enc, tuple) and enc and enc[0] == "dict":
            return {k: value(v) for k, v in enc[1]}
        if isinstance(enc, tuple) and len(enc) == 2 and enc[0] in (list, tuple):
            return enc[0](value(v) for v in enc[1])
        return None  # variables and other objects: not encodable

    try:
        args = tuple(value(enc) for _, enc in key)
        encode(args)
    except (StopIteration, ValueError):
        return None
    return args, {}


def _graph_def(b: _Builder) -> tuple:
    """(GraphDef, signature defs, saver def). The GraphDef's nodes are for graph-level
    loaders (TF1's loader, `saved_model_cli run`, Serving), as TF writes them: a VarHandleOp
    per variable, the saver's nodes, a Placeholder per signature input and a
    StatefulPartitionedCall per signature; the functions are in its library."""
    gd = graph_pb2.GraphDef()
    gd.versions.producer = GRAPH_DEF_VERSION
    gd.versions.min_consumer = 12
    handle_node = {}
    used_names: set = {"saver_filename", "save"}

    def unique(name):
        return unique_name(name, used_names)

    for i, node in enumerate(b.graph.nodes):
        if isinstance(node, Variable):
            n = gd.node.add(name=unique("/".join(b.graph.paths[i]) or "variable"),
                            op="VarHandleOp")
            n.attr["dtype"].type = node.dtype.enum
            n.attr["shape"].shape.CopyFrom(shape_to_proto(node.shape))
            n.attr["shared_name"].s = n.name.encode()
            if getattr(b, "save_variable_devices", False):  # VariablePolicy
                n.device = node.device
            handle_node[i] = n.name
    asset_files, init_deps = [], []
    for asset, (_, filename) in zip(b.assets, asset_file_names(b.assets)):
        ph = gd.node.add(name=unique("asset_path_initializer"), op="Placeholder")
        ph.attr["dtype"].type = dtypes.string.enum
        ph.attr["shape"].shape.SetInParent()
        # graph-level loaders feed the path only to the init op: it is kept in a string
        # variable that the init op assigns and the signature calls read (as TF does)
        var = gd.node.add(name=unique("asset_path"), op="VarHandleOp")
        var.attr["dtype"].type = dtypes.string.enum
        var.attr["shape"].shape.SetInParent()
        var.attr["shared_name"].s = var.name.encode()
        assign = gd.node.add(name=unique(f"{var.name}/Assign"), op="AssignVariableOp",
                             input=[var.name, ph.name])
        assign.attr["dtype"].type = dtypes.string.enum
        init_deps.append("^" + assign.name)
        read = gd.node.add(name=unique(f"{var.name}/Read"), op="ReadVariableOp",
                           input=[var.name])
        read.attr["dtype"].type = dtypes.string.enum
        handle_node[b.graph.node_id(asset)] = read.name
        entry = meta_graph_pb2.AssetFileDef(filename=filename)
        entry.tensor_info.name = f"{ph.name}:0"
        entry.tensor_info.dtype = dtypes.string.enum
        asset_files.append(entry)
    for i, node in enumerate(b.graph.nodes):
        if saves_as_resource(node):
            handle_node[i] = _resource_graph_nodes(b, i, node, gd, unique, handle_node,
                                                   init_deps)
    saver_def = add_saver(gd, [(b.graph.checkpoint_key(i), handle_node[i], b.graph.nodes[i])
                               for i in sorted(handle_node)
                               if isinstance(b.graph.nodes[i], Variable)],
                          [(_saveable_key(b, i), handle_node[i], b.graph.nodes[i])
                           for i in sorted(b.saveables) if i in handle_node])
    signature_defs = {}
    for key, w in b.signature_map.wrappers.items():
        fd = b.library[w.name]
        keys = sorted(sigs.input_keys(w.cf))
        sd = meta_graph_pb2.SignatureDef(method_name=constants.PREDICT_METHOD_NAME)
        call_inputs = []
        for k, arg in zip(keys, fd.signature.input_arg):
            ph = gd.node.add(name=unique(f"{key}_{k}"), op="Placeholder")
            shape = shape_to_proto(w.cf.graph.arg_inputs[sigs.input_keys(w.cf).index(k)].shape)
            ph.attr["dtype"].type = arg.type
            ph.attr["shape"].shape.CopyFrom(shape)
            info = sd.inputs[k]
            info.name, info.dtype = f"{ph.name}:0", arg.type
            info.tensor_shape.CopyFrom(shape)
            call_inputs.append(ph.name)
        call = gd.node.add(name=unique("StatefulPartitionedCall"), op="StatefulPartitionedCall")
        call.input.extend(call_inputs + [handle_node[j] for j in b.proto.concrete_functions[
            w.name].bound_inputs])
        call.attr["f"].func.name = w.name
        call.attr["Tin"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type)
                                                 for a in fd.signature.input_arg], "list(type)"))
        call.attr["Tout"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type)
                                                  for a in fd.signature.output_arg],
                                                 "list(type)"))
        outs = sigs.output_map(w.cf)
        for pos, k in enumerate(sorted(outs)):
            t = w.cf.graph.outputs[outs[k]]
            info = sd.outputs[k]
            info.name, info.dtype = f"{call.name}:{pos}", t.dtype.enum
            info.tensor_shape.CopyFrom(shape_to_proto(t.shape))
        signature_defs[key] = sd
    noop = gd.node.add(name=unique("NoOp"), op="NoOp", input=init_deps)
    init = meta_graph_pb2.SignatureDef()
    init.outputs[constants.INIT_OP_SIGNATURE_KEY].name = noop.name
    init.outputs[constants.INIT_OP_SIGNATURE_KEY].tensor_shape.unknown_rank = True
    signature_defs[constants.INIT_OP_SIGNATURE_KEY] = init
    gd.library.function.extend(b.library.values())
    gd.library.registered_gradients.extend(b.registered_gradients)
    strip_unsaved_gradient_types(gd.library)
    return gd, signature_defs, saver_def, asset_files


def _checkpoint_graph(b: _Builder) -> trackable_object_graph_pb2.TrackableObjectGraph:
    g = trackable_object_graph_pb2.TrackableObjectGraph()
    for i, node in enumerate(b.graph.nodes):
        p = g.nodes.add()
        for name, j in b.graph.edges[i]:
            p.children.add(node_id=j, local_name=name)
        if isinstance(node, Variable):
            a = p.attributes.add(name="VARIABLE_VALUE")
            a.full_name = node.name[:-2] if node.name.endswith(":0") else node.name
            a.checkpoint_key = b.graph.checkpoint_key(i)
        elif i in b.saveables:  # a mutable table: "<path>/.ATTRIBUTES/table" + suffixes
            p.attributes.add(name=ckpt_graph.saveable_name(node),
                             checkpoint_key=_saveable_key(b, i))
    return g


def _saveable_key(b: _Builder, i: int) -> str:
    return ckpt_graph.saveable_key(b.graph.paths[i], ckpt_graph.saveable_name(b.graph.nodes[i]))


def _saveable_values(b: _Builder) -> dict:
    """{bundle key: NumPy value} of the mutable tables' contents."""
    nodes = list(b.saveables)
    out = {}
    for i, tensors in zip(nodes, serialize_saveables([b.graph.nodes[i] for i in nodes])):
        out.update({_saveable_key(b, i) + suffix: v for suffix, v in tensors.items()})
    return out


def _resource_graph_nodes(b, i: int, resource, gd, unique, handle_node: dict,
                          init_deps: list) -> str:
    """A loaded resource (a table) in the graph-level program, as TensorFlow writes it for
    graph loaders (C++, TF Serving): its creating op, and a call of its initializer that the
    init op runs. Returns the node giving its handle."""
    edges = dict(b.graph.edges[i])
    created = None
    if "_create_resource" in edges:
        fd = b.library[b.proto.nodes[edges["_create_resource"]].function.concrete_functions[0]]
        created = next((n for n in fd.node_def if n.op in _RESOURCE_CREATORS), None)
    if created is None:
        what = getattr(resource, "path", type(resource).__name__)
        raise ValueError(f"Cannot save the resource '{what}': its creator "
                         "function makes none of the resources ndflow knows "
                         f"({', '.join(sorted(_RESOURCE_CREATORS))})")
    by_name = {n.name: n for n in fd.node_def}
    inputs = []
    for ref in created.input:  # a dense table's empty_key/deleted_key constants
        source = by_name.get(ref.split(":")[0])
        if source is None or source.op != "Const":
            raise ValueError(f"Cannot save the resource '{type(resource).__name__}': its "
                             f"creator's input {ref!r} is not a constant")
        const = gd.node.add(name=unique(f"{created.name}/{source.name}"), op="Const")
        const.attr["dtype"].CopyFrom(source.attr["dtype"])
        const.attr["value"].CopyFrom(source.attr["value"])
        inputs.append(const.name)
    table = gd.node.add(name=unique(created.name), op=created.op, input=inputs)
    for k, v in created.attr.items():
        if not k.startswith("_"):
            table.attr[k].CopyFrom(v)
    handle_node[i] = table.name
    if "_initialize" in edges:
        name = b.proto.nodes[edges["_initialize"]].function.concrete_functions[0]
        fd = b.library[name]
        call = gd.node.add(name=unique("StatefulPartitionedCall"), op="StatefulPartitionedCall")
        call.input.extend(handle_node[j] for j in b.proto.concrete_functions[name].bound_inputs)
        call.attr["f"].func.name = name
        call.attr["Tin"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type)
                                                 for a in fd.signature.input_arg], "list(type)"))
        call.attr["Tout"].CopyFrom(attr_to_proto([dtypes.as_dtype(a.type)
                                                  for a in fd.signature.output_arg],
                                                 "list(type)"))
        init_deps.append("^" + call.name)
    return table.name


_RESOURCE_CREATORS = frozenset({"HashTableV2", "MutableHashTableV2", "MutableDenseHashTableV2",
                                "VarHandleOp"})  # the last: a TrackableResource's variable


def _write_tree(tmp: str, sm, sm_bytes: bytes, ckpt, variables: dict, assets: list,
                sharding_callback=None) -> None:
    os.makedirs(os.path.join(tmp, constants.VARIABLES_DIRECTORY))
    os.makedirs(os.path.join(tmp, constants.ASSETS_DIRECTORY))
    for source, filename in assets:
        shutil.copyfile(source, os.path.join(tmp, constants.ASSETS_DIRECTORY, filename))
    prefix = os.path.join(tmp, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
    write_variables(prefix, variables, ckpt.SerializeToString(), sharding_callback)
    with open(os.path.join(tmp, constants.SAVED_MODEL_FILENAME_PB), "wb") as f:
        f.write(sm_bytes)
    with open(prefix + ".index", "rb") as f:
        fp = create_fingerprint_def(sm, f.read())
    with open(os.path.join(tmp, constants.FINGERPRINT_FILENAME), "wb") as f:
        f.write(fp.SerializeToString())


@tf_export("saved_model.save", v1=["saved_model.save", "saved_model.experimental.save"])
def save(obj, export_dir, signatures=None, options=None) -> None:
    """Exports `obj` (a `tf.Module`) with its variables, tf.functions and signatures."""
    export_dir = os.fspath(export_dir)
    if not context.executing_eagerly():
        raise AssertionError("tf.saved_model.save is not supported inside a traced "
                             "@tf.function or a TF1 graph. Move the call to the outer "
                             "eagerly-executed context (TF1 programs: "
                             "tf.compat.v1.saved_model.simple_save).")
    with save_context():   # functions traced now are traced for the file (core/save_context)
        b = _Builder(obj, signatures)
        b.save_variable_devices = VariablePolicy.from_obj(
            getattr(options, "experimental_variable_policy", None))._save_variable_devices()
        b.build_nodes()
        if getattr(options, "experimental_custom_gradients", True):
            b.registered_gradients = save_gradient_functions(b)
        gd, signature_defs, saver_def, asset_files = _graph_def(b)
    mg = meta_graph_pb2.MetaGraphDef()
    mg.meta_info_def.tags.append(constants.SERVING)
    for tag in getattr(options, "extra_tags", None) or []:
        mg.meta_info_def.tags.append(tag)
    mg.meta_info_def.tensorflow_version = "2.21.0"
    mg.meta_info_def.tensorflow_git_version = "ndflow"
    mg.graph_def.CopyFrom(gd)
    mg.saver_def.CopyFrom(saver_def)
    mg.asset_file_def.extend(asset_files)
    for k, sd in signature_defs.items():
        mg.signature_def[k].CopyFrom(sd)
    mg.object_graph_def.CopyFrom(b.proto)
    sm = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
    sm.meta_graphs.append(mg)
    sm_bytes = sm.SerializeToString()
    variables = {b.graph.checkpoint_key(i): node for i, node in enumerate(b.graph.nodes)
                 if isinstance(node, Variable)}
    variables.update(_saveable_values(b))  # NumPy values, written as they are
    parent = os.path.dirname(os.path.abspath(export_dir))
    tmp = os.path.join(parent, f".{os.path.basename(export_dir)}.tmp-{uuid.uuid4().hex}")
    try:
        os.makedirs(parent, exist_ok=True)
        _write_tree(tmp, sm, sm_bytes, _checkpoint_graph(b), variables,
                    asset_file_names(b.assets),
                    getattr(options, "experimental_sharding_callback", None))
        replace_tree(tmp, export_dir)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        cls = (errors.PermissionDeniedError if e.errno in (errno.EACCES, errno.EPERM,
                                                           errno.EROFS)
               else errors.ResourceExhaustedError if e.errno == errno.ENOSPC
               else errors.UnknownError)
        raise cls(None, None, f"Failed to write the SavedModel to {export_dir}: "
                  f"{e.strerror or e}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
