"""`keras.Operation`: the base of Keras' computations. A subclass defines `call` (and
optionally `compute_output_spec`); called on tensors it runs `call`, called on KerasTensors
it returns KerasTensors and records a `Node`, so the op becomes a step of a functional
`Model` or a `keras.Function`. Keras layers are Operations: ndflow's `Layer` is registered as
a virtual subclass (isinstance holds) rather than rebased."""

from __future__ import annotations

import abc

from ndflow.core.api_export import keras_export
from ndflow.keras import keras_tensor
from ndflow.keras.layers.auto_config import (
    automatic_config,
    constructor_config,
    default,
    uses_default_get_config,
)
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.layer_names import to_snake_case, unique_name
from ndflow.keras.symbolic_scope import SymbolicScope


@keras_export("keras.Operation")
class Operation(metaclass=abc.ABCMeta):  # noqa: B024 - ABCMeta for register(Layer)
    """A computation on tensors that also works on KerasTensors."""

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance._auto_config, instance._auto_config_error_args = \
            constructor_config(cls, args, kwargs)
        return instance

    def __init__(self, name=None):
        if name is None:
            name = unique_name(to_snake_case(type(self).__name__))
        if not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name} (of type {type(name)})")
        self.name = name
        self._inbound_nodes: list = []
        self._outbound_nodes: list = []

    def __call__(self, *args, **kwargs):
        if keras_tensor.any_keras_tensors(args, kwargs):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def symbolic_call(self, *args, **kwargs):
        outputs = self.compute_output_spec(*args, **kwargs)
        node = keras_tensor.Node(self, args, kwargs, outputs)
        for parent in node.parent_nodes:
            outbound = getattr(parent.layer, "_outbound_nodes", None)
            if outbound is not None:
                outbound.append(node)
        return outputs

    def call(self, *args, **kwargs):
        raise NotImplementedError

    def quantized_call(self, *args, **kwargs):
        raise NotImplementedError

    def compute_output_spec(self, *args, **kwargs):
        """The KerasTensors `call` returns for these arguments: `call` traced once on
        placeholders (under `SymbolicScope`)."""
        try:
            with SymbolicScope():
                return keras_tensor.output_spec(self.call, args, kwargs)
        except Exception as e:
            name = type(self).__name__
            try:
                new = type(e)(
                    f"Could not automatically infer the output shape / dtype of "
                    f"'{self.name}' (of type {name}). Either the `{name}.call()` method is "
                    f"incorrect, or you need to implement the `{name}.compute_output_spec() "
                    f"/ compute_output_shape()` method. Error encountered:\n\n{e}")
            except Exception:
                raise e from None
            raise new.with_traceback(e.__traceback__) from None

    @default
    def get_config(self):
        if not uses_default_get_config(self):
            return {"name": self.name}   # a subclass calling super().get_config()
        return automatic_config(self)

    @classmethod
    def from_config(cls, config):
        try:
            return cls(**config)
        except Exception as e:
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using "
                            f"config={config}.\n\nException encountered: {e}") from None

    def __repr__(self):
        return f"<Operation name={self.name}>"

    @property
    def input(self):
        return self._node_attribute(0, "input_tensors", "input")

    @property
    def output(self):
        return self._node_attribute(0, "output_tensors", "output")

    def _node_attribute(self, index, attr, what):
        if not self._inbound_nodes:
            raise AttributeError(f"The layer {self.name} has never been called and thus has "
                                 f"no defined {what}.")
        if len(self._inbound_nodes) <= index:
            raise ValueError(f"Asked to get {what} at node {index}, but the operation has "
                             f"only {len(self._inbound_nodes)} inbound nodes.")
        values = getattr(self._inbound_nodes[index], attr)
        return values[0] if isinstance(values, list) and len(values) == 1 else values

    def _obj_type(self):
        return "Operation"

    # what model.summary() asks of a functional model's operations: Keras lists an Operation
    # as a stateless row (0 parameters)
    built = True
    weights = property(lambda self: [])

    def count_params(self) -> int:
        return 0


Operation.register(Layer)   # every Keras layer is an Operation
