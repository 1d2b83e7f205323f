"""The functional API's symbolic values: a `KerasTensor` is a shape and a dtype with a
history (the layer call, a `Node`, that produced it). Calling a layer on KerasTensors builds
the layer, traces its `call` once into a throwaway graph to learn the output shapes and
dtypes, and records a Node; a functional `Model` later replays the Nodes on real tensors."""

from __future__ import annotations

import itertools
from collections import namedtuple

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.nest import flatten, map_structure, pack_sequence_as
from ndflow.core.shapes import TensorShape
from ndflow.keras.dtype_name import dtype_name
from ndflow.keras.symbolic_scope import SymbolicScope
from ndflow.ops.apply import register_tensor_conversion_function
from ndflow.runtime.func_graph import FuncGraph, tracing_scope

KerasHistory = namedtuple("KerasHistory", ["operation", "node_index", "tensor_index"])
_NAMES = itertools.count()


@keras_export("keras.KerasTensor")
class KerasTensor:
    """A symbolic tensor of the functional API: a shape (a tuple, None for unknown
    dimensions) and a dtype, with no values. `keras.Input` makes one; layers and
    `keras.ops` called on KerasTensors return KerasTensors and record the computation
    that `keras.Model(inputs, outputs)` turns into a model.

    Args:
      shape: the shape, batch axis included.
      dtype: the dtype name (default "float32").
      sparse: whether it stands for a `tf.SparseTensor`.
      ragged: must be False (no ragged KerasTensors in ndflow).
      record_history: whether it records the layer that produced it.
      name: optional name.
      mask: optional mask KerasTensor.

    Raises:
      ValueError: `ragged=True`.
    """

    def __init__(self, shape, dtype="float32", sparse=False, ragged=False, record_history=True,
                 name=None, mask=None):
        if ragged:
            raise ValueError("ndflow's KerasTensor has no ragged form")
        self.shape = tuple(shape)
        self.dtype = dtype_name(dtypes.as_dtype(dtype))
        self.sparse = sparse
        if not name:   # as Keras' auto_name: a named tensor takes no number
            n = next(_NAMES)
            name = "keras_tensor" if n == 0 else f"keras_tensor_{n}"
        self.name = name
        self._keras_mask = mask          # a KerasTensor (bool) or None
        self._keras_history = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return (f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, "
                f"sparse={self.sparse}, ragged=False, name={self.name}>")

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a boolean.")

    def __array__(self, *args, **kwargs):
        raise TypeError("You are passing a KerasTensor to a NumPy call. A KerasTensor is a "
                        "symbolic placeholder for a shape and dtype, used when constructing "
                        "Keras Functional models. It has no value.")

    def __tf_tensor__(self, dtype=None, name=None):
        raise ValueError(_NOT_A_TF_INPUT)


_NOT_A_TF_INPUT = (
    "A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a "
    "symbolic placeholder for a shape and dtype, used when constructing Keras Functional "
    "models or Keras Functions. You can only use it as input to a Keras layer or a Keras "
    "operation (from the namespaces `keras.layers` and `keras.ops`). You are likely doing "
    "something like:\n\n```\nx = Input(...)\n...\ntf_fn(x)  # Invalid.\n```\n\nWhat you "
    "should do instead is wrap `tf_fn` in a layer:\n\n```\nclass MyLayer(Layer):\n"
    "    def call(self, x):\n        return tf_fn(x)\n\nx = MyLayer()(x)\n```\n")

# tf ops converting a KerasTensor (`tf.math.argmax(keras_input)`) get Keras' ValueError, as
# TensorFlow's convert_to_tensor calls `__tf_tensor__`
register_tensor_conversion_function(
    KerasTensor, lambda value, dtype=None, name=None, as_ref=False:
    value.__tf_tensor__(dtype, name))


# Python operators on KerasTensors (`inputs / 255.0`): layers/tensor_operators.py registers
# the function that adds them to the graph (it is a Layer, which imports this module).
_DUNDER = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
           "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
           "and": "logical_and", "or": "logical_or", "xor": "logical_xor"}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_UNARY_DUNDER = {"neg": "negative", "abs": "absolute", "invert": "logical_not"}


def register_operators(apply, binary: list, unary: list) -> None:
    def binary_method(op, reverse):
        return lambda self, other: apply(op, self, other, reverse)

    for dunder, op in {**_DUNDER, **_COMPARE}.items():
        if op in binary:
            setattr(KerasTensor, f"__{dunder}__", binary_method(op, False))
            if dunder in _DUNDER:
                setattr(KerasTensor, f"__r{dunder}__", binary_method(op, True))
    for dunder, op in _UNARY_DUNDER.items():
        if op in unary:
            setattr(KerasTensor, f"__{dunder}__", lambda self, op=op: apply(op, self))
    KerasTensor.__getitem__ = lambda self, key: apply("getitem", self, key)


# keras.ops calls on KerasTensors, from keras.ops and from the functions Keras 3 builds on
# them (the activations): keras/ops/op_layer.py registers the function that adds the op's
# step to the model (it is a Layer, which imports this module).
_OP_STEP: list = []


def register_op_step(apply) -> None:
    _OP_STEP[:] = [apply]


def op_step_registered() -> bool:
    return bool(_OP_STEP)


def op_step(name: str, args, kwargs):
    """The KerasTensors keras.ops' `name` returns when called on KerasTensors: the step Keras 3
    records for that op in the functional model."""
    return _OP_STEP[0](name, tuple(args), dict(kwargs))


def is_keras_tensor(x) -> bool:
    return isinstance(x, KerasTensor)


def any_keras_tensors(args, kwargs) -> bool:
    return any(isinstance(x, KerasTensor) for x in flatten((args, kwargs)))


class Node:
    """One call of `layer` on KerasTensors: its arguments and its outputs."""

    def __init__(self, layer, call_args, call_kwargs, outputs):
        self.layer = layer
        self.call_args, self.call_kwargs = call_args, call_kwargs
        self.outputs = outputs                        # the structure the call returned
        self.input_tensors = [x for x in flatten((call_args, call_kwargs))
                              if isinstance(x, KerasTensor)]
        self.output_tensors = [x for x in flatten(outputs) if isinstance(x, KerasTensor)]
        index = len(layer._inbound_nodes)
        layer._inbound_nodes.append(self)
        for i, t in enumerate(self.output_tensors):
            t._keras_history = KerasHistory(layer, index, i)

    @property
    def parent_nodes(self) -> list:
        nodes = []
        for t in self.input_tensors:
            if t._keras_history is not None:
                layer, index, _ = t._keras_history
                nodes.append(layer._inbound_nodes[index])
        return nodes

    def replay(self, values: dict, training=None):
        """Calls the layer with each KerasTensor argument replaced by its value in `values`
        (keyed by id); returns the flat outputs."""
        def value(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x
        args = map_structure(value, self.call_args)
        kwargs = map_structure(value, self.call_kwargs)
        if training is not None and "training" not in kwargs:
            kwargs["training"] = training
        return flatten(self.layer(*args, **kwargs))


def _placeholder(graph: FuncGraph, kt: KerasTensor):
    ph = graph.add_placeholder(kt.dtype._dtype, TensorShape(list(kt.shape)), "keras_input")
    if kt._keras_mask is not None:
        ph._keras_mask = _placeholder(graph, kt._keras_mask)
    return ph


def _to_keras_tensor(t):
    if t is None or isinstance(t, KerasTensor):
        return t
    mask = getattr(t, "_keras_mask", None)
    return KerasTensor(t.shape.as_list() if t.shape.rank is not None else (),
                       t.dtype, mask=None if mask is None else _to_keras_tensor(mask))


def output_spec(call, args, kwargs):
    """What `call(*args, **kwargs)` returns for KerasTensor arguments, as KerasTensors: the
    call is traced once on placeholders in a throwaway graph (weights, created eagerly on
    first use, are captured)."""
    graph = FuncGraph("keras_output_spec")
    with tracing_scope(graph), SymbolicScope():   # Keras' symbolic stage
        sargs, skwargs = map_structure(
            lambda x: _placeholder(graph, x) if isinstance(x, KerasTensor) else x,
            (args, kwargs))
        outputs = call(*sargs, **skwargs)
    flat = [_to_keras_tensor(t) for t in flatten(outputs)]
    return pack_sequence_as(outputs, flat)
