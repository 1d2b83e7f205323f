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

import weakref

from ndflow.checkpoint.object_graph import holds_trackables, register_children
from ndflow.core import dtypes
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_layer import InputLayer
from ndflow.keras.optimizers.base_optimizer import Optimizer
from ndflow.ops.lookup_tables import LookupInterface
from ndflow.ops.variables import Variable
from ndflow.saved_model.trackable_resource import TrackableResource
from ndflow.train.init_scope import init_scope

# Models are recognized by their layer lists, not their classes: this module is imported
# by keras.saving, which model.py itself imports, so importing the model classes here
# would be circular.

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
                "Embedding": {"embeddings": "_embeddings"},
                # StringLookup/IntegerLookup: the vocabulary's table (TF's object graph and
                # a SavedModel's resource node)
                "IndexLookup": {"_table": "lookup_table"}}


def _renames(layer) -> dict:
    for klass in type(layer).__mro__:
        names = _KERAS_NAMES.get(klass.__name__)
        if names is not None and klass.__module__.startswith("ndflow."):
            return names
    return {}


def layer_children(layer) -> list:
    if "_layers_list" in vars(layer):  # Sequential
        return [("_functional", {"_operations": _operations(list(layer._layers_list))})] + \
            _optimizer_child(layer)
    if "_functional_layers" in vars(layer):  # a functional model
        return [("_operations", _operations(list(layer._functional_layers)))] + \
            _optimizer_child(layer)
    renames = _renames(layer)
    kids = []
    for name, value in vars(layer).items():
        if name in _BOOKKEEPING:
            continue
        if isinstance(value, (Variable, Layer, Optimizer, LookupInterface, TrackableResource)) \
                or name in getattr(type(layer), "_tracked_attributes", ()):   # (a layer's
            # lookup tables too, tracked as TF's AutoTrackable layers track them)
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


def optimizer_children(optimizer) -> list:
    inner = vars(optimizer).get("_optimizer")
    if isinstance(inner, Optimizer):  # LossScaleOptimizer: Keras 3's names for its state
        iterations, learning_rate = _unused_wrapper_variables(optimizer)
        kids = [("_trainable_variables", list(getattr(inner, "_trainable_variables", []))),
                ("_iterations", iterations), ("_learning_rate", learning_rate),
                ("inner_optimizer", inner)]
        scale = vars(optimizer).get("_loss_scale")
        for name, attribute in (("dynamic_scale", "_current_loss_scale"),
                                ("step_counter", "_num_good_steps")):
            value = getattr(scale, attribute, None)
            if isinstance(value, Variable):
                kids.append((name, value))
        return kids
    kids = [("_variables", list(optimizer._variables)),
            ("_trainable_variables", list(optimizer._trainable_variables))]
    for name in ("_iterations", "_learning_rate"):
        value = getattr(optimizer, name, None)
        if isinstance(value, Variable):
            kids.append((name, value))
    return kids


def _unused_wrapper_variables(optimizer) -> tuple:
    """Keras 3's LossScaleOptimizer saves its own (never updated) iterations and learning
    rate, 0 and 0.0, beside its inner optimizer's; ndflow's wrapper has none, so stand-ins
    are kept per wrapper, for the same keys both ways."""
    pair = _WRAPPER_VARIABLES.get(optimizer)
    if pair is None:
        with init_scope():
            pair = (Variable(0, dtype=dtypes.int64, trainable=False, name="iteration"),
                    Variable(0.0, dtype=dtypes.float32, trainable=False,
                             name="learning_rate"))
        _WRAPPER_VARIABLES[optimizer] = pair
    return pair


_WRAPPER_VARIABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

register_children(Layer, layer_children)
register_children(Optimizer, optimizer_children)
