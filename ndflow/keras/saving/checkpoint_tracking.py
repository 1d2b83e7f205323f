"""How Keras objects appear in `tf.train.Checkpoint` object graphs, named as Keras 3 under
TensorFlow 2.21 names them, so checkpoints move between ndflow and TensorFlow both ways.

Keras 3 on TensorFlow tracks a layer's attributes holding variables or layers (Dense's
kernel is its `_kernel` attribute there), a Sequential model through its inner functional
model (`_functional/_operations/<i>`, the InputLayer being operation 0), a functional model
through `_operations/<i>`, a compiled model's optimizer as `optimizer`, and an optimizer's
`_variables` (iterations, learning rate, then the slots, interleaved per variable),
`_trainable_variables`, `_iterations` and `_learning_rate`.
"""

from __future__ import annotations

from ndflow.checkpoint.object_graph import holds_trackables, register_children
from ndflow.keras.functional import Functional
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_layer import InputLayer
from ndflow.keras.model import Model
from ndflow.keras.optimizers.base_optimizer import Optimizer
from ndflow.keras.sequential import Sequential
from ndflow.ops.variables import Variable

# Attributes that are Keras bookkeeping, not tracked by Keras 3 as checkpoint dependencies.
_BOOKKEEPING = frozenset({
    "_trainable_variables", "_non_trainable_variables", "_losses", "_inbound_nodes",
    "_outbound_nodes", "_metrics", "_layers_list", "_functional_layers", "_nodes", "inputs",
    "outputs", "_inputs_struct", "_outputs_struct", "_functional", "optimizer",
    "_compile_loss", "_compile_metrics", "_loss_tracker", "history", "input_spec",
    "train_function", "test_function", "predict_function", "_compile_config"})
# Keras 3 attribute names where ndflow's differ (layer class name -> {ndflow: Keras 3})
_KERAS_NAMES = {"Dense": {"kernel": "_kernel"}, "EinsumDense": {"kernel": "_kernel"},
                "_Conv": {"kernel": "_kernel"},  # Conv1D/2D/3D (Keras' BaseConv)
                "Embedding": {"embeddings": "_embeddings"}}


def _renames(layer) -> dict:
    for klass in type(layer).__mro__:
        names = _KERAS_NAMES.get(klass.__name__)
        if names is not None and klass.__module__.startswith("ndflow."):
            return names
    return {}


def layer_children(layer) -> list:
    renames = _renames(layer)
    kids = []
    for name, value in vars(layer).items():
        if name in _BOOKKEEPING:
            continue
        if isinstance(value, (Variable, Layer, Optimizer)):
            kids.append((renames.get(name, name), value))
        elif not name.startswith("_") and isinstance(value, (list, tuple, dict)) and \
                holds_trackables(value):
            # Keras 3 drops a layer's lists of sublayers from checkpoints (their weights are
            # lost on restore there); ndflow keeps them, named <attribute>/<index>.
            kids.append((name, value))
    return kids + _optimizer_child(layer)


def _optimizer_child(model) -> list:
    optimizer = getattr(model, "optimizer", None)
    return [("optimizer", optimizer)] if isinstance(optimizer, Optimizer) else []


def _operations(layers: list) -> dict:
    """The `_operations` list node: layer i under the name "i". An unbuilt Sequential model
    has no InputLayer yet; Keras 3 will put one first, so numbering starts at 1."""
    offset = 0 if layers and isinstance(layers[0], InputLayer) else 1
    return {str(i + offset): layer for i, layer in enumerate(layers)}


def sequential_children(model) -> list:
    return [("_functional", {"_operations": _operations(list(model._layers_list))})] + \
        _optimizer_child(model)


def functional_children(model) -> list:
    return [("_operations", _operations(list(model._functional_layers)))] + \
        _optimizer_child(model)


def model_children(model) -> list:
    if isinstance(model, Sequential):
        return sequential_children(model)
    if isinstance(model, Functional):
        return functional_children(model)
    return layer_children(model)


def optimizer_children(optimizer) -> list:
    kids = [("_variables", list(optimizer._variables)),
            ("_trainable_variables", list(optimizer._trainable_variables))]
    for name in ("_iterations", "_learning_rate"):
        value = getattr(optimizer, name, None)
        if isinstance(value, Variable):
            kids.append((name, value))
    return kids


register_children(Layer, layer_children)
register_children(Model, model_children)
register_children(Optimizer, optimizer_children)
