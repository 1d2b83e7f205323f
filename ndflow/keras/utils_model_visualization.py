"""`tf.keras.utils.model_to_dot` and `plot_model`: a Keras model as a Graphviz graph, drawn as
Keras 3 draws it. Each layer is a node whose label is an HTML table (name and class, then
optionally its activation, input/output shapes, output dtype and trainability); each use of
a layer's output by another layer is an edge; with `expand_nested`, a nested Functional or
Sequential model becomes a dashed cluster of its own layers, the edges entering and leaving
it attached to the layers inside.

pydot builds the graph (imported on first use: pydot, else its forks pydot_ng or pydotplus,
as Keras looks for them) and Graphviz's `dot` program renders it. Without them the calls
raise Keras' ImportErrors, or, inside IPython, print the message and return None."""

from __future__ import annotations

import importlib
import os
import sys

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.keras import utils_model_visualization_docs
from ndflow.keras.functional import Functional
from ndflow.keras.layers.tensor_operators import TensorOperator
from ndflow.keras.ops.keras_op_table import TABLE as _KERAS_OPS
from ndflow.keras.ops.op_layer import KerasOpLayer
from ndflow.keras.sequential import Sequential
from ndflow.keras.utils_config import print_msg

_PYDOT_MODULES = ("pydot", "pydot_ng", "pydotplus")
_NOTEBOOK_MODULE = "IPython.core.magics.namespace"   # present once IPython runs a kernel/shell
_UNBUILT = ("This model has not yet been built. Build the model first by calling `build()` or "
            "by calling the model on a batch of data.")
_NO_PYDOT_DOT = "You must install pydot (`pip install pydot`) for model_to_dot to work."
_NO_PYDOT_PLOT = "You must install pydot (`pip install pydot`) for `plot_model` to work."
_NO_GRAPHVIZ = ("You must install graphviz (see instructions at "
                "https://graphviz.gitlab.io/download/) for `plot_model` to work.")

# -- pydot and Graphviz -----------------------------------------------------------------------


def _load_pydot():
    """pydot (or a fork), or None when none is installed."""
    for name in _PYDOT_MODULES:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _graphviz_runs(pydot) -> bool:
    """Whether Graphviz renders an empty graph (the `dot` program is installed and works)."""
    failures = (OSError,)
    pydot_error = getattr(pydot, "PydotException", None)
    if isinstance(pydot_error, type):
        failures += (pydot_error,)
    try:
        pydot.Dot.create(pydot.Dot())
    except failures:
        return False
    return True


def _unavailable(message: str):
    """Keras' handling of a missing dependency: an ImportError, except inside IPython, where a
    missing renderer must not break a notebook: the message is printed and nothing drawn."""
    if _NOTEBOOK_MODULE in sys.modules:
        print_msg(message)
        return None
    raise ImportError(message)


def _check_kwargs(kwargs: dict) -> None:
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")


def _require_built(model) -> None:
    if not model.built:
        raise ValueError(_UNBUILT)


# -- node labels ------------------------------------------------------------------------------


def _is_model_graph(layer) -> bool:
    """Functional and Sequential models: the ones `expand_nested` opens."""
    return isinstance(layer, (Functional, Sequential))


def _class_name(layer) -> str:
    """The class Keras 3 names the step: keras.ops calls and Python operators on KerasTensors
    are Keras Operations (`Add`, `GetItem`, `Concatenate`, ...), layers in ndflow."""
    if isinstance(layer, TensorOperator):
        function = "get_item" if layer.op == "getitem" else layer.op
        return _KERAS_OPS[function][1]
    if isinstance(layer, KerasOpLayer) and layer.function in _KERAS_OPS:
        return _KERAS_OPS[layer.function][1]
    return type(layer).__name__


def _activation_name(activation) -> str:
    for attribute in ("name", "__name__"):
        if hasattr(activation, attribute):
            return getattr(activation, attribute)
    return str(activation)


def _one_or_list(values: list):
    return values[0] if len(values) == 1 else values


def _first_call_io(layer):
    """The inputs and outputs Keras reads for a layer: its first call's tensors (one, or a
    list), a Functional model's constructor structures."""
    if isinstance(layer, Sequential):
        # Keras' Sequential has no `input`/`output` of its own: a layer's, the first call's
        if not layer._inbound_nodes:
            raise AttributeError(f"The layer {layer.name} has never been called.")
        node = layer._inbound_nodes[0]
        return _one_or_list(node.input_tensors), _one_or_list(node.output_tensors)
    return layer.input, layer.output


def _map(fn, structure):
    """`fn` over the tensors of a structure of lists, tuples and dicts (order kept)."""
    if isinstance(structure, dict):
        return {key: _map(fn, value) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map(fn, value) for value in structure)
    return fn(structure)


def _shape_text(shape) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, dict):
        text = ", ".join(f"{key}: {value}" for key, value in shape.items())
    else:
        text = str(shape)
    return text.replace("{", "").replace("}", "")


def _dtype_name(tensor):
    dtype = tensor.dtype
    return getattr(dtype, "name", dtype)


def _white_cell(text: str) -> str:
    return f'<td bgcolor="white"><font point-size="14">{text}</font></td>'


def _colored_cell(color: str, text: str) -> str:
    return f'<td bgcolor="{color}"><font point-size="14" color="white"><b>{text}</b></font></td>'


def _label(layer, show_layer_names, show_layer_activations, show_dtype, show_shapes,
           show_trainable) -> str:
    """The node's HTML-like label: a black title row, an activation row, then one row of
    cells (shapes, dtype, trainability); the wide rows span the cell row's planned width."""
    class_name = _class_name(layer)
    span = max(1, int(show_dtype) + int(show_trainable) + (2 if show_shapes else 0))
    title = f"<b>{layer.name}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"
    rows = [f'<tr><td colspan="{span}" bgcolor="black">'
            f'<font point-size="16" color="white">{title}</font></td></tr>']
    activation = getattr(layer, "activation", None) if show_layer_activations else None
    if activation is not None:
        rows.append(f'<tr><td bgcolor="white" colspan="{span}"><font point-size="14">'
                    f"Activation: <b>{_activation_name(activation)}</b></font></td></tr>")
    cells = []
    if show_shapes:
        try:
            inputs, outputs = _first_call_io(layer)
            in_shape = _map(lambda t: t.shape, inputs)
            out_shape = _map(lambda t: t.shape, outputs)
        except (ValueError, AttributeError):
            in_shape = out_shape = None
        if class_name != "InputLayer":
            cells.append(_white_cell(f"Input shape: <b>{_shape_text(in_shape)}</b>"))
        cells.append(_white_cell(f"Output shape: <b>{_shape_text(out_shape)}</b>"))
    if show_dtype:
        try:
            dtype = _map(_dtype_name, _first_call_io(layer)[1])
        except (ValueError, AttributeError):
            dtype = None
        cells.append(_white_cell(f"Output dtype: <b>{dtype or '?'}</b>"))
    if show_trainable and hasattr(layer, "trainable") and layer.weights:
        cells.append(_colored_cell("forestgreen", "Trainable") if layer.trainable
                     else _colored_cell("firebrick", "Non-trainable"))
    if cells:
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return ('<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
            + "".join(rows) + "</table>>")


def _add_layer_node(pydot, graph, layer, options: dict) -> None:
    node = pydot.Node(str(id(layer)), label=_label(layer, **options))
    for key, value in (("fontname", "Helvetica"), ("border", "0"), ("margin", "0")):
        node.set(key, value)
    graph.add_node(node)


def _add_edge(pydot, graph, source, destination) -> None:
    """One edge per (source, destination) pair in a graph, however many tensors they share."""
    ends = str(id(source)), str(id(destination))
    if graph.get_edge(*ends):
        return
    edge = pydot.Edge(*ends)
    edge.set("penwidth", "2")
    graph.add_edge(edge)


# -- edges ------------------------------------------------------------------------------------


def _producer_inside(model, output_index: int):
    """The innermost layer that makes `model`'s output `output_index` (nested models have no
    box of their own once expanded)."""
    while _is_model_graph(model):
        model, _, output_index = model.outputs[output_index]._keras_history
    return model


def _consumer_inside(model, input_index: int):
    """The innermost layer that receives `model`'s input `input_index`: a Functional model's
    InputLayer, a Sequential model's first layer (itself perhaps a model)."""
    while _is_model_graph(model):
        if isinstance(model, Functional):
            model = model.inputs[input_index]._keras_history.operation
        else:
            model = model.layers[0]
    return model


def _edges(model, steps: list, expand_nested: bool):
    """(source layer, destination layer) for each tensor passed between the model's steps, in
    Keras' order (by destination step, call, argument)."""
    if isinstance(model, Sequential):
        if not expand_nested:
            yield from zip(steps, steps[1:])
            return
        steps = steps[1:]   # the first layer's input comes from outside (the InputLayer)
    calls = {id(node) for node in model._nodes} if isinstance(model, Functional) else None
    for layer in steps:
        for node in layer._inbound_nodes:
            if calls is not None and id(node) not in calls:
                continue   # a call of a shared layer that belongs to another model
            for position, tensor in enumerate(node.input_tensors):
                history = tensor._keras_history
                if history is None or history.operation is None:
                    continue
                if expand_nested:
                    yield (_producer_inside(history.operation, history.tensor_index),
                           _consumer_inside(layer, position))
                else:
                    yield history.operation, layer


# -- the public functions ---------------------------------------------------------------------


@keras_export("keras.utils.model_to_dot")
def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=200, subgraph=False, show_layer_activations=False,
                 show_trainable=False, splines="ortho", **kwargs):
    _require_built(model)
    pydot = _load_pydot()
    if pydot is None:
        raise ImportError(_NO_PYDOT_DOT)
    if subgraph:
        graph = pydot.Cluster(style="dashed", graph_name=model.name)
        graph.set("label", model.name)
        graph.set("labeljust", "l")
    else:
        graph = pydot.Dot()
        for key, value in (("rankdir", rankdir), ("concentrate", True), ("dpi", dpi),
                           ("splines", splines)):
            graph.set(key, value)
        graph.set_node_defaults(shape="record")
    _check_kwargs(kwargs)
    options = {"show_layer_names": show_layer_names,
               "show_layer_activations": show_layer_activations, "show_dtype": show_dtype,
               "show_shapes": show_shapes, "show_trainable": show_trainable}
    if isinstance(model, Sequential):
        steps = model.layers
    elif isinstance(model, Functional):
        steps = model._functional_layers   # Keras' operations, InputLayers included
    else:
        _add_layer_node(pydot, graph, model, options)
        return graph
    for step in steps:
        if expand_nested and _is_model_graph(step):
            graph.add_subgraph(model_to_dot(
                step, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested,
                subgraph=True, show_layer_activations=show_layer_activations,
                show_trainable=show_trainable))
        else:
            _add_layer_node(pydot, graph, step, options)
    for source, destination in _edges(model, steps, expand_nested):
        _add_edge(pydot, graph, source, destination)
    return graph


@keras_export("keras.utils.plot_model")
def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=False, rankdir="TB", expand_nested=False, dpi=200,
               show_layer_activations=False, show_trainable=False, splines="ortho", **kwargs):
    _require_built(model)
    pydot = _load_pydot()
    if pydot is None:
        return _unavailable(_NO_PYDOT_PLOT)
    if not _graphviz_runs(pydot):
        return _unavailable(_NO_GRAPHVIZ)
    _check_kwargs(kwargs)
    graph = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype,
                         show_layer_names=show_layer_names, rankdir=rankdir,
                         expand_nested=expand_nested, dpi=dpi,
                         show_layer_activations=show_layer_activations,
                         show_trainable=show_trainable, splines=splines)
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    graph.write(to_file, format=extension)
    if extension == "pdf":
        return None
    try:
        from IPython import display
        return display.Image(filename=to_file)
    except ImportError:
        return None


attach(globals(), utils_model_visualization_docs.DOCS)
