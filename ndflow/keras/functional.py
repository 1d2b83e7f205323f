"""Functional models: `tf.keras.Model(inputs, outputs)`. The layer calls recorded between
the Input KerasTensors and the outputs (Nodes) are ordered once; calling the model replays
them on real tensors. Multi-input/multi-output (lists or dicts), shared layers, nested
models, intermediate tensors as inputs (cloned as new Inputs, as Keras 3), and Keras 3's
`get_config` format (`inbound_nodes`, `input_layers`, `output_layers`) with `from_config`
rebuilding the graph."""

from __future__ import annotations

import warnings

from ndflow.core.nest import flatten, flatten_with_tuple_paths, pack_sequence_as
from ndflow.core.tensor import Tensor
from ndflow.keras import model as model_module
from ndflow.keras.keras_tensor import KerasTensor, Node
from ndflow.keras.layers import input_layer, layer_serialization
from ndflow.keras.layers.input_layer import InputLayer
from ndflow.keras.layers.input_spec import InputSpec, flatten_inputs
from ndflow.keras.layers.tensor_operators import TensorOperator
from ndflow.keras.model import Model
from ndflow.ops import array_core
from ndflow.ops.cast import cast
from ndflow.ops.sparse_tensor import SparseTensor, sparse_tensor_to_dense


def _ordered_nodes(inputs: list, outputs) -> list:
    """The nodes between `inputs` and the (nested) `outputs`, each after the nodes it depends
    on. An output that needs an `Input` not among `inputs` is Keras 3's "Output with path
    ... is not connected to `inputs`" (the path: the output's keys/indices joined by ".")."""
    input_ids = {id(t) for t in inputs}
    order, state = [], {}
    path = ""

    def visit(tensor):
        if id(tensor) in input_ids:
            return
        history = tensor._keras_history
        if history is None:
            raise ValueError("Output tensors of a Functional model must be the output of a "
                             f"Keras layer. Received: {tensor}")
        layer, index, _ = history
        node = layer._inbound_nodes[index]
        if isinstance(layer, InputLayer):
            raise ValueError(f"Output with path `{path}` is not connected to `inputs`")
        mark = state.get(id(node))
        if mark == "done":
            return
        if mark == "visiting":
            raise ValueError("The functional graph has a cycle.")
        state[id(node)] = "visiting"
        for t in node.input_tensors:
            visit(t)
        state[id(node)] = "done"
        order.append(node)

    for keys, t in flatten_with_tuple_paths(outputs):
        path = ".".join(str(k) for k in keys)
        visit(t)
    return order


def _keras_layer_order(inputs: list, outputs: list) -> list:
    """The layers in Keras 3's order (its `map_graph`): deepest first (depth: the longest path
    to an output), ties broken by when a depth-first walk from the outputs first met them.
    `model.layers`, the weights' order and the checkpoint numbering all follow it."""
    input_ids = {id(t) for t in inputs}
    first_seen: dict = {}          # id(layer) -> traversal index
    layers: dict = {}              # id(layer) -> layer
    post_order, done = [], set()

    def walk(tensor):
        layer, index, _ = tensor._keras_history
        node = layer._inbound_nodes[index]
        if id(node) in done:
            return
        layers[id(layer)] = layer
        first_seen.setdefault(id(layer), len(first_seen))
        done.add(id(node))
        if id(tensor) not in input_ids and not isinstance(layer, InputLayer):
            for t in node.input_tensors:
                walk(t)
        post_order.append(node)

    for t in outputs:
        walk(t)
    node_depth: dict = {}
    layer_depth: dict = {}
    for node in reversed(post_order):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        if isinstance(node.layer, InputLayer):
            continue
        for t in node.input_tensors:
            layer, index, _ = t._keras_history
            parent = layer._inbound_nodes[index]
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for t in inputs:                 # inputs no output depends on
        layer = t._keras_history.operation
        if id(layer) not in layer_depth:
            layers[id(layer)], layer_depth[id(layer)], first_seen[id(layer)] = layer, 0, -1
    return sorted(layers.values(), key=lambda layer: (-layer_depth[id(layer)],
                                                      first_seen[id(layer)]))


class Functional(Model):
    """A model defined by its inputs and outputs."""

    _allow_non_tensor_positional_args = True   # Keras: Python values allowed

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        if isinstance(inputs, dict):
            for k, v in inputs.items():
                if isinstance(v, KerasTensor) and k != v.name:
                    warnings.warn("When providing `inputs` as a dict, all keys in the dict must "
                                  "match the names of the corresponding tensors. Received key "
                                  f"'{k}' mapping to value {v} which has name '{v.name}'. "
                                  f"Change the tensor name to '{k}' (via `Input(..., "
                                  f"name='{k}')`)", stacklevel=2)
        Model.__init__(self, name=name, trainable=trainable, **kwargs)
        flat_inputs, flat_outputs = flatten(inputs), flatten(outputs)
        for t in flat_inputs + flat_outputs:
            if not isinstance(t, KerasTensor):
                raise ValueError("All `inputs` and `outputs` values must be KerasTensors. "
                                 f"Received: inputs={inputs}, outputs={outputs} including "
                                 f"invalid value {t} of type {type(t)}")
        for t in flat_inputs:
            if t._keras_history is None:
                raise ValueError("All `inputs` values must be KerasTensors created by "
                                 f"`keras.Input` or by layers. Received: {t}")
        if not all(_is_input_tensor(t) for t in flat_inputs):
            inputs, outputs = _clone_graph_nodes(inputs, outputs)
            flat_inputs, flat_outputs = flatten(inputs), flatten(outputs)
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self.inputs, self.outputs = flat_inputs, flat_outputs
        self._nodes = _ordered_nodes(flat_inputs, outputs)
        self._functional_layers = _keras_layer_order(flat_inputs, flat_outputs)
        self.input_spec = [InputSpec(shape=(None,) + tuple(t.shape[1:]),
                                     allow_last_axis_squeeze=True,
                                     name=t._keras_history.operation.name)
                           for t in flat_inputs]
        self.built = True

    @property
    def layers(self) -> list:
        """The model's layers, as Keras 3 lists them: Python operators on its KerasTensors
        (`x + 3.0`) are operations of the graph, not layers (`operations` has them all)."""
        return [op for op in super().layers if not isinstance(op, TensorOperator)]

    @property
    def operations(self) -> list:
        return super().layers

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def output_names(self) -> list:
        return [t._keras_history.operation.name for t in self.outputs]

    @property
    def input_shape(self):
        shapes = [tuple(t.shape) for t in self.inputs]
        return shapes[0] if len(shapes) == 1 else pack_sequence_as(self._inputs_struct, shapes)

    @property
    def output_shape(self):
        shapes = [tuple(t.shape) for t in self.outputs]
        return shapes[0] if len(shapes) == 1 else pack_sequence_as(self._outputs_struct, shapes)

    @property
    def input_names(self) -> list:
        return [t._keras_history.operation.name for t in self.inputs]

    def _flatten_inputs(self, inputs) -> list:
        if isinstance(self._inputs_struct, dict) and isinstance(inputs, dict):
            missing = [k for k in self._inputs_struct if k not in inputs]
            if missing:
                raise ValueError(f"Missing data for input(s) {missing}. You passed a data "
                                 f"dictionary with keys {sorted(inputs)}. Expected the "
                                 f"following keys: {list(self._inputs_struct)}")
            return [inputs[k] for k in sorted(self._inputs_struct)]   # `inputs`' order
        if isinstance(inputs, dict) and not isinstance(self._inputs_struct, dict):
            names = self.input_names
            if all(n in inputs for n in names):
                return [inputs[n] for n in names]
        flat = flatten_inputs(inputs)   # a SparseTensor is one input
        if len(flat) < len(self.inputs):
            raise ValueError(f'Layer "{self.name}" expects {len(self.inputs)} input(s), but it '
                             f"received {len(flat)} input tensors. Inputs received: {inputs}")
        if len(flat) > len(self.inputs) or (type(inputs) in (list, tuple) and isinstance(
                self._inputs_struct, KerasTensor)):
            # Keras 3 warns and takes the inputs in order (`predict([x])` of a Sequential)
            self._warn_inputs_struct_mismatch(inputs)
        return flat[:len(self.inputs)]

    def _warn_inputs_struct_mismatch(self, inputs) -> None:
        def name(t):
            return "None" if t is None else t.name

        def shape(t):
            return "None" if t is None else f"Tensor(shape={tuple(t.shape)})"

        expected = name(self._inputs_struct) if isinstance(self._inputs_struct, KerasTensor) \
            else type(self._inputs_struct)(name(t) for t in flatten(self._inputs_struct))
        received = type(inputs)(shape(t) for t in inputs)
        warnings.warn("The structure of `inputs` doesn't match the expected structure.\n"
                      f"Expected: {expected}\nReceived: inputs={received}", stacklevel=3)

    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], dict):  # matched to the inputs by name
            args = (self._flatten_inputs(args[0]),) + tuple(args[1:])
        return super().__call__(*args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        values = {}
        paths = _input_paths(self._inputs_struct)
        for kt, value, path in zip(self.inputs, self._flatten_inputs(inputs), paths):
            if isinstance(value, SparseTensor) and not kt.sparse:  # Keras 3 densifies it
                value = sparse_tensor_to_dense(value)
            elif isinstance(value, Tensor) and value.dtype != kt.dtype:
                value = cast(value, kt.dtype)   # Keras converts inputs to their Input's dtype
            values[id(kt)] = adjust_input_rank(value, kt.shape, kt.name, path)
        for node in self._nodes:
            outs = node.replay(values)
            for kt, value in zip(node.output_tensors, outs):
                values[id(kt)] = value
        return pack_sequence_as(self._outputs_struct, [values[id(t)] for t in self.outputs])

    def compute_output_shape(self, input_shape):
        return pack_sequence_as(self._outputs_struct, [t.shape for t in self.outputs])

    # -- config ------------------------------------------------------------------------------
    def get_config(self) -> dict:
        node_ids = {}  # a node's index among its layer's nodes that belong to this model
        for layer in self._functional_layers:
            mine = [n for n in layer._inbound_nodes
                    if isinstance(layer, InputLayer) or n in self._nodes]
            for i, node in enumerate(mine):
                node_ids[id(node)] = i

        def history(t):
            layer, index, tensor_index = t._keras_history
            node = layer._inbound_nodes[index]
            return [layer.name, node_ids.get(id(node), 0), tensor_index]

        def arg(x):
            if isinstance(x, KerasTensor):
                return {"class_name": "__keras_tensor__", "config": {
                    "shape": x.shape, "dtype": x.dtype.name, "keras_history": history(x)}}
            return x

        layers = []
        for layer in self._functional_layers:
            nodes = [n for n in layer._inbound_nodes if n in self._nodes]
            spec = layer_serialization.serialize(layer)
            spec["name"] = layer.name
            spec["inbound_nodes"] = [
                {"args": tuple(_map(arg, a) for a in n.call_args),
                 "kwargs": {k: _map(arg, v) for k, v in n.call_kwargs.items()}}
                for n in nodes]
            layers.append(spec)

        def refs(struct):
            if isinstance(struct, dict):
                return {k: history(v) for k, v in struct.items()}
            if isinstance(struct, (list, tuple)):
                return [history(t) for t in struct]
            return history(struct)

        return {"name": self.name, "trainable": self.trainable, "layers": layers,
                "input_layers": refs(self._inputs_struct),
                "output_layers": refs(self._outputs_struct)}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        created = {}
        pending = list(config["layers"])
        outputs_of = {}   # (layer name, node index) -> output structure

        def resolve(x):
            if isinstance(x, dict) and x.get("class_name") == "__keras_tensor__":
                name, node_index, tensor_index = x["config"]["keras_history"]
                key = (name, node_index)
                if key not in outputs_of:
                    raise KeyError(key)
                return flatten(outputs_of[key])[tensor_index]
            if isinstance(x, (list, tuple)):
                return type(x)(resolve(v) for v in x)
            if isinstance(x, dict):
                return {k: resolve(v) for k, v in x.items()}
            return x

        for spec in pending:
            if spec["class_name"] == "InputLayer":
                layer = InputLayer.from_config(spec["config"])
                outputs_of[(spec["name"], 0)] = layer.output
            else:
                layer = layer_serialization.deserialize(spec, custom_objects)
            created[spec["name"]] = layer
        progress = True
        remaining = [(s, i, n) for s in pending if s["class_name"] != "InputLayer"
                     for i, n in enumerate(s["inbound_nodes"])]
        while remaining and progress:
            progress, later = False, []
            for spec, index, node in remaining:
                try:
                    args = resolve(list(node["args"]))
                    kwargs = resolve(dict(node["kwargs"]))
                except KeyError:
                    later.append((spec, index, node))
                    continue
                outputs_of[(spec["name"], index)] = created[spec["name"]](*args, **kwargs)
                progress = True
            remaining = later
        if remaining:
            raise ValueError("Could not rebuild the functional graph from its config: "
                             f"unresolved inputs of layer '{remaining[0][0]['name']}'.")

        def tensors(refs):
            if isinstance(refs, dict):
                return {k: tensors(v) for k, v in refs.items()}
            if refs and isinstance(refs[0], (list, tuple)):
                return [tensors(r) for r in refs]
            name, node_index, tensor_index = refs
            return flatten(outputs_of[(name, node_index)])[tensor_index]

        return cls(tensors(config["input_layers"]), tensors(config["output_layers"]),
                   name=config.get("name"), trainable=config.get("trainable", True))


def _is_input_tensor(t) -> bool:
    return isinstance(t._keras_history.operation, InputLayer)


def _clone_graph_nodes(inputs, outputs):
    """Keras' clone_graph_nodes, for a model whose inputs include intermediate tensors: each
    such input is replaced by a new `Input` named "<tensor name>CLONE", and the layer calls
    from the inputs to the outputs are recorded again (new Nodes of the same layers, on
    copies "<tensor name>_clone" of their tensors), so the model starts at those inputs."""
    mapping, layer_mapping, cloned_inputs = {}, {}, []
    for t in flatten(inputs):
        if _is_input_tensor(t):
            mapping[id(t)] = t
        else:
            new = input_layer.Input(batch_shape=t.shape, dtype=t.dtype, sparse=t.sparse,
                                    name=f"{t.name}CLONE")
            mapping[id(t)] = new
            layer_mapping[id(t._keras_history.operation)] = new._keras_history.operation
        cloned_inputs.append(mapping[id(t)])
    cloned_outputs = []
    for t in flatten(outputs):
        copy = _clone_tensor(t)
        mapping[id(t)] = copy
        cloned_outputs.append(copy)

    def swap(x):
        if not isinstance(x, KerasTensor):
            return x
        if id(x) not in mapping:
            mapping[id(x)] = _clone_tensor(x)
        return mapping[id(x)]

    for node in _nodes_between(flatten(inputs), flatten(outputs)):
        layer = layer_mapping.get(id(node.layer), node.layer)
        outs = _map(swap, node.outputs)
        if isinstance(layer, InputLayer):
            Node(layer, (), {}, outs)
        else:
            Node(layer, _map(swap, node.call_args), _map(swap, node.call_kwargs), outs)
    return (pack_sequence_as(inputs, cloned_inputs),
            pack_sequence_as(outputs, cloned_outputs))


def _clone_tensor(t):
    return KerasTensor(t.shape, t.dtype, sparse=t.sparse, name=f"{t.name}_clone")


def _nodes_between(inputs: list, outputs: list) -> list:
    """Keras' _build_map: the nodes from `inputs` to `outputs`, each after its parents,
    stopping at the inputs (an input layer's node included)."""
    input_ids = {id(t) for t in inputs}
    order, done = [], set()

    def visit(tensor):
        layer, index, _ = tensor._keras_history
        node = layer._inbound_nodes[index]
        if id(node) in done:
            return
        done.add(id(node))
        if not isinstance(layer, InputLayer) and id(tensor) in input_ids:
            return
        for t in node.input_tensors:
            visit(t)
        order.append(node)

    for t in outputs:
        visit(t)
    return order


def _map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, v) for v in x)
    if isinstance(x, dict) and not isinstance(x, KerasTensor):
        return {k: _map(fn, v) for k, v in x.items()}
    return fn(x)


model_module.functional_class = Functional


def _input_paths(struct, prefix=()) -> list:
    """Keras' path of each flattened input: '' for a lone Input, list indices and dict keys
    (sorted, as flattened) joined by '.'."""
    if isinstance(struct, dict):
        return [p for k in sorted(struct) for p in _input_paths(struct[k], prefix + (k,))]
    if isinstance(struct, (list, tuple)):
        return [p for i, v in enumerate(struct) for p in _input_paths(v, prefix + (i,))]
    return [".".join(str(p) for p in prefix)]


def adjust_input_rank(x, ref_shape, name=None, path=""):
    """Keras' input standardization: an input one rank short of its `Input` whose last
    dimension is 1 gains that axis (1-D features into `Input((1,))`), one a rank over with a
    trailing 1 loses it; other rank mismatches are Keras' ValueError."""
    shape = getattr(x, "shape", None)
    if shape is None or ref_shape is None:
        return x
    ref_shape = tuple(ref_shape)
    rank, ref_rank = len(shape), len(ref_shape)
    if rank == ref_rank:
        return x
    if rank == ref_rank + 1 and shape[-1] == 1:
        return array_core.squeeze(x, axis=-1)
    if rank == ref_rank - 1 and ref_shape[-1] == 1:
        return array_core.expand_dims(x, axis=-1)
    raise ValueError(f"Invalid input shape for input {x} with name '{name}' and path '{path}'. "
                     f"Expected shape {ref_shape}, but input has incompatible shape "
                     f"{tuple(shape)}")
