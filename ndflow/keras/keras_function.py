"""`keras.Function(inputs, outputs)`: the graph of Operation calls (layers, keras.ops,
`keras.Operation` subclasses) recorded between some KerasTensors and others, run again on
new values. Unlike a functional Model it tracks no state and is no Layer."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.core.nest import assert_same_structure, flatten, map_structure, pack_sequence_as
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers.input_layer import InputLayer
from ndflow.keras.operation import Operation
from ndflow.keras.symbolic_scope import SymbolicScope


def _nodes_between(inputs: list, outputs: list) -> list:
    """The nodes computing `outputs` from `inputs`, each after those it reads (Keras'
    `map_graph` checks: cycles, disconnected tensors, duplicate operation names)."""
    input_ids = {id(t) for t in inputs}
    order, state, done_ops, first_seen = [], {}, [], {}

    def visit(tensor):
        if id(tensor) in input_ids:
            return
        history = tensor._keras_history
        node = None if history is None else history.operation._inbound_nodes[history.node_index]
        if node is None or isinstance(node.layer, InputLayer):
            raise ValueError(f"Graph disconnected: cannot find parent for tensor {tensor}. "
                             "The following previous operations were accessed without "
                             f"issue: {done_ops}")
        mark = state.get(id(node))
        if mark == "done":
            return
        if mark == "visiting":
            raise ValueError(f"Tensor {tensor} from operation '{node.layer.name}' is part of "
                             "a cycle.")
        state[id(node)] = "visiting"
        first_seen.setdefault(id(node.layer), len(first_seen))
        for t in node.input_tensors:
            visit(t)
        state[id(node)] = "done"
        order.append(node)
        done_ops.append(node.layer.name)

    for t in outputs:
        visit(t)
    names = [op.name for op in dict.fromkeys(n.layer for n in order)]
    for name in names:
        if names.count(name) != 1:
            raise ValueError(f'The name "{name}" is used {names.count(name)} times in the '
                             "model. All operation names should be unique.")
    return order, _keras_operation_order(order, first_seen)


def _keras_operation_order(order: list, first_seen: dict) -> list:
    """The operations as Keras' `map_graph` lists them: deepest first (depth: the longest
    path to an output), ties by when the walk from the outputs first met them."""
    in_graph = {id(n) for n in order}
    node_depth, op_depth, ops = {}, {}, {}
    for node in reversed(order):
        depth = max(node_depth.setdefault(id(node), 0), op_depth.get(id(node.layer), 0))
        node_depth[id(node)] = op_depth[id(node.layer)] = depth
        ops[id(node.layer)] = node.layer
        for parent in node.parent_nodes:
            if id(parent) in in_graph:
                node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    return sorted(ops.values(), key=lambda op: (-op_depth[id(op)], first_seen[id(op)]))


def _shape(x) -> tuple:
    shape = x.shape
    if isinstance(shape, tuple):
        return shape
    return tuple(shape.as_list()) if getattr(shape, "rank", 0) is not None else ()


@keras_export("keras.Function")
class Function(Operation):
    """A computation graph of Keras operations from `inputs` to `outputs` (KerasTensors, or
    nests of them), applied again to new values: `Function(inputs, outputs)(values)`."""

    def __init__(self, inputs, outputs, name=None):
        super().__init__(name=name)
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self._inputs, self._outputs = flatten(inputs), flatten(outputs)
        for what, flat in (("inputs", self._inputs), ("outputs", self._outputs)):
            if not flat:
                raise ValueError(f"`{what}` argument cannot be empty. Received:\n"
                                 f"inputs={inputs}\noutputs={outputs}")
            for t in flat:
                if not isinstance(t, KerasTensor):
                    raise ValueError(f"All `{what}` values must be KerasTensors. Received: "
                                     f"{t} of type {type(t)}")
        self._nodes, self._operations = _nodes_between(self._inputs, self._outputs)

    @property
    def operations(self) -> list:
        return self._operations[:]

    @property
    def inputs(self) -> list:
        return self._inputs

    @property
    def outputs(self) -> list:
        return self._outputs

    def call(self, inputs):
        self._assert_input_compatibility(inputs)
        return self._run_through_graph(inputs)

    def compute_output_spec(self, inputs):
        self._assert_input_compatibility(inputs)
        if all(_shape(x) == x_ref.shape for x, x_ref in zip(flatten(inputs), self._inputs)):
            return pack_sequence_as(self._outputs_struct,
                                    [KerasTensor(t.shape, t.dtype) for t in self._outputs])
        with SymbolicScope():
            return self._run_through_graph(inputs, symbolic=True)

    def compute_output_shape(self, input_shape):
        shapes = input_shape if isinstance(input_shape, list) and input_shape and \
            isinstance(input_shape[0], (tuple, list)) else [input_shape]
        specs = [KerasTensor(s, x.dtype) for s, x in zip(shapes, self._inputs)]
        out = self.compute_output_spec(pack_sequence_as(self._inputs_struct, specs))
        return pack_sequence_as(out, [t.shape for t in flatten(out)])

    def _run_through_graph(self, inputs, symbolic=False):
        values = {id(x): y for x, y in zip(self._inputs, flatten(inputs))}
        for node in self._nodes:
            if symbolic:
                args, kwargs = _fill(node.call_args, values), _fill(node.call_kwargs, values)
                outs = flatten(node.layer.compute_output_spec(*args, **kwargs))
            else:
                outs = node.replay(values)
            for t, v in zip(node.output_tensors, outs):
                values[id(t)] = v
        return pack_sequence_as(self._outputs_struct, [values[id(t)] for t in self._outputs])

    def _assert_input_compatibility(self, inputs):
        try:
            assert_same_structure(inputs, self._inputs_struct, check_types=False)
        except (ValueError, TypeError):
            raise ValueError("Function was called with an invalid input structure. Expected "
                             f"input structure: {self._inputs_struct}\nReceived input "
                             f"structure: {inputs}") from None
        for x, ref in zip(flatten(inputs), self._inputs):
            shape = _shape(x)
            if len(shape) != len(ref.shape) or any(
                    d is not None and r is not None and d != r for d, r in zip(shape, ref.shape)):
                raise ValueError(f"{type(self).__name__} was passed incompatible inputs. For "
                                 f"input '{ref.name}', expected shape {ref.shape}, but "
                                 f"received instead a tensor with shape {shape}.")


def _fill(structure, values):
    return map_structure(lambda x: values[id(x)] if isinstance(x, KerasTensor) else x,
                         structure)
